/* SPDX-License-Identifier: MIT */
/* The Chrome exporter's writing state, shared by export_chrome.c, the per-capability emitters
 * beside it (export_chrome_cuda.c, export_chrome_gpu.c) and the Kineto dialect
 * (export_kineto.c). */
#ifndef GPUSPY_CHROME_EVENTS_H
#define GPUSPY_CHROME_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "output/model/trace_model.h"

struct chrome_cuda;
struct chrome_gpu;
struct chrome_python;

struct chrome_ctx {
	FILE *out;
	uint64_t start_ts;
	bool first;
	bool kineto; /* Kineto's dialect: its names, categories and fields on every event */
	const struct trace_model *names; /* pass 1: names, kernel names, the start time */
	struct chrome_cuda *cuda;	 /* pass-2 state of export_chrome_cuda.c */
	struct chrome_gpu *gpu;		 /* pass-2 state of export_chrome_gpu.c */
	struct chrome_python *python;	 /* pass-2 state of export_chrome_python.c */
	size_t python_depth; /* frames kept in an event's python_stack (leafmost); 0: none */
};

/* Starts an event: the separator before every event but the first. */
void chrome_begin_event(struct chrome_ctx *c);
/* `"key": µs` relative to nothing: ns printed as µs with ns precision. */
void chrome_print_us(FILE *out, const char *key, uint64_t ns);
/* ns since the recording start. */
uint64_t chrome_rel(const struct chrome_ctx *c, uint64_t ts);

/* Writes a GS_REC_CUDA_CALL record's span (and memory counter); 0, or -1 out of memory. */
int chrome_cuda_call(struct chrome_ctx *c, const struct gs_cuda_call *call);
void chrome_cuda_free(struct chrome_ctx *c);

/* The events of a trace (`path`, read again): its records streamed, then the track names.
 * 0, or -1 with a message in err. Shared by the Chrome and Kineto exporters. */
int chrome_write_events(struct chrome_ctx *c, const char *path, char *err, size_t errlen);

/* GPU records (export_chrome_gpu.c): kernels, copies and memsets on a track per device and
 * stream with a flow from the launching call, NVTX ranges on their threads; 0, or -1 out of
 * memory. */
int chrome_gpu_record(struct chrome_ctx *c, const struct gs_hdr *h);
/* The args a CUDA call's span gets from the CUPTI API record joined to it (correlation). */
void chrome_gpu_call_args(struct chrome_ctx *c, const struct gs_cuda_call *call);
/* The GPU tracks' process and thread names. */
void chrome_gpu_names(struct chrome_ctx *c);
void chrome_gpu_free(struct chrome_ctx *c);
/* Python (export_chrome_python.c): `, "python_stack": [...]` in the args of an event of
 * thread (pid, tid) at ts, when a captured stack or a sample covers it; 0, or -1 out of memory. */
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

/* PyTorch operators (export_chrome_ops.c), from the model: cpu_op slices on their threads;
 * 0, or -1 out of memory. */
int chrome_ops(struct chrome_ctx *c);
/* Kineto's dialect: `, "External id": N` of the innermost operator thread (pid, tid) was in at
 * ts, linking a CUDA API span to its operator; nothing otherwise. */
void chrome_op_external_id(struct chrome_ctx *c, uint32_t pid, uint32_t tid, uint64_t ts);

/* A process or thread name (ph "M"). */
void chrome_metadata(struct chrome_ctx *c, const char *what, uint64_t pid, uint64_t tid,
		     const char *name);

#endif /* GPUSPY_CHROME_EVENTS_H */
