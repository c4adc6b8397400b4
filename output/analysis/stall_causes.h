/* SPDX-License-Identifier: MIT */
/*
 * A wait followed to its cause in other threads: while a loop thread waited for its DataLoader,
 * what its worker processes (the process's children) did; while it waited for a lock, what the
 * process's other threads did (the holder runs or sleeps meanwhile); while it was runnable but
 * not running, which other threads were runnable too. The trace is read again for the spans of
 * those threads that overlap the waits (step_time.h keeps the waits).
 */
#ifndef GPUSPY_STALL_CAUSES_H
#define GPUSPY_STALL_CAUSES_H

#include <stddef.h>
#include <stdint.h>
#include "output/analysis/step_time.h"

/* The cause of one kind of wait in one process, in words ("" when nothing was found). */
struct stall_cause {
	uint32_t pid, kind;
	char *text; /* "workers 12, 13: read on /data/shard-07 (+19 other files) in read_sample
		     * (ds.py:45), 92% of the wait" */
};

struct stall_causes {
	struct stall_cause *v;
	size_t n;
};

/* 0, or -1 (out of memory, or the trace became unreadable). */
int stall_causes_find(const struct trace_model *m, const struct step_times *st,
		      struct stall_causes *out);
/* The cause of `kind` waits in `pid`, or NULL. */
const char *stall_causes_get(const struct stall_causes *c, uint32_t pid, uint32_t kind);
void stall_causes_free(struct stall_causes *c);

#endif /* GPUSPY_STALL_CAUSES_H */
