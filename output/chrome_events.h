/* SPDX-License-Identifier: MIT */
/* The Chrome exporter's writing state, shared by export_chrome.c and the per-capability
 * emitters beside it (export_chrome_cuda.c). */
#ifndef GPUSPY_CHROME_EVENTS_H
#define GPUSPY_CHROME_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "trace_model.h"

struct chrome_cuda;

struct chrome_ctx {
	FILE *out;
	uint64_t start_ts;
	bool first;
	const struct trace_model *names; /* pass 1: names, kernel names, the start time */
	struct chrome_cuda *cuda;	 /* pass-2 state of export_chrome_cuda.c */
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

#endif /* GPUSPY_CHROME_EVENTS_H */
