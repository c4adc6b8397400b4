// SPDX-License-Identifier: MIT
/* Reading chosen threads' spans from the trace (thread_spans.h). */
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "output/analysis/thread_spans.h"
#include "output/model/gpu/gpu_model.h"
#include "output/trace/cuda_api.h"
#include "output/trace/trace_reader.h"

struct reading {
	const struct trace_model *m;
	tspan_wanted wanted;
	void *ctx;
	struct tspan_set *out;
};

static int keep(struct reading *r, const struct gs_hdr *h, uint64_t dur, struct tspan span)
{
	struct tspan *t;

	/* the bridge's thread sleeps between polls: it is gpuspy's, not the program's */
	if (!r->wanted(r->ctx, h->pid, h->tid, h->ts, h->ts + dur) ||
	    !strcmp(trace_model_thread_name(r->m, h->pid, h->tid), GPU_BRIDGE_THREAD_NAME))
		return 0;
	t = array_grow((void **)&r->out->v, &r->out->n, &r->out->cap, sizeof(*t));
	if (!t)
		return -1;
	span.start = h->ts;
	span.end = h->ts + dur;
	span.pid = h->pid;
	span.tid = h->tid;
	*t = span;
	return 0;
}

static int on_cuda(struct reading *r, const struct gs_hdr *h)
{
	const struct gs_cuda_call *c = (const void *)h;
	struct cuda_call_info info;

	if ((h->flags & GS_CUDA_NESTED) || !cuda_call_decode(c, &info))
		return 0;
	return keep(
	    r, h, c->dur_ns,
	    (struct tspan){.type = TSPAN_CUDA,
			   .key = c->probe,
			   .launch = info.op == GS_CUDA_OP_LAUNCH || info.op == GS_CUDA_OP_GRAPH});
}

static int on_record(struct reading *r, const struct gs_hdr *h)
{
	switch (h->type) {
	case GS_REC_SYSCALL: {
		const struct gs_syscall *s = (const void *)h;

		return keep(r, h, s->dur_ns,
			    (struct tspan){.type = TSPAN_SYSCALL,
					   .key = s->nr,
					   .fd = (uint32_t)s->args[0],
					   .ino = s->fd_ino});
	}
	case GS_REC_OFFCPU: {
		const struct gs_offcpu *o = (const void *)h;

		return keep(r, h, o->dur_ns,
			    (struct tspan){.type = TSPAN_OFFCPU, .key = o->reason});
	}
	case GS_REC_CUDA_CALL:
		return on_cuda(r, h);
	default:
		return 0;
	}
}

static int cmp_tspan(const void *a, const void *b)
{
	const struct tspan *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

int thread_spans_read(const struct trace_model *m, tspan_wanted wanted, void *ctx,
		      struct tspan_set *out)
{
	struct reading r = {m, wanted, ctx, out};
	struct trace_reader *rd;
	const struct gs_hdr *h;
	char err[256];
	int ret;

	if (trace_reader_open(m->path, &rd, err, sizeof(err)))
		return -1;
	trace_reader_set_filter(rd, m->filter);
	while ((ret = trace_reader_next(rd, &h)) > 0)
		if (on_record(&r, h)) {
			ret = -1;
			break;
		}
	trace_reader_close(rd);
	if (ret < 0)
		return -1;
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), cmp_tspan);
	return 0;
}

#define SLICE_BUCKETS 4096

/* The counting pass: how many wanted spans start in each bucket of the recording's time. */
struct counting {
	tspan_wanted wanted;
	void *ctx;
	uint64_t t0, width, *starts;
};

static bool count_start(void *ctx, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end)
{
	struct counting *c = ctx;
	uint64_t b = start > c->t0 ? (start - c->t0) / c->width : 0;

	if (c->wanted(c->ctx, pid, tid, start, end))
		c->starts[b < SLICE_BUCKETS ? b : SLICE_BUCKETS - 1]++;
	return false;
}

static void cut_slices(const struct counting *c, size_t budget, struct tspan_slice *v, size_t *n)
{
	uint64_t held = 0;

	*n = 0;
	v[0].from = 0;
	for (size_t b = 0; b < SLICE_BUCKETS; b++) {
		if (held && held + c->starts[b] > budget) {
			v[*n].to = c->t0 + b * c->width;
			v[++*n].from = c->t0 + b * c->width;
			held = 0;
		}
		held += c->starts[b];
	}
	v[(*n)++].to = UINT64_MAX;
}

int thread_spans_slices(const struct trace_model *m, tspan_wanted wanted, void *ctx, size_t budget,
			struct tspan_slice **out, size_t *n)
{
	uint64_t all = m->spans + m->offcpu_spans + m->cuda.calls;
	uint64_t length = m->end_ts > m->start_ts ? m->end_ts - m->start_ts : 1;
	struct counting c = {wanted, ctx, m->start_ts, length / SLICE_BUCKETS + 1, NULL};
	struct tspan_set none = {0};
	int ret;

	*out = malloc((SLICE_BUCKETS + 1) * sizeof(**out));
	if (!*out)
		return -1;
	if (all <= budget) { /* nothing to count: it all fits */
		**out = (struct tspan_slice){0, UINT64_MAX};
		*n = 1;
		return 0;
	}
	c.starts = calloc(SLICE_BUCKETS, sizeof(*c.starts));
	ret = c.starts ? thread_spans_read(m, count_start, &c, &none) : -1;
	if (!ret)
		cut_slices(&c, budget, *out, n);
	free(c.starts);
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

size_t thread_spans_first(const struct tspan_set *s, uint32_t pid, uint32_t tid, uint8_t type)
{
	struct tspan key = {.pid = pid, .tid = tid, .type = type};
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_tspan(&s->v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->n && s->v[lo].pid == pid && s->v[lo].tid == tid && s->v[lo].type == type)
		return lo;
	return s->n;
}

void thread_spans_free(struct tspan_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
