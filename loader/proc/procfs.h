/* SPDX-License-Identifier: MIT */
/* What /proc says about processes that already exist when a recording starts. */
#ifndef GPUSPY_PROCFS_H
#define GPUSPY_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef int (*procfs_thread_fn)(void *ctx, pid_t pid, pid_t tid, const char *comm);
typedef int (*procfs_pid_fn)(void *ctx, pid_t pid);

/* Calls fn for every thread of `pid` with its name; a nonzero return stops and is returned. */
int procfs_for_each_thread(pid_t pid, procfs_thread_fn fn, void *ctx);
/* Calls fn for every process on the host. */
int procfs_for_each_process(procfs_pid_fn fn, void *ctx);
/* Calls fn for every live descendant of `pid` (children, grandchildren, ...). */
int procfs_for_each_descendant(pid_t pid, procfs_pid_fn fn, void *ctx);

/* A field of /proc/<proc_dir>/status ("self" or a pid) as text, leading blanks and the newline
 * removed ("T (stopped)" for "State"): false when missing. */
bool procfs_status_text(const char *proc_dir, const char *key, char *buf, size_t len);
/* A numeric field of /proc/<proc_dir>/status ("self" or a pid), parsed in `base`; 0 when
 * missing. */
unsigned long long procfs_status_field(const char *proc_dir, const char *key, int base);
/* The process (tgid) a pid belongs to: itself for a process, its leader for a thread id.
 * 0 when it does not exist. */
pid_t procfs_tgid_of(pid_t pid);
/* Numeric field `field` (1-based, as in proc(5); 3 or later) of /proc/PID/stat: 0 or -errno
 * (-ENOENT: no such process). Field 4 is the ppid, 22 the start time in clock ticks since
 * boot, which tells a process from a later one the kernel gave the same pid. */
int procfs_stat_field(pid_t pid, int field, unsigned long long *value);
/* `n` numeric fields from `field` on, from one read of the file. */
int procfs_stat_fields(pid_t pid, int field, size_t n, unsigned long long *values);
/* The syscall thread `tid` of `pid` is blocked in (/proc/PID/task/TID/syscall): 0 and its
 * number, or -1 when it runs or is blocked outside a syscall; -errno when unreadable. */
int procfs_thread_syscall(pid_t pid, pid_t tid, long *nr);
/* The value of `name` in the process's initial environment (/proc/PID/environ), "" if unset
 * or unreadable. */
void procfs_environ_value(pid_t pid, const char *name, char *out, size_t len);

#endif /* GPUSPY_PROCFS_H */
