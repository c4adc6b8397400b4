/* SPDX-License-Identifier: MIT */
/*
 * Statistics over values that are all kept: GPU kernel and copy durations and sizes, NVTX
 * ranges. Unlike the syscall histograms (BPF cannot keep every duration), these arrive one
 * record each, so the median is exact: the values are sorted once the model is loaded.
 */
#ifndef GPUSPY_EXACT_STATS_H
#define GPUSPY_EXACT_STATS_H

#include <stddef.h>
#include <stdint.h>

struct exact_stats {
	uint64_t *v; /* sorted after exact_stats_sort() */
	size_t n, cap;
	uint64_t total;
};

/* 0, or -1 when out of memory. */
int exact_stats_add(struct exact_stats *s, uint64_t value);
void exact_stats_sort(struct exact_stats *s);
void exact_stats_free(struct exact_stats *s);

/* On sorted arrays: the exact median (mean of the two middle values for an even count) and
 * the sample standard deviation (n - 1), as nsys prints them; 0 for too few values. */
double sorted_median(const uint64_t *sorted, size_t n);
/* The nearest-rank percentile p (0..100) of a sorted array; 0 for none. */
uint64_t sorted_percentile(const uint64_t *sorted, size_t n, unsigned p);
/* Sorts v[0..n) ascending (n may be 0 and v NULL). */
void sort_u64(uint64_t *v, size_t n);
double sample_stddev(const uint64_t *v, size_t n, uint64_t total);

#endif /* GPUSPY_EXACT_STATS_H */
