/* SPDX-License-Identifier: MIT */
/*
 * Duration statistics merged from the BPF maps' exact sums and log-linear histograms:
 * count/total/min/max/stddev are exact; the median is the midpoint of the histogram bucket
 * that holds it (within ±12.5% with 4 buckets per power of two), clamped to [min, max].
 *
 * Two forms. struct key_stats is what the trace model keeps per (process, thread, syscall)
 * key: the exact sums and only the nonzero buckets, which live in one hist_pool shared by all
 * keys (a key fills a handful of the GS_HIST_BUCKETS): 56 bytes plus 8 per nonzero bucket,
 * its run's room rounded up to a power of two, instead of 1.1 KB. struct duration_stats is a
 * report row's: every bucket, for one key or a merge of many, built when the row is.
 */
#ifndef GPUSPY_HISTOGRAM_H
#define GPUSPY_HISTOGRAM_H

#include <stdint.h>
#include "output/trace/trace_format.h"

struct duration_stats {
	uint64_t count;
	uint64_t total_ns;
	uint64_t min_ns; /* UINT64_MAX while count is 0 */
	uint64_t max_ns;
	uint64_t sumsq_lo, sumsq_hi; /* the exact sum of squared durations, 128 bits */
	uint64_t hist[GS_HIST_BUCKETS];
};

/* Nonzero histogram buckets of many keys: each key's a run of entries (bucket << 56 | count),
 * sorted by bucket, with room for `cap` of them; released runs are reused. */
#define HIST_POOL_CLASSES 9 /* run capacities 1, 2, 4, ... 128 and GS_HIST_BUCKETS */
struct hist_pool {
	uint64_t *v;
	uint32_t n, cap;
	uint32_t free[HIST_POOL_CLASSES]; /* released runs by capacity, linked through v[run] */
};

struct key_stats {
	uint64_t count;
	uint64_t total_ns;
	uint64_t min_ns; /* UINT64_MAX while count is 0 */
	uint64_t max_ns;
	uint64_t sumsq_lo, sumsq_hi;
	uint32_t run;	   /* its buckets: v[run .. run + nbuckets) of the pool */
	uint8_t nbuckets;  /* nonzero buckets */
	uint8_t cap;	   /* the run's room; 0: no run */
	uint8_t owner_tag; /* free for the key's owner (the trace model's bookkeeping) */
};

void hist_pool_init(struct hist_pool *p);
void hist_pool_free(struct hist_pool *p);

void key_stats_init(struct key_stats *k);
/* Adds a GS_REC_SYSCALL_STATS record's calls (sums and buckets); 0, or -1 out of memory. */
int key_stats_add_record(struct hist_pool *p, struct key_stats *k,
			 const struct gs_syscall_stats *rec);
/* Adds another key's calls (both in `p`); 0, or -1 out of memory. */
int key_stats_add(struct hist_pool *p, struct key_stats *into, const struct key_stats *from);
/* Empties it and gives its buckets back to the pool. */
void key_stats_release(struct hist_pool *p, struct key_stats *k);

void duration_stats_init(struct duration_stats *d);
void duration_stats_add_record(struct duration_stats *d, const struct gs_syscall_stats *rec);
/* Adds a key's calls. */
void duration_stats_add_key(struct duration_stats *d, const struct hist_pool *p,
			    const struct key_stats *k);
double duration_stats_avg(const struct duration_stats *d);
double duration_stats_median(const struct duration_stats *d);
/* Sample standard deviation (n - 1), as nsys reports it; from the exact sums, rounded once. */
double duration_stats_stddev(const struct duration_stats *d);
/* [lo, hi) of a bucket in ns; the inverse of the BPF side's hist_bucket(). */
void histogram_bucket_bounds(unsigned bucket, uint64_t *lo, uint64_t *hi);

#endif /* GPUSPY_HISTOGRAM_H */
