/* SPDX-License-Identifier: MIT */
/* CUDA API calls on the Chrome timeline (export_chrome_cuda.c): a span per call, with its
 * args, and the per-process GPU memory counter. */
#ifndef GPUSPY_EXPORT_CHROME_CUDA_H
#define GPUSPY_EXPORT_CHROME_CUDA_H

#include "output/export/chrome_events.h"
#include "output/trace/trace_format.h"

/* Writes a GS_REC_CUDA_CALL record's span (and memory counter); 0, or -1 out of memory. */
int chrome_cuda_call(struct chrome_ctx *c, const struct gs_cuda_call *call);
void chrome_cuda_free(struct chrome_ctx *c);

#endif /* GPUSPY_EXPORT_CHROME_CUDA_H */
