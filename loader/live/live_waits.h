/* SPDX-License-Identifier: MIT */
/*
 * `gpuspy top`'s wait column: over each interval, the time of one thread per process sorted
 * into the stall kinds of output/analysis/wait_kinds.h, by wait_kind_of(), as the reports sort
 * a recording's. The thread is the main one, or, in a process that makes CUDA calls, the one
 * that made the most of them (it stays the one shown while no thread makes any).
 *
 * From the records of the interval: outermost CUDA calls, syscall spans (those at least the
 * recording's span threshold long) and off-CPU spans with their reason, each clipped to the
 * interval; at the refresh, what the thread is in at that moment (thread_now.h), since a wait
 * under way has no record yet. The rest of the interval it was on CPU. Memory is per live
 * thread of the processes listed: a few counters and a bounded list of the spans still waiting
 * for the span around them.
 */
#ifndef GPUSPY_LIVE_WAITS_H
#define GPUSPY_LIVE_WAITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/records.h"
#include "loader/session/thread_now.h"
#include "output/analysis/wait_kinds.h"

struct live_waits;

/* One process's thread over the last interval. */
struct live_wait_result {
	bool known;	  /* false: the thread is gone, or nothing could be read */
	uint32_t tid;	  /* the thread shown */
	uint64_t wall_ns; /* its part of the interval (all of it, unless it started in it) */
	uint64_t ns[STALL_NKINDS];
};

/* What a thread is in now: thread_now_read() with its session, or a test's stand-in. 0,
 * -ESRCH when the thread is gone, another -errno when unknown. */
typedef int (*live_now_fn)(void *ctx, uint32_t pid, uint32_t tid, struct thread_now *now);

struct live_waits *live_waits_new(void);
void live_waits_free(struct live_waits *w);
/* A record as the live model takes it: 0, or -ENOMEM. */
int live_waits_take(struct live_waits *w, const struct gs_hdr *rec);
/* Ends the interval at `now` for the processes `pids` (others are forgotten): each one's
 * result, then a new interval. The first call only starts one. 0, or -ENOMEM. */
int live_waits_tick(struct live_waits *w, uint64_t now, const uint32_t *pids, size_t npids,
		    live_now_fn now_fn, void *ctx);
/* A process's result for the interval that just ended; NULL when it was not in `pids`. */
const struct live_wait_result *live_waits_result(const struct live_waits *w, uint32_t pid);
/* The kind that took most of the result's time, and its share in % of wall_ns. */
enum stall_kind live_wait_dominant(const struct live_wait_result *r, double *pct);

#endif /* GPUSPY_LIVE_WAITS_H */
