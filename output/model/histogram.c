// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "output/model/histogram.h"

#define ENTRY_SHIFT 56 /* an entry: bucket << 56 | count */
#define COUNT_MASK  ((1ULL << ENTRY_SHIFT) - 1)
#define NO_RUN	    UINT32_MAX

static unsigned entry_bucket(uint64_t e)
{
	return (unsigned)(e >> ENTRY_SHIFT);
}

/* 128-bit sums as two words: exact, as BPF keeps them. */
static void add128(uint64_t *lo, uint64_t *hi, uint64_t add_lo, uint64_t add_hi)
{
	*lo += add_lo;
	*hi += add_hi + (*lo < add_lo);
}

void hist_pool_init(struct hist_pool *p)
{
	memset(p, 0, sizeof(*p));
	for (unsigned i = 0; i < HIST_POOL_CLASSES; i++)
		p->free[i] = NO_RUN;
}

void hist_pool_free(struct hist_pool *p)
{
	free(p->v);
	hist_pool_init(p);
}

/* Capacity classes: 1, 2, 4, ... 128, then every bucket. */
static unsigned class_cap(unsigned cls)
{
	return cls + 1 < HIST_POOL_CLASSES ? 1u << cls : GS_HIST_BUCKETS;
}

static unsigned class_of(unsigned cap)
{
	unsigned cls = 0;

	while (class_cap(cls) < cap)
		cls++;
	return cls;
}

/* A run with room for `need` entries: a released one of that class, or new at the end. */
static int run_alloc(struct hist_pool *p, unsigned need, uint32_t *run, uint8_t *cap)
{
	unsigned cls = class_of(need), room = class_cap(cls);

	if (p->free[cls] != NO_RUN) {
		*run = p->free[cls];
		p->free[cls] = (uint32_t)p->v[*run];
		*cap = (uint8_t)room;
		return 0;
	}
	if (p->n + room > p->cap) {
		uint64_t want = p->cap ? (uint64_t)p->cap * 2 : 4096;
		uint64_t *grown;

		while (want < (uint64_t)p->n + room)
			want *= 2;
		if (want > UINT32_MAX)
			want = UINT32_MAX;
		if (want < (uint64_t)p->n + room)
			return -1;
		grown = realloc(p->v, want * sizeof(*grown));
		if (!grown)
			return -1;
		p->v = grown;
		p->cap = (uint32_t)want;
	}
	*run = p->n;
	*cap = (uint8_t)room;
	p->n += room;
	return 0;
}

static void run_release(struct hist_pool *p, uint32_t run, unsigned cap)
{
	unsigned cls = class_of(cap);

	p->v[run] = p->free[cls];
	p->free[cls] = run;
}

void key_stats_init(struct key_stats *k)
{
	memset(k, 0, sizeof(*k));
	k->min_ns = UINT64_MAX;
}

void key_stats_release(struct hist_pool *p, struct key_stats *k)
{
	uint8_t tag = k->owner_tag;

	if (k->cap)
		run_release(p, k->run, k->cap);
	key_stats_init(k);
	k->owner_tag = tag;
}

/* Adds `count` calls to bucket `b`, keeping the run sorted; 0, or -1 out of memory. */
static int add_bucket(struct hist_pool *p, struct key_stats *k, unsigned b, uint64_t count)
{
	unsigned i = 0, n = k->nbuckets;
	uint64_t *v;

	if (!count)
		return 0;
	while (i < n && entry_bucket(p->v[k->run + i]) < b)
		i++;
	if (i < n && entry_bucket(p->v[k->run + i]) == b) {
		/* 2^56 calls in one bucket of one key would take centuries */
		p->v[k->run + i] += count & COUNT_MASK;
		return 0;
	}
	if (n == k->cap) {
		uint32_t run;
		uint8_t cap;

		if (run_alloc(p, n + 1, &run, &cap))
			return -1;
		if (n)
			memcpy(p->v + run, p->v + k->run, n * sizeof(*p->v));
		if (k->cap)
			run_release(p, k->run, k->cap);
		k->run = run;
		k->cap = cap;
	}
	v = p->v + k->run;
	memmove(v + i + 1, v + i, (n - i) * sizeof(*v));
	v[i] = (uint64_t)b << ENTRY_SHIFT | (count & COUNT_MASK);
	k->nbuckets++;
	return 0;
}

