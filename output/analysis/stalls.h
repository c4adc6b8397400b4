/* SPDX-License-Identifier: MIT */
/*
 * Stalls: the time of every step (or, without steps, of each process's main thread over the
 * recording) ranked by what it went to, one finding per kind, place and cause: share of the
 * steps' wall time, the processes, where (the user's Python frame), what (the call, syscall and
 * file), the cause in other threads (stall_causes.h) and short advice.
 */
#ifndef GPUSPY_STALLS_H
#define GPUSPY_STALLS_H

#include <stddef.h>
#include <stdint.h>
#include "output/analysis/stall_causes.h"
#include "output/analysis/step_time.h"

struct stall_finding {
	uint32_t kind; /* enum stall_kind */
	uint64_t ns;
	double share_pct; /* of the steps' wall time */
	uint32_t steps;	  /* in how many steps it is (at most, over its processes) */
	char *pids;	  /* "1234" or "1234, 1235" */
	char *where, *what, *cause, *advice;
};

struct stalls {
	struct step_times st;
	struct stall_causes causes;
	struct stall_finding *v; /* largest first */
	size_t n;
	uint64_t wall_ns; /* the steps' wall time, summed */
};

/* Measures the steps of `m` (loaded with TRACE_MODEL_PY_STACKS) found `by` (steps.h) and
 * ranks what their time went to. 0, or -1 with a message in err. */
int stalls_find(const struct trace_model *m, const char *by, struct stalls *out, char *err,
		size_t errlen);
void stalls_free(struct stalls *s);

/* The stalls of `m` found `by`, kept for the next caller that asks the same of the same model:
 * the summary, stalls and steps reports of one run measure the steps once (a pass over the
 * trace, more than one on a large trace). NULL with a message in err. The result is the
 * cache's: stalls_shared_release() frees it, and must be called before `m` is freed. */
const struct stalls *stalls_shared(const struct trace_model *m, const char *by, char *err,
				   size_t errlen);
void stalls_shared_release(void);

#endif /* GPUSPY_STALLS_H */
