// SPDX-License-Identifier: MIT
/*
 * The second link of the GPU join: each CUPTI API record to the outermost uprobe span of the
 * same call, read from the file a second time (the model keeps no uprobe spans).
 *
 * CUPTI's callbacks run inside the call, so its record lies within the uprobe span, up to the
 * clock alignment error (the process's largest calibration error bound is the slack allowed).
 * CUPTI's threadId is the OS thread id on Linux as far as we know, but that is not documented:
 * an API record joins the span on the thread with its thread id that overlaps it most; when no
 * span on that thread overlaps it, the tightest span of the process that contains it, on any
 * thread. In a process where some record joined a span on its own thread, thread ids are taken
 * to be OS ids, and such time-only joins are dropped (its own span was lost, not mislabelled).
 *
 * The same pass collects the launches made while the bridge was active, to find those that got
 * no GPU record: see bridge_expects().
 */
#include <stdlib.h>
#include "lib/array_grow.h"
#include "output/model/gpu/gpu_join.h"
#include "output/model/gpu/gpu_model.h"
#include "output/trace/cuda_api.h"
#include "output/trace/trace_reader.h"

enum { TIER_NONE, TIER_PROCESS, TIER_THREAD };

struct join {
	struct gpu_model *g;
	uint32_t *order; /* apis[] indexes sorted by (pid, ts) */
	struct gpu_missed_launch *launches;
	size_t nlaunches, launches_cap;
};

