/* SPDX-License-Identifier: MIT */
/*
 * Who each traced process runs as and where: its user and cgroup, written into the trace as
 * GS_REC_PROC_INFO records for the reports' and live views' --group-by user|container. Read
 * from /proc when a process is first traced and after each exec (setuid programs change the
 * user; runtimes move a process into its container's cgroup before they exec the workload).
 * A fork copies the parent's, as the kernel does, so a process too short-lived to be read
 * still has its parent's attribution; a record is written only when an exec changed it.
 * Its place in a distributed job (RANK, LOCAL_RANK, WORLD_SIZE: proc_env.h) is read and written
 * (GS_REC_PROC_ENV) at the same moments, for the Kineto export's distributedInfo.
 */
#ifndef GPUSPY_PROC_ATTR_H
#define GPUSPY_PROC_ATTR_H

#include <stdbool.h>
#include <sys/types.h>

struct gs_hdr;
struct proc_attrs;
struct trace_writer;

/* `ranks`: also the RANK, LOCAL_RANK and WORLD_SIZE of each process, read from its environment
 * at every exec; the live views show none, and skip that read (an open and ~17 reads per exec
 * on a host that starts many processes). */
struct proc_attrs *proc_attrs_new(bool ranks);
void proc_attrs_free(struct proc_attrs *pa);
/* A process traced from now on (attach, -a): its attribution read and written. 0, or -errno
 * of the write; a process that is gone is not an error. */
int proc_attrs_add(struct proc_attrs *pa, struct trace_writer *w, pid_t pid);
/* FORK (a new process inherits), EXEC (read again, written if changed), EXIT (forgotten);
 * other records are ignored. 0, or -errno of the write. */
int proc_attrs_on_record(struct proc_attrs *pa, struct trace_writer *w, const struct gs_hdr *rec);

#endif /* GPUSPY_PROC_ATTR_H */
