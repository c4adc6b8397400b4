// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include "lib/array_grow.h"
#include "output/model/gpu/gpu_model.h"
#include "output/model/gpu_busy.h"

struct span {
	uint32_t pid, device, stream;
	uint64_t start, end;
};

void gpu_busy_window(const struct trace_model *m, uint64_t *start, uint64_t *end)
{
	const struct gpu_model *g = &m->gpu;
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < g->nops; i++) {
		if (g->ops[i].ts < lo)
			lo = g->ops[i].ts;
		if (g->ops[i].ts + g->ops[i].dur > hi)
			hi = g->ops[i].ts + g->ops[i].dur;
	}
	*start = m->start_ts ? m->start_ts : (lo == UINT64_MAX ? 0 : lo);
	/* a truncated recording has no end record: it lasted at least until its GPU work did */
	*end = m->end_ts > *start ? m->end_ts : (hi > *start ? hi : *start);
}

/* qsort_r's context: non-NULL to order by stream within a device */
static int cmp_span(const void *a, const void *b, void *by_stream)
{
	const struct span *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (by_stream && x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* The GPU work (not CUPTI's host-side sync records), clipped to the recording. */
static struct span *collect(const struct trace_model *m, size_t *n, bool by_stream)
{
	const struct gpu_model *g = &m->gpu;
	struct span *v = malloc((g->nops + 1) * sizeof(*v));
	uint64_t lo, hi;

	if (!v)
		return NULL;
	gpu_busy_window(m, &lo, &hi);
	*n = 0;
	for (size_t i = 0; i < g->nops; i++) {
		const struct gpu_op *op = &g->ops[i];
		uint64_t s = op->ts < lo ? lo : op->ts, e = op->ts + op->dur;

		if (op->kind == GPU_OP_SYNC)
			continue;
		e = e > hi ? hi : e;
		v[(*n)++] = (struct span){op->pid, op->device, op->stream, s, e < s ? s : e};
	}
	static bool yes = true;

	qsort_r(v, *n, sizeof(*v), cmp_span, by_stream ? &yes : NULL);
	return v;
}

static bool same_lane(const struct span *a, const struct span *b, bool by_stream)
{
	return a->pid == b->pid && a->device == b->device && (!by_stream || a->stream == b->stream);
}

/* Walks one lane's spans [*i, ...) in start order: adds its busy time and ops to `lane`, and
 * each gap to `gaps` when given. Leaves *i at the next lane. */
static int walk_lane(const struct span *v, size_t n, size_t *i, bool by_stream,
		     struct gpu_lane *lane, struct gpu_gap **gaps, size_t *ngaps, size_t *cap)
{
	size_t first = *i;
	uint64_t start = v[first].start, end = v[first].end;

	for (; *i < n && same_lane(&v[first], &v[*i], by_stream); (*i)++) {
		const struct span *s = &v[*i];

		lane->ops++;
		if (s->start > end) {
			struct gpu_gap *gap;

			lane->busy_ns += end - start;
			if (gaps) {
				gap = array_grow((void **)gaps, ngaps, cap, sizeof(*gap));
				if (!gap)
					return -1;
				*gap = (struct gpu_gap){s->pid, s->device, end, s->start - end};
			}
			start = s->start;
		}
		if (s->end > end)
			end = s->end;
	}
	lane->busy_ns += end - start;
	return 0;
}

static int add_lanes(struct span *v, size_t n, bool by_stream, struct gpu_lane **out, size_t *nout,
		     size_t *cap)
{
	for (size_t i = 0; i < n;) {
		struct gpu_lane *l = array_grow((void **)out, nout, cap, sizeof(*l));

		if (!l)
			return -1;
		*l = (struct gpu_lane){.pid = v[i].pid,
				       .device = v[i].device,
				       .stream = v[i].stream,
				       .all_streams = !by_stream};
		walk_lane(v, n, &i, by_stream, l, NULL, NULL, NULL);
	}
	return 0;
}

static int cmp_lane(const void *a, const void *b)
{
	const struct gpu_lane *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->all_streams != y->all_streams)
		return x->all_streams ? -1 : 1;
	return (x->stream > y->stream) - (x->stream < y->stream);
}

int gpu_busy_lanes(const struct trace_model *m, struct gpu_lane **lanes, size_t *n)
{
	size_t nspans, cap = 0;
	struct span *v;
	int ret = -1;

	*lanes = NULL;
	*n = 0;
	for (int by_stream = 0; by_stream < 2; by_stream++) {
		v = collect(m, &nspans, by_stream);
		if (!v)
			return -1;
		ret = add_lanes(v, nspans, by_stream, lanes, n, &cap);
		free(v);
		if (ret)
			return -1;
	}
	if (*n > 1)
		qsort(*lanes, *n, sizeof(**lanes), cmp_lane);
	return 0;
}

int gpu_busy_gaps(const struct trace_model *m, struct gpu_gap **gaps, size_t *n)
{
	size_t nspans, cap = 0;
	struct span *v = collect(m, &nspans, false);
	int ret = 0;

	*gaps = NULL;
	*n = 0;
	if (!v)
		return -1;
	for (size_t i = 0; i < nspans && !ret;) {
		struct gpu_lane lane = {0};

		ret = walk_lane(v, nspans, &i, false, &lane, gaps, n, &cap);
	}
	free(v);
	return ret;
}
