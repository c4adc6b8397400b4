/* SPDX-License-Identifier: MIT */
/* Notices when every process given with -p has exited, through pidfds (no polling of /proc). */
#ifndef GPUSPY_TARGET_WATCH_H
#define GPUSPY_TARGET_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct target_watch {
	int *fds;
	size_t n;
};

/* 0, or -1 with errno set. */
int target_watch_open(struct target_watch *w, const pid_t *pids, size_t n);
bool target_watch_all_exited(struct target_watch *w);
void target_watch_close(struct target_watch *w);

#endif /* GPUSPY_TARGET_WATCH_H */
