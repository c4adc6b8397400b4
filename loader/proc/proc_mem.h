/* SPDX-License-Identifier: MIT */
/* Another process's memory through /proc/PID/mem (ptrace access rules apply). */
#ifndef GPUSPY_PROC_MEM_H
#define GPUSPY_PROC_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* len bytes at addr, all or nothing: 0 or -errno (-EIO for a short transfer). */
int proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int proc_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);
/* A NUL-terminated string, cut to len - 1. 0 or -errno. */
int proc_mem_read_string(pid_t pid, uint64_t addr, char *buf, size_t len);

#endif /* GPUSPY_PROC_MEM_H */
