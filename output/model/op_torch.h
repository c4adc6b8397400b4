/* SPDX-License-Identifier: MIT */
/*
 * The in-process observer's records for the operator model (op_model.h): GS_REC_TORCH_OP
 * starts and ends paired per thread into ranges, GS_REC_TORCH_NAME ids mapped per process to
 * names, and, once the model has made calls of the ranges, each forward operator linked to
 * its backward one as torch.profiler's trace links them.
 */
#ifndef GPUSPY_OP_TORCH_H
#define GPUSPY_OP_TORCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/key_index.h"
#include "lib/string_pool.h"
#include "output/trace/trace_format.h"

#define OP_NONE UINT32_MAX

/* What the in-process observer adds to a call, 24 bytes, for its calls only. */
struct op_torch {
	int64_t seq_nr;	  /* autograd sequence number; -1 none. evaluate_function ranges get the
			   * number of the backward-scope start that follows on their thread */
	uint32_t fwd_tid; /* torch's logical id (not a tid) of the forward op's thread; 0 none */
	uint32_t shapes;  /* names id of its input shapes text ("[[16, 3], []]"); OP_NONE none */
	uint32_t bwd;	  /* a forward op: calls[] index of the backward op torch.profiler links to
			   * it (its fwdbwd flow); OP_NONE */
	uint8_t scope;	  /* at::RecordScope: 0 function, 1 backward function, 7 user scope ... */
	uint8_t async;	  /* RecordFunction::isAsync() */
	uint16_t pad;
};

/* A range started and not ended yet. */
struct op_torch_open {
	uint64_t ts;
	int64_t seq_nr;
	uint32_t name, fwd_tid, shapes; /* observer name ids */
	uint8_t scope, flags;
};

/* A thread's open ranges. */
struct op_torch_thread {
	uint32_t pid, tid;
	struct op_torch_open *open; /* the stack, innermost last */
	uint32_t depth, cap;
	uint32_t deeper; /* starts beyond OP_TORCH_MAX_DEPTH: their ends are skipped */
	uint32_t eval;	 /* open[] index of an evaluate_function start waiting for the
			  * sequence number of the backward node it runs; OP_NONE */
};

#define OP_TORCH_MAX_DEPTH 256 /* open ranges kept per thread */

struct op_torch_reader {
	struct key_index ix_names; /* (pid, observer name id) -> names id */
	struct op_torch_thread *threads;
	size_t nthreads, threads_cap;
	struct key_index ix_threads; /* (pid, tid) -> threads[] */
	uint64_t unended;   /* starts without their end (the recording stopped inside them, or
			     * the end was dropped): left out */
	uint64_t unstarted; /* ends without their start: skipped */
	uint64_t too_deep;  /* ranges nested deeper than OP_TORCH_MAX_DEPTH: dropped */
};

/* A range the last record ended. */
struct op_torch_range {
	const struct op_torch_open *start;
	uint64_t end;
	uint32_t pid, tid;
	uint32_t depth; /* ranges open around it on its thread */
};

/* A GS_REC_TORCH_NAME (its text interned in `names`) or GS_REC_TORCH_OP record: 1 when it
 * ended a range, described in `done` until the next call; 0; -1 when out of memory. */
int op_torch_apply(struct op_torch_reader *r, struct string_pool *names, const struct gs_hdr *h,
		   struct op_torch_range *done);
/* The names id of observer name `name` of process `pid`, or OP_NONE when never named. */
uint32_t op_torch_name(const struct op_torch_reader *r, uint32_t pid, uint32_t name);
/* After the last record: counts and frees the ranges still open (the recording stopped inside
 * them: dropped, as an operator still running when a recording stops has no OP_CALL). */
void op_torch_close(struct op_torch_reader *r);
void op_torch_free(struct op_torch_reader *r);

/* A call of one process with a sequence number, for op_torch_link(). */
struct op_torch_event {
	uint64_t ts;
	uint32_t depth, tid;
	uint32_t call;	    /* its calls[] index */
	struct op_torch *x; /* its op_torch */
};

/* Sets op_torch.bwd of each forward operator of a process that has a backward one; `ev` are
 * the process's calls with a sequence number, reordered here. 0, or -1 when out of memory. */
int op_torch_link(struct op_torch_event *ev, size_t n);

#endif /* GPUSPY_OP_TORCH_H */
