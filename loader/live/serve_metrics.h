/* SPDX-License-Identifier: MIT */
/*
 * `gpuspy serve`'s /metrics: the live model as Prometheus counters and gauges per process,
 * container, user and GPU device, with bounded label cardinality. At most `max_series`
 * processes (and as many containers and users) have series of their own; the rest count
 * under pid="other" (container="other", user="other"). A process keeps its slot while it
 * lives and for the grace period after; CUDA processes take precedence, displacing the least
 * busy process without CUDA. Every "other" counter only grows: it holds what the processes it
 * stands for did while they were in it, and keeps that when they leave it or exit.
 */
#ifndef GPUSPY_SERVE_METRICS_H
#define GPUSPY_SERVE_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include "loader/live/live_model.h"
#include "loader/live/prom_text.h"

struct serve_metrics {
	size_t max_series;
	struct live_counters other_departed[LIVE_NKINDS];
	struct live_counters other_sum[LIVE_NKINDS]; /* this tick's, for the "other" series */
	uint64_t http_requests, http_bad, http_rejected, http_timeouts; /* set by the caller */
	uint64_t collections; /* expositions built: one per interval while collection runs */
	double interval_s, grace_s;
	bool no_syscall_time; /* syscalls counted and not timed: no syscall_seconds_total */
	/* each build's process labels, rendered once for all their samples; kept between builds
	 * for their memory */
	struct prom_buf labels;
	size_t *label_at, label_cap; /* per process of the model: its labels' offset */
};

void serve_metrics_init(struct serve_metrics *sm, size_t max_series, double interval_s,
			double grace_s);
void serve_metrics_free(struct serve_metrics *sm);
/* A live_leave_fn: what an unslotted process or group had in "other" stays there. */
void serve_metrics_on_leave(void *sm, enum live_kind kind, bool slotted,
			    const struct live_counters *c, const struct live_counters *base);
/* After live_model_tick: slots assigned, the whole exposition written into `out` (reset
 * first). 0, or -ENOMEM. */
int serve_metrics_build(struct serve_metrics *sm, struct live_model *lm, struct prom_buf *out);

#endif /* GPUSPY_SERVE_METRICS_H */
