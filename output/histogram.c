// SPDX-License-Identifier: MIT
#include <math.h>
#include <string.h>
#include "histogram.h"

void duration_stats_init(struct duration_stats *d)
{
	memset(d, 0, sizeof(*d));
	d->min_ns = UINT64_MAX;
}

void duration_stats_add_record(struct duration_stats *d, const struct gs_syscall_stats *rec)
{
	const struct gs_duration_sums *s = &rec->sums;

	if (!s->count)
		return;
	d->count += s->count;
	d->total_ns += s->total_ns;
	if (s->min_ns < d->min_ns)
		d->min_ns = s->min_ns;
	if (s->max_ns > d->max_ns)
		d->max_ns = s->max_ns;
	/* the 128-bit sum: hi * 2^64 + lo */
	d->sumsq += (long double)s->sumsq_hi * 18446744073709551616.0L + (long double)s->sumsq_lo;
	for (__u32 i = 0; i < rec->nbuckets; i++)
		d->hist[rec->buckets[i].bucket] += rec->buckets[i].count;
}

void duration_stats_merge(struct duration_stats *into, const struct duration_stats *from)
{
	if (!from->count)
		return;
	into->count += from->count;
	into->total_ns += from->total_ns;
	if (from->min_ns < into->min_ns)
		into->min_ns = from->min_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
	into->sumsq += from->sumsq;
	for (unsigned i = 0; i < GS_HIST_BUCKETS; i++)
		into->hist[i] += from->hist[i];
}

double duration_stats_avg(const struct duration_stats *d)
{
	return d->count ? (double)d->total_ns / (double)d->count : 0.0;
}

void histogram_bucket_bounds(unsigned bucket, uint64_t *lo, uint64_t *hi)
{
	unsigned octave = bucket / GS_HIST_SUB, sub = bucket % GS_HIST_SUB;
	unsigned width_shift, msb;

	if (octave == 0) {
		width_shift = GS_HIST_MIN_SHIFT - GS_HIST_SUB_SHIFT;
		*lo = (uint64_t)sub << width_shift;
		*hi = *lo + (1ULL << width_shift);
		return;
	}
	msb = octave + GS_HIST_MIN_SHIFT - 1;
	width_shift = msb - GS_HIST_SUB_SHIFT;
	*lo = (1ULL << msb) + ((uint64_t)sub << width_shift);
	*hi = *lo + (1ULL << width_shift);
}

double duration_stats_median(const struct duration_stats *d)
{
	uint64_t seen = 0, target, lo, hi;
	double mid;

	if (!d->count)
		return 0.0;
	if (d->count == 1 || d->min_ns == d->max_ns)
		return (double)d->min_ns;
	target = (d->count + 1) / 2; /* the lower median's rank */
	for (unsigned b = 0; b < GS_HIST_BUCKETS; b++) {
		seen += d->hist[b];
		if (seen < target)
			continue;
		histogram_bucket_bounds(b, &lo, &hi);
		mid = ((double)lo + (double)hi) / 2.0;
		if (mid < (double)d->min_ns)
			mid = (double)d->min_ns;
		if (mid > (double)d->max_ns)
			mid = (double)d->max_ns;
		return mid;
	}
	return (double)d->max_ns; /* the last bucket also holds everything beyond its range */
}

double duration_stats_stddev(const struct duration_stats *d)
{
	long double n = (long double)d->count, mean, var;

	if (d->count < 2)
		return 0.0;
	mean = (long double)d->total_ns / n;
	var = (d->sumsq - n * mean * mean) / (n - 1);
	return var > 0 ? (double)sqrtl(var) : 0.0;
}
