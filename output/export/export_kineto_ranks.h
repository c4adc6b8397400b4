/* SPDX-License-Identifier: MIT */
/*
 * The ranks of a distributed job in a recording: the processes that have a RANK in their
 * environment (GS_REC_PROC_ENV, inherited by their children), grouped by it, for a Kineto trace
 * per rank as Holistic Trace Analysis's multi-rank analyses read them (a directory of traces,
 * each with its distributedInfo).
 */
#ifndef GPUSPY_EXPORT_KINETO_RANKS_H
#define GPUSPY_EXPORT_KINETO_RANKS_H

#include <stddef.h>
#include <stdint.h>
#include "output/trace/pid_filter.h"

struct kineto_rank {
	int32_t rank;
	uint32_t *pids; /* sorted ascending */
	struct pid_filter filter;
};

struct kineto_ranks {
	struct kineto_rank *ranks; /* by rank ascending */
	size_t n;
};

/* The ranks of the trace at `path`: 0 (n is 0 or 1 when the recording is not a multi-rank
 * job), or -1 with a message in err. */
int kineto_ranks_find(const char *path, struct kineto_ranks *kr, char *err, size_t errlen);
void kineto_ranks_free(struct kineto_ranks *kr);

#endif /* GPUSPY_EXPORT_KINETO_RANKS_H */
