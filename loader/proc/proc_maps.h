/* SPDX-License-Identifier: MIT */
/* The file-backed mappings of a process (/proc/PID/maps): which libraries it has loaded. */
#ifndef GPUSPY_PROC_MAPS_H
#define GPUSPY_PROC_MAPS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_mapping {
	uint64_t start, end, offset;
	uint64_t dev; /* makedev(major, minor) as the maps file shows it */
	uint64_t ino;
	bool exec;
	char path[PATH_MAX]; /* as the process sees it; open it under /proc/PID/root */
};

typedef int (*proc_maps_fn)(void *ctx, const struct proc_mapping *m);

/* Calls fn for every mapping of a file that still exists; a nonzero return stops and is
 * returned. -errno when the maps cannot be read (the process exited: -ENOENT). */
int proc_maps_for_each(pid_t pid, proc_maps_fn fn, void *ctx);
/* The same for the executable mappings only, asked of the kernel (PROCMAP_QUERY, Linux 6.11)
 * rather than read as text: a process's scan at each library it loads costs a few ioctls,
 * not the formatting and parsing of every line of its maps. */
int proc_maps_for_each_exec(pid_t pid, proc_maps_fn fn, void *ctx);
/* The mapping that holds `addr`: 0, -ENOENT, or -errno. */
int proc_maps_find(pid_t pid, uint64_t addr, struct proc_mapping *out);
/* The file name of a path, after its last '/'. */
const char *proc_maps_file_name(const char *path);
/* Whether a mapped file is the dynamic loader (ld-linux-x86-64.so.2, ld-2.31.so, ...). */
bool proc_maps_is_ldso(const char *path);
/* "/proc/PID/root<path>": the process's own file, also inside a container. */
void proc_maps_host_path(pid_t pid, const char *path, char *buf, size_t len);

#endif /* GPUSPY_PROC_MAPS_H */
