/* SPDX-License-Identifier: MIT */
/* The CUPTI bridge's records on the Chrome timeline (export_chrome_gpu.c). */
#ifndef GPUSPY_EXPORT_CHROME_GPU_H
#define GPUSPY_EXPORT_CHROME_GPU_H

#include "output/export/chrome_events.h"
#include "output/trace/trace_format.h"

/* GPU records: kernels, copies and memsets on a track per device and stream with a flow from
 * the launching call, NVTX ranges on their threads; 0, or -1 out of memory. */
int chrome_gpu_record(struct chrome_ctx *c, const struct gs_hdr *h);
/* The args a CUDA call's span gets from the CUPTI API record joined to it (correlation). */
void chrome_gpu_call_args(struct chrome_ctx *c, const struct gs_cuda_call *call);
/* Kineto's dialect: the annotation `name` of thread (pid, tid) over [start, end) as a
 * gpu_user_annotation on each stream that ran the work launched inside it (none in Chrome's);
 * 0, or -1 out of memory. */
int chrome_gpu_annotation(struct chrome_ctx *c, uint32_t pid, uint32_t tid, uint64_t start,
			  uint64_t end, const char *name);
/* The GPU tracks' process and thread names. */
void chrome_gpu_names(struct chrome_ctx *c);
void chrome_gpu_free(struct chrome_ctx *c);

#endif /* GPUSPY_EXPORT_CHROME_GPU_H */
