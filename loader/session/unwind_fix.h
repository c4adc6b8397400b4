/* SPDX-License-Identifier: MIT */
/* Putting back the return addresses that pending uretprobes replaced on a held thread's stack,
 * before it may unwind a C++ exception (bpf/ops.bpf.c: op_unwind). Used by the loader and by
 * its hold watchdog. */
#ifndef GPUSPY_UNWIND_FIX_H
#define GPUSPY_UNWIND_FIX_H

#include "bpf/records.h"

/* Writes each slot's original address where the kernel's trampoline address still is, through
 * /proc/PID/mem of the stopped process rec->hdr.pid. Returns how many were put back. */
unsigned unwind_fix(const struct gs_op_unwind *u);

#endif /* GPUSPY_UNWIND_FIX_H */
