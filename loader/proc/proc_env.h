/* SPDX-License-Identifier: MIT */
/*
 * A traced process's place in a distributed job: RANK, LOCAL_RANK and WORLD_SIZE as torchrun
 * (and most launchers) set them, read from /proc/PID/environ. Only these variables are kept;
 * the rest of the environment (which may hold secrets) is read past and never stored.
 */
#ifndef GPUSPY_PROC_ENV_H
#define GPUSPY_PROC_ENV_H

#include <stdbool.h>
#include <sys/types.h>

struct proc_rank {
	int rank, local_rank, world_size; /* -1 when unset, not a number or 2^20 - 2 and above */
};

/* Reads the process's environment. 0 with *r filled (all -1 when none is set), or -errno
 * when it cannot be read (gone, not ours to read; -ENODATA: empty, as mid-exec). */
int proc_env_read(pid_t pid, struct proc_rank *r);
/* Whether any of the variables is set. */
bool proc_rank_known(const struct proc_rank *r);

#endif /* GPUSPY_PROC_ENV_H */
