/* SPDX-License-Identifier: MIT */
/*
 * Where each step's time went: the step's wall time on the thread that runs the loop, cut into
 * stall kinds (wait_kinds.h) instant by instant from the thread's CUDA calls, syscall spans and
 * off-CPU intervals, with each piece's place (the user's Python frame, py_where.h) and cause in
 * words ("cudaMemcpy", "read on /data/shard-17"); and the GPU's side of the step.
 *
 * Two kinds are decided over a whole step, from the GPU's side: a step whose GPU was busy at
 * least GPU_BOUND_BUSY_PCT of its time is GPU-bound (its synchronisation waits were waits for
 * a busy GPU: gpu_bound), and a step with at least LAUNCH_BOUND_MIN kernel launches and its GPU
 * busy under LAUNCH_BOUND_BUSY_PCT is launch-bound (its on-CPU time went to launching many short
 * kernels: launch_bound).
 *
 * Without steps (none found), each process that ran CUDA or Python is one "step": its main
 * thread over the recording.
 */
#ifndef GPUSPY_STEP_TIME_H
#define GPUSPY_STEP_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/key_index.h"
#include "lib/string_pool.h"
#include "output/analysis/step_list.h"
#include "output/analysis/wait_kinds.h"
#include "output/model/trace_model.h"

#define GPU_BOUND_BUSY_PCT    90
#define LAUNCH_BOUND_MIN      32
#define LAUNCH_BOUND_BUSY_PCT 50

/* A step's largest pieces: kind, place and cause (strings ids) and time. */
struct step_piece {
	uint32_t kind, where, what;
	uint64_t ns;
};

#define STEP_TOP_PIECES 2

struct step_time {
	uint64_t wall_ns;
	uint64_t ns[STALL_NKINDS]; /* a partition of wall_ns */
	uint64_t gpu_busy_ns, gpu_idle_ns;
	uint32_t launches;
	bool has_gpu;				/* the process ran GPU work in the recording */
	struct step_piece top[STEP_TOP_PIECES]; /* largest first; ns 0: none */
};

/* Time of one kind at one place for one cause, in one process, over all its steps. */
struct stall_piece {
	uint32_t pid;
	uint32_t kind;	/* enum stall_kind */
	uint32_t where; /* strings ids: "train (x.py:42)" ("" unknown) */
	uint32_t what;	/* "cudaMemcpy", "read on /data/x" */
	uint64_t ns;
	uint32_t steps; /* how many steps it is in */
};

/* A wait of a loop thread, kept to follow it to its cause in other threads (stall_causes.h). */
struct wait_span {
	uint32_t pid, tid;
	uint32_t kind;
	uint64_t start, end;
};

struct step_times {
	struct step_list steps;
	bool whole_recording; /* no steps found: one window per process */
	struct step_time *t;  /* one per steps.v[] */
	struct stall_piece *pieces;
	size_t npieces, pieces_cap;
	struct key_index ix_pieces;
	struct string_pool strings;
	struct wait_span *waits; /* by start */
	size_t nwaits, waits_cap;
};

/* Finds the steps of `m` (loaded with TRACE_MODEL_PY_STACKS) `by` (steps.h) and measures them.
 * 0, or -1 with a message in err. */
int step_times_measure(const struct trace_model *m, const char *by, struct step_times *out,
		       char *err, size_t errlen);
/* The same for windows of the caller's (each origin's in time order, on its thread), which it
 * hands over: `list` is emptied, and freed with `out`. */
int step_times_measure_list(const struct trace_model *m, struct step_list *list,
			    struct step_times *out, char *err, size_t errlen);
void step_times_free(struct step_times *st);

#endif /* GPUSPY_STEP_TIME_H */
