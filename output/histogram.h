/* SPDX-License-Identifier: MIT */
/*
 * Duration statistics merged from the BPF maps' exact sums and log-linear histograms:
 * count/total/min/max/stddev are exact; the median is the midpoint of the histogram bucket
 * that holds it (within ±12.5% with 4 buckets per power of two), clamped to [min, max].
 */
#ifndef GPUSPY_HISTOGRAM_H
#define GPUSPY_HISTOGRAM_H

#include <stdint.h>
#include "trace_format.h"

struct duration_stats {
	uint64_t count;
	uint64_t total_ns;
	uint64_t min_ns;
	uint64_t max_ns;
	long double sumsq;
	uint64_t hist[GS_HIST_BUCKETS];
};

void duration_stats_init(struct duration_stats *d);
void duration_stats_add_record(struct duration_stats *d, const struct gs_syscall_stats *rec);
void duration_stats_merge(struct duration_stats *into, const struct duration_stats *from);
double duration_stats_avg(const struct duration_stats *d);
double duration_stats_median(const struct duration_stats *d);
/* Sample standard deviation (n - 1), as nsys reports it. */
double duration_stats_stddev(const struct duration_stats *d);
/* [lo, hi) of a bucket in ns; the inverse of the BPF side's hist_bucket(). */
void histogram_bucket_bounds(unsigned bucket, uint64_t *lo, uint64_t *hi);

#endif /* GPUSPY_HISTOGRAM_H */
