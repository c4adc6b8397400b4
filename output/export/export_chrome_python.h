/* SPDX-License-Identifier: MIT */
/* Python on the Chrome timeline (export_chrome_python.c): stacks in events' args, and the CPU
 * samples' flame chart. */
#ifndef GPUSPY_EXPORT_CHROME_PYTHON_H
#define GPUSPY_EXPORT_CHROME_PYTHON_H

#include <stdint.h>
#include "output/export/chrome_events.h"
#include "output/trace/trace_format.h"

/* `, "python_stack": [...]` in the args of an event of thread (pid, tid) at ts, when a
 * captured stack or a sample covers it; 0, or -1 out of memory. */
int chrome_python_stack_args(struct chrome_ctx *c, uint32_t pid, uint32_t tid, uint64_t ts);
/* The same for an off-CPU span, or an outermost CUDA call: nothing when the span around it
 * (the syscall it slept in, the operator that made the call) has the stack already. */
int chrome_python_offcpu_args(struct chrome_ctx *c, const struct gs_offcpu *o);
int chrome_python_cuda_args(struct chrome_ctx *c, const struct gs_cuda_call *call);
/* The CPU samples as a flame chart, a track per sampled thread; 0, or -1 out of memory. */
int chrome_python_samples(struct chrome_ctx *c);
/* The sample tracks' thread names. */
void chrome_python_names(struct chrome_ctx *c);
void chrome_python_free(struct chrome_ctx *c);

#endif /* GPUSPY_EXPORT_CHROME_PYTHON_H */
