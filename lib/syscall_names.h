/* SPDX-License-Identifier: MIT */
/* Syscall numbers to names, from a table generated out of the build machine's kernel headers. */
#ifndef GPUSPY_SYSCALL_NAMES_H
#define GPUSPY_SYSCALL_NAMES_H

#include <stddef.h>

extern const char *const gs_syscall_table[];
extern const unsigned gs_syscall_table_len;

/* The name of `nr`, or "syscall_<nr>" written into buf. */
const char *gs_syscall_name(unsigned nr, char *buf, size_t len);

#endif /* GPUSPY_SYSCALL_NAMES_H */
