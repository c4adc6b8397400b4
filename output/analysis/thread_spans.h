/* SPDX-License-Identifier: MIT */
/*
 * The spans of chosen threads, read from the trace file again (the model keeps none): CUDA API
 * calls (outermost only: a nested call is part of the outer one), syscall spans and off-CPU
 * intervals. The caller says which it wants, by thread and time, so memory follows the steps
 * asked about, not the trace.
 */
#ifndef GPUSPY_THREAD_SPANS_H
#define GPUSPY_THREAD_SPANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "output/model/trace_model.h"

enum tspan_type { TSPAN_CUDA, TSPAN_SYSCALL, TSPAN_OFFCPU, TSPAN_NTYPES };

struct tspan {
	uint64_t start, end;
	uint64_t ino; /* syscalls: the inode behind `fd`, 0 none */
	uint32_t pid, tid;
	uint32_t key; /* CUDA: probe index; syscall: its number; off-CPU: reason */
	uint32_t fd;  /* syscalls: args[0] */
	uint8_t type; /* enum tspan_type */
	bool launch;  /* CUDA: a kernel or graph launch */
};

struct tspan_set {
	struct tspan *v; /* by (pid, tid, type, start) once read */
	size_t n, cap;
};

/* Whether to keep a span of (pid, tid) over [start, end). */
typedef bool (*tspan_wanted)(void *ctx, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end);

/* Reads the trace of `m` again, keeping the spans `wanted` takes. 0, or -1 (out of memory,
 * or the file became unreadable). */
int thread_spans_read(const struct trace_model *m, tspan_wanted wanted, void *ctx,
		      struct tspan_set *out);

/* A part of the recording's time, [from, to). */
struct tspan_slice {
	uint64_t from, to;
};

/* Cuts time into slices, in order and together covering all of it, each holding about `budget`
 * of the spans `wanted` takes at most (a slice may hold more where that many start within
 * 1/4096 of the recording), so that a caller reading them a slice at a time holds that many:
 * one slice when the trace has no more spans than `budget` in all, else after a pass that
 * counts them. *out is malloc'd. 0, or -1 (out of memory, or the file became unreadable). */
int thread_spans_slices(const struct trace_model *m, tspan_wanted wanted, void *ctx, size_t budget,
			struct tspan_slice **out, size_t *n);

/* The first span of (pid, tid) of `type` (the set is sorted), or out->n when none. */
size_t thread_spans_first(const struct tspan_set *s, uint32_t pid, uint32_t tid, uint8_t type);

void thread_spans_free(struct tspan_set *s);

#endif /* GPUSPY_THREAD_SPANS_H */