static void add_sums(struct key_stats *k, uint64_t count, uint64_t total, uint64_t min,
		     uint64_t max, uint64_t sumsq_lo, uint64_t sumsq_hi)
{
	k->count += count;
	k->total_ns += total;
	if (min < k->min_ns)
		k->min_ns = min;
	if (max > k->max_ns)
		k->max_ns = max;
	add128(&k->sumsq_lo, &k->sumsq_hi, sumsq_lo, sumsq_hi);
}

int key_stats_add_record(struct hist_pool *p, struct key_stats *k,
			 const struct gs_syscall_stats *rec)
{
	const struct gs_duration_sums *s = &rec->sums;

	if (!s->count)
		return 0;
	add_sums(k, s->count, s->total_ns, s->min_ns, s->max_ns, s->sumsq_lo, s->sumsq_hi);
	for (__u32 i = 0; i < rec->nbuckets; i++)
		if (add_bucket(p, k, rec->buckets[i].bucket, rec->buckets[i].count))
			return -1;
	return 0;
}

int key_stats_add(struct hist_pool *p, struct key_stats *into, const struct key_stats *from)
{
	if (!from->count)
		return 0;
	add_sums(into, from->count, from->total_ns, from->min_ns, from->max_ns, from->sumsq_lo,
		 from->sumsq_hi);
	/* p->v may move as `into` grows: read `from`'s entries through it each time */
	for (unsigned i = 0; i < from->nbuckets; i++) {
		uint64_t e = p->v[from->run + i];

		if (add_bucket(p, into, entry_bucket(e), e & COUNT_MASK))
			return -1;
	}
	return 0;
}

void duration_stats_init(struct duration_stats *d)
{
	memset(d, 0, sizeof(*d));
	d->min_ns = UINT64_MAX;
}

static void dense_add_sums(struct duration_stats *d, uint64_t count, uint64_t total, uint64_t min,
			   uint64_t max, uint64_t sumsq_lo, uint64_t sumsq_hi)
{
	d->count += count;
	d->total_ns += total;
	if (min < d->min_ns)
		d->min_ns = min;
	if (max > d->max_ns)
		d->max_ns = max;
	add128(&d->sumsq_lo, &d->sumsq_hi, sumsq_lo, sumsq_hi);
}

void duration_stats_add_record(struct duration_stats *d, const struct gs_syscall_stats *rec)
{
	const struct gs_duration_sums *s = &rec->sums;

	if (!s->count)
		return;
	dense_add_sums(d, s->count, s->total_ns, s->min_ns, s->max_ns, s->sumsq_lo, s->sumsq_hi);
	for (__u32 i = 0; i < rec->nbuckets; i++)
		d->hist[rec->buckets[i].bucket] += rec->buckets[i].count;
}

void duration_stats_add_key(struct duration_stats *d, const struct hist_pool *p,
			    const struct key_stats *k)
{
	if (!k->count)
		return;
	dense_add_sums(d, k->count, k->total_ns, k->min_ns, k->max_ns, k->sumsq_lo, k->sumsq_hi);
	for (unsigned i = 0; i < k->nbuckets; i++) {
		uint64_t e = p->v[k->run + i];

		d->hist[entry_bucket(e)] += e & COUNT_MASK;
	}
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

/* (n - 1) var = sumsq - total^2 / n, in 128-bit integers up to the remainder of the division:
 * no cancellation between a large mean and a small spread. */
double duration_stats_stddev(const struct duration_stats *d)
{
	unsigned __int128 sumsq, sq, q;
	uint64_t r;
	long double m2;

	if (d->count < 2)
		return 0.0;
	sumsq = (unsigned __int128)d->sumsq_hi << 64 | d->sumsq_lo;
	sq = (unsigned __int128)d->total_ns * d->total_ns;
	q = sq / d->count;
	r = (uint64_t)(sq % d->count);
	if (sumsq < q)
		return 0.0; /* inconsistent sums (a corrupt record): no spread to show */
	m2 = (long double)(sumsq - q) - (long double)r / (long double)d->count;
	return m2 > 0 ? (double)sqrtl(m2 / (long double)(d->count - 1)) : 0.0;
}