static int cmp_api(const void *a, const void *b, void *model)
{
	const struct gpu_model *g = model;
	const struct gpu_api *x = &g->apis[*(const uint32_t *)a];
	const struct gpu_api *y = &g->apis[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The first position in order[] of an API record of `pid` starting at `ts` or later. */
static size_t lower_bound(const struct join *j, uint32_t pid, uint64_t ts)
{
	size_t lo = 0, hi = j->g->napis;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct gpu_api *a = &j->g->apis[j->order[mid]];

		if (a->pid < pid || (a->pid == pid && a->ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t overlap(uint64_t s1, uint64_t e1, uint64_t s2, uint64_t e2)
{
	uint64_t s = s1 > s2 ? s1 : s2, e = e1 < e2 ? e1 : e2;

	return e > s ? e - s : 0;
}

/* Whether the API record lies within the call's span, up to the clock alignment slack. */
static bool contained(const struct gpu_api *a, const struct gs_cuda_call *c, uint64_t slack)
{
	return a->ts + slack >= c->hdr.ts && a->ts + a->dur <= c->hdr.ts + c->dur_ns + slack;
}

/* How well a span fits an API record within its tier: on its thread, the overlap; by time
 * only, the tightest container. */
static uint64_t fit(const struct gpu_api *a, uint8_t tier, uint64_t call_ts, uint64_t call_dur)
{
	if (tier == TIER_THREAD)
		return overlap(a->ts, a->ts + a->dur, call_ts, call_ts + call_dur) + 1;
	return UINT64_MAX - call_dur;
}

static void consider(struct gpu_api *a, const struct gs_cuda_call *c, uint64_t slack)
{
	uint64_t ov = overlap(a->ts, a->ts + a->dur, c->hdr.ts, c->hdr.ts + c->dur_ns);
	uint8_t tier;

	/* a zero-length record overlaps nothing: it joins a span it lies in */
	if (a->tid == c->hdr.tid && (ov || contained(a, c, slack)))
		tier = TIER_THREAD;
	else if (contained(a, c, slack))
		tier = TIER_PROCESS;
	else
		return;
	/* the fit of the span found so far is computed again rather than kept: a byte per API
	 * record is a megabyte per million */
	if (tier < a->tier || (tier == a->tier && fit(a, tier, c->hdr.ts, c->dur_ns) <=
						      fit(a, tier, a->call_ts, a->call_dur)))
		return;
	a->tier = tier;
	a->call_tid = c->hdr.tid;
	a->call_ts = c->hdr.ts;
	a->call_dur = c->dur_ns;
	a->call_probe = c->probe;
}

static void match_call(struct join *j, const struct gs_cuda_call *c, uint64_t slack)
{
	uint64_t from = c->hdr.ts > slack ? c->hdr.ts - slack : 0;
	uint64_t to = c->hdr.ts + c->dur_ns + slack;

	for (size_t k = lower_bound(j, c->hdr.pid, from); k < j->g->napis; k++) {
		struct gpu_api *a = &j->g->apis[j->order[k]];

		if (a->pid != c->hdr.pid || a->ts > to)
			break;
		consider(a, c, slack);
	}
}

/* Whether a launch at `ts` should have GPU records: the bridge was active then (an ACTIVE
 * status, not yet followed by INACTIVE, CUPTI busy or an error) and its records were flushed
 * after it (a FLUSHED or INACTIVE status later on). A launch after the last flush may simply
 * not have been delivered when the recording stopped. */
static bool bridge_expects(const struct gpu_proc *p, uint64_t ts)
{
	bool active = false;
	size_t i;

	for (i = 0; i < p->nstatus && p->status[i].ts <= ts; i++) {
		uint32_t s = p->status[i].state;

		if (s == GS_BRIDGE_ACTIVE)
			active = true;
		else if (s != GS_BRIDGE_FLUSHED)
			active = false;
	}
	for (; active && i < p->nstatus; i++)
		if (p->status[i].state == GS_BRIDGE_FLUSHED ||
		    p->status[i].state == GS_BRIDGE_INACTIVE)
			return true;
	return false;
}

static int note_launch(struct join *j, const struct gs_cuda_call *c,
		       const struct cuda_call_info *info, const struct gpu_proc *p)
{
	struct gpu_missed_launch *l;

	if ((info->op != GS_CUDA_OP_LAUNCH && info->op != GS_CUDA_OP_GRAPH) ||
	    cuda_call_failed(c, info) || !p || !bridge_expects(p, c->hdr.ts))
		return 0;
	l = array_grow((void **)&j->launches, &j->nlaunches, &j->launches_cap, sizeof(*l));
	if (!l)
		return -1;
	*l = (struct gpu_missed_launch){c->hdr.pid, c->hdr.tid, c->hdr.ts, c->probe};
	return 0;
}

static int on_call(struct join *j, const struct gs_cuda_call *c)
{
	const struct gpu_proc *p = gpu_model_proc(j->g, c->hdr.pid);
	struct cuda_call_info info;

	/* nested calls are part of their outermost call, whose span the API record joins */
	if ((c->hdr.flags & GS_CUDA_NESTED) || !cuda_call_decode(c, &info))
		return 0;
	match_call(j, c, p ? p->clock_error_ns : 0);
	return note_launch(j, c, &info, p);
}

static int read_calls(struct join *j, const char *path, char *err, size_t errlen)
{
	struct trace_reader *r;
	const struct gs_hdr *h;
	int ret;

	if (trace_reader_open(path, &r, err, errlen))
		return -1;
	trace_reader_set_filter(r, j->g->filter);
	while ((ret = trace_reader_next(r, &h)) > 0) {
		if (h->type == GS_REC_CUDA_CALL && on_call(j, (const void *)h)) {
			snprintf(err, errlen, "out of memory");
			break;
		}
	}
	if (ret < 0)
		snprintf(err, errlen, "%s", trace_reader_error(r));
	trace_reader_close(r);
	return ret || err[0] ? -1 : 0;
}

/* In a process where CUPTI's thread ids proved to be OS ids, a join by time alone is wrong. */
static void drop_time_only_joins(struct join *j)
{
	struct gpu_model *g = j->g;

	for (size_t k = 0, end; k < g->napis; k = end) {
		bool thread_ids_match = false;

		for (end = k;
		     end < g->napis && g->apis[j->order[end]].pid == g->apis[j->order[k]].pid;
		     end++)
			thread_ids_match |= g->apis[j->order[end]].tier == TIER_THREAD;
		for (size_t i = k; thread_ids_match && i < end; i++)
			if (g->apis[j->order[i]].tier == TIER_PROCESS)
				g->apis[j->order[i]].tier = TIER_NONE;
	}
}

/* By (pid, call tid, call start); of the records that joined one call (a runtime call and the
 * driver calls CUPTI saw inside it), the one the GPU work joined first, then the first read. */
static int cmp_call(const void *a, const void *b, void *model)
{
	const struct gpu_model *g = model;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct gpu_api *x = &g->apis[i], *y = &g->apis[j];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->call_tid != y->call_tid)
		return x->call_tid < y->call_tid ? -1 : 1;
	if (x->call_ts != y->call_ts)
		return x->call_ts < y->call_ts ? -1 : 1;
	if (x->ops != y->ops)
		return x->ops > y->ops ? -1 : 1;
	return (i > j) - (i < j);
}

/* (pid, tid, call start) -> the API record, for exporters and the launch check: the first of
 * each key in g->calls is the one gpu_model_call_api() finds. */
static int index_calls(struct gpu_model *g)
{
	size_t n = 0;

	g->calls = malloc((g->napis + 1) * sizeof(*g->calls));
	if (!g->calls)
		return -1;
	for (size_t i = 0; i < g->napis; i++)
		if (g->apis[i].tier)
			g->calls[n++] = (uint32_t)i;
	qsort_r(g->calls, n, sizeof(*g->calls), cmp_call, g);
	g->ncalls = n;
	return 0;
}

/* The launches that got no GPU record are kept (found in this pass only); the GPU and API
 * records that joined nothing are counted here and listed on demand (gpu_model_unmatched()). */
static int keep_missed_launches(struct join *j)
{
	struct gpu_model *g = j->g;

	for (size_t i = 0; i < j->nlaunches; i++) {
		const struct gpu_missed_launch *l = &j->launches[i];
		const struct gpu_api *a = gpu_model_call_api(g, l->pid, l->tid, l->ts);
		struct gpu_missed_launch *m;

		if (a && a->ops)
			continue;
		m = array_grow((void **)&g->missed, &g->nmissed, &g->missed_cap, sizeof(*m));
		if (!m)
			return -1;
		*m = *l;
		g->unmatched_counts[GPU_UNMATCHED_LAUNCH]++;
	}
	return 0;
}

static void count_unjoined(struct gpu_model *g)
{
	for (size_t i = 0; i < g->nops; i++)
		g->unmatched_counts[GPU_UNMATCHED_OP] += g->ops[i].api == GPU_NONE;
	for (size_t i = 0; i < g->napis; i++) {
		const struct gpu_api *a = &g->apis[i];

		if (!a->probed)
			g->unprobed_apis++;
		else if (!a->tier)
			g->unmatched_counts[GPU_UNMATCHED_API]++;
	}
}

static bool any_bridge(const struct gpu_model *g)
{
	for (size_t i = 0; i < g->nprocs; i++)
		if (g->procs[i].seen & (1u << GS_BRIDGE_ACTIVE))
			return true;
	return false;
}

int gpu_join_calls(struct gpu_model *g, const char *path, char *err, size_t errlen)
{
	struct join j = {.g = g};
	int ret = -1;

	err[0] = '\0';
	if (g->napis || any_bridge(g)) {
		j.order = malloc((g->napis + 1) * sizeof(*j.order));
		if (!j.order)
			goto oom;
		for (size_t i = 0; i < g->napis; i++)
			j.order[i] = (uint32_t)i;
		qsort_r(j.order, g->napis, sizeof(*j.order), cmp_api, g);
		if (read_calls(&j, path, err, errlen))
			goto out;
		drop_time_only_joins(&j);
	}
	if (index_calls(g) || keep_missed_launches(&j))
		goto oom;
	count_unjoined(g);
	ret = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	free(j.order);
	free(j.launches);
	return ret;
}
