// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lib/exact_stats.h"

int exact_stats_add(struct exact_stats *s, uint64_t value)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		uint64_t *p = realloc(s->v, cap * sizeof(*p));

		if (!p)
			return -1;
		s->v = p;
		s->cap = cap;
	}
	s->v[s->n++] = value;
	s->total += value;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void sort_u64(uint64_t *v, size_t n)
{
	if (n > 1) /* qsort(NULL, 0, ...) is undefined */
		qsort(v, n, sizeof(*v), cmp_u64);
}

void exact_stats_sort(struct exact_stats *s)
{
	sort_u64(s->v, s->n);
}

void exact_stats_free(struct exact_stats *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

double sorted_median(const uint64_t *sorted, size_t n)
{
	size_t h = n / 2;

	if (!n)
		return 0.0;
	return n % 2 ? (double)sorted[h] : ((double)sorted[h - 1] + (double)sorted[h]) / 2;
}

uint64_t sorted_percentile(const uint64_t *sorted, size_t n, unsigned p)
{
	size_t rank = (n * p + 99) / 100;

	return n ? sorted[rank ? rank - 1 : 0] : 0;
}

/* Two passes over the values, so no cancellation between a large mean and small spread. */
double sample_stddev(const uint64_t *v, size_t n, uint64_t total)
{
	long double mean, sum = 0;

	if (n < 2)
		return 0.0;
	mean = (long double)total / n;
	for (size_t i = 0; i < n; i++) {
		long double d = v[i] - mean;

		sum += d * d;
	}
	return (double)sqrtl(sum / (n - 1));
}
