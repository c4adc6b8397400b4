/* SPDX-License-Identifier: MIT */
/*
 * The Chrome exporter's writing state and the primitives every event is written with, at the
 * bottom of the exporter: the record stream (chrome_stream.c), the per-capability emitters
 * (export_chrome_cuda.c, export_chrome_gpu.c, export_chrome_python.c, export_chrome_ops.c,
 * export_chrome_steps.c)
 * and the two dialects' drivers (export_chrome.c, export_kineto.c) all write through them.
 */
#ifndef GPUSPY_CHROME_EVENTS_H
#define GPUSPY_CHROME_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct trace_model;
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
	size_t python_depth;  /* frames kept in an event's python_stack (leafmost); 0: none */
	const char *steps_by; /* --steps-by (output/analysis/steps.h); NULL: the preferred way */
};

/* Starts an event: the separator before every event but the first. */
void chrome_begin_event(struct chrome_ctx *c);
/* `"key": µs` relative to nothing: ns printed as µs with ns precision. */
void chrome_print_us(FILE *out, const char *key, uint64_t ns);
/* `"dur": µs` of a complete event; in Kineto's dialect at least 1 ns (chrome_events.c). */
void chrome_print_dur(const struct chrome_ctx *c, uint64_t ns);
/* ns since the recording start. */
uint64_t chrome_rel(const struct chrome_ctx *c, uint64_t ts);
/* The name Kineto's dialect gives a CUDA API call whose function is `fn`: CUPTI's, and none
 * that HTA takes for a launch when the call is nested in another (chrome_events.c). fn itself,
 * fn + 2, or buf. */
const char *chrome_kineto_api_name(const char *fn, bool nested, char *buf, size_t len);
/* A process or thread name (ph "M"). */
void chrome_metadata(struct chrome_ctx *c, const char *what, uint64_t pid, uint64_t tid,
		     const char *name);

#endif /* GPUSPY_CHROME_EVENTS_H */
