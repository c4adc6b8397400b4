// SPDX-License-Identifier: MIT
/* A process's GPU work within a step (step_gpu.h). */
#include <stdlib.h>
#include <string.h>
#include "output/analysis/step_gpu.h"

#define TOP_KERNEL_NAMES 16 /* distinct kernels weighed per window: a step runs a few */

static int cmp_busy(const void *a, const void *b)
{
	const struct busy_span *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_op(const void *a, const void *b, void *model)
{
	const struct gpu_op *ops = ((const struct trace_model *)model)->gpu.ops;
	const struct gpu_op *x = &ops[*(const uint32_t *)a], *y = &ops[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Merges overlapping spans of one process in place. */
static size_t merge(struct busy_span *v, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		struct busy_span *last = out ? &v[out - 1] : NULL;

		if (last && last->pid == v[i].pid && v[i].start <= last->end) {
			if (v[i].end > last->end)
				last->end = v[i].end;
			continue;
		}
		v[out++] = v[i];
	}
	return out;
}

int step_gpu_init(struct step_gpu *g, const struct trace_model *m)
{
	const struct gpu_model *gm = &m->gpu;

	memset(g, 0, sizeof(*g));
	g->m = m;
	g->busy = malloc((gm->nops + 1) * sizeof(*g->busy));
	g->ops = malloc((gm->nops + 1) * sizeof(*g->ops));
	if (!g->busy || !g->ops)
		return -1;
	for (size_t i = 0; i < gm->nops; i++) {
		const struct gpu_op *op = &gm->ops[i];

		if (op->kind == GPU_OP_SYNC) /* CUPTI's record of a host wait, not GPU work */
			continue;
		g->busy[g->nbusy++] = (struct busy_span){op->pid, op->ts, op->ts + op->dur};
		g->ops[g->nops++] = (uint32_t)i;
	}
	qsort(g->busy, g->nbusy, sizeof(*g->busy), cmp_busy);
	g->nbusy = merge(g->busy, g->nbusy);
	qsort_r(g->ops, g->nops, sizeof(*g->ops), cmp_op, (void *)m);
	return 0;
}

/* The first busy span of pid that ends after `from`. */
static size_t first_busy(const struct step_gpu *g, uint32_t pid, uint64_t from)
{
	size_t lo = 0, hi = g->nbusy;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct busy_span *b = &g->busy[mid];

		if (b->pid < pid || (b->pid == pid && b->end <= from))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool step_gpu_has(const struct step_gpu *g, uint32_t pid)
{
	size_t i = first_busy(g, pid, 0);

	return i < g->nbusy && g->busy[i].pid == pid;
}

uint64_t step_gpu_busy(const struct step_gpu *g, uint32_t pid, uint64_t start, uint64_t end)
{
	uint64_t ns = 0;

	for (size_t i = first_busy(g, pid, start);
	     i < g->nbusy && g->busy[i].pid == pid && g->busy[i].start < end; i++) {
		uint64_t lo = g->busy[i].start > start ? g->busy[i].start : start;
		uint64_t hi = g->busy[i].end < end ? g->busy[i].end : end;

		ns += hi > lo ? hi - lo : 0;
	}
	return ns;
}

/* The first of pid's ops (by ts) starting at or after `from`. */
static size_t first_op(const struct step_gpu *g, uint32_t pid, uint64_t from)
{
	size_t lo = 0, hi = g->nops;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct gpu_op *op = &g->m->gpu.ops[g->ops[mid]];

		if (op->pid < pid || (op->pid == pid && op->ts < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* One kernel name's time within a window, and an op of it (to name it). */
struct kernel_time {
	const struct gpu_op *op;
	uint64_t ns;
};

const char *step_gpu_top_kernel(const struct step_gpu *g, uint32_t pid, uint64_t start,
				uint64_t end, char *buf, size_t len)
{
	struct kernel_time seen[TOP_KERNEL_NAMES];
	size_t nseen = 0, best = 0;

	for (size_t i = first_op(g, pid, start); i < g->nops; i++) {
		const struct gpu_op *op = &g->m->gpu.ops[g->ops[i]];
		size_t k = 0;

		if (op->pid != pid || op->ts >= end)
			break;
		if (op->kind != GPU_OP_KERNEL)
			continue;
		while (k < nseen && seen[k].op->name != op->name)
			k++;
		if (k == nseen) {
			if (nseen == TOP_KERNEL_NAMES)
				continue;
			seen[nseen++] = (struct kernel_time){op, 0};
		}
		seen[k].ns += op->dur;
		if (seen[k].ns > seen[best].ns)
			best = k;
	}
	if (!nseen)
		return "a kernel";
	return gpu_op_name(&g->m->gpu, seen[best].op, buf, len);
}

void step_gpu_free(struct step_gpu *g)
{
	free(g->busy);
	free(g->ops);
	memset(g, 0, sizeof(*g));
}
