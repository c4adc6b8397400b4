// SPDX-License-Identifier: MIT
/*
 * What the GPU model computes once every record is read: the GPU work joined to its API
 * record by correlation id, the API records to their uprobe spans (gpu_join.c), the launching
 * thread of each GPU operation, and the statistics the summaries print.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/model/gpu/gpu_finish.h"
#include "output/model/gpu/gpu_join.h"
#include "output/model/gpu/gpu_model.h"
#include "output/model/gpu/gpu_strings.h"
#include "output/trace/cuda_api.h"

/* Insertion sort: stable (two statuses in one batch may share a time stamp, and their order
 * is what the bridge meant), and a process has a handful of them. */
static void sort_statuses(struct gpu_proc *p)
{
	for (size_t i = 1; i < p->nstatus; i++) {
		struct gpu_status s = p->status[i];
		size_t j = i;

		for (; j > 0 && p->status[j - 1].ts > s.ts; j--)
			p->status[j] = p->status[j - 1];
		p->status[j] = s;
	}
}

/* Synchronization records name a context but no device: the other records of that context
 * tell which device it belongs to. */
static int map_contexts(struct gpu_model *g)
{
	for (size_t i = 0; i < g->nops; i++) {
		const struct gpu_op *op = &g->ops[i];

		if (op->kind != GPU_OP_SYNC &&
		    key_index_put(&g->ix_contexts, op->pid, op->context, op->device))
			return -1;
	}
	for (size_t i = 0; i < g->nops; i++)
		if (g->ops[i].kind == GPU_OP_SYNC)
			g->ops[i].device =
			    gpu_model_context_device(g, g->ops[i].pid, g->ops[i].context);
	return 0;
}

int gpu_api_cmp_correlation(const void *a, const void *b, void *model)
{
	const struct gpu_model *g = model;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct gpu_api *x = &g->apis[i], *y = &g->apis[j];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->correlation != y->correlation)
		return x->correlation < y->correlation ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return (i > j) - (i < j);
}

/* The API record a GPU record of (pid, correlation) joins: the first of that key in `order`. */
static bool find_api(const struct gpu_model *g, const uint32_t *order, size_t n, uint32_t pid,
		     uint32_t correlation, uint32_t *api)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct gpu_api *a = &g->apis[order[mid]];

		if (a->pid < pid || (a->pid == pid && a->correlation < correlation))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || g->apis[order[lo]].pid != pid ||
	    g->apis[order[lo]].correlation != correlation)
		return false;
	*api = order[lo];
	return true;
}

/* Every GPU record with the correlation id of an API record of its process joins it; the
 * kernels of a graph launch share the launch's id, so they all join it. CUPTI gives a runtime
 * call and the driver calls it makes the same id (so does the simulator): the GPU work joins
 * the outermost of them, the longest. */
static int join_ops(struct gpu_model *g)
{
	uint32_t *order = malloc((g->napis + 1) * sizeof(*order)), api;
	size_t n = 0;

	if (!order)
		return -1;
	for (size_t i = 0; i < g->napis; i++)
		if (g->apis[i].correlation)
			order[n++] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), gpu_api_cmp_correlation, g);
	for (size_t i = 0; i < g->nops; i++) {
		struct gpu_op *op = &g->ops[i];

		g->counts[op->kind]++;
		if (!op->correlation || !find_api(g, order, n, op->pid, op->correlation, &api))
			continue;
		op->api = api;
		op->corr_seq = g->apis[api].ops++;
	}
	free(order);
	return 0;
}

/* Whether each API record is of a function gpuspy probes, decided once per name. */
static int mark_probed(struct gpu_model *g)
{
	signed char *probed = malloc(g->names.n + 1);
	char fn[128];

	if (!probed)
		return -1;
	memset(probed, -1, g->names.n + 1);
	for (size_t i = 0; i < g->napis; i++) {
		struct gpu_api *a = &g->apis[i];

		if (probed[a->name] < 0) {
			gpu_api_function(string_pool_get(&g->names, a->name), fn, sizeof(fn));
			probed[a->name] = cuda_probe_find(fn) >= 0;
		}
		a->probed = probed[a->name];
	}
	free(probed);
	return 0;
}

/* The launching thread: the uprobe span's; else CUPTI's thread id when the trace knows a
 * thread of that process by that id (then it is the OS id); else unknown (0). */
static void set_launch_tids(struct gpu_model *g, const struct key_index *threads)
{
	for (size_t i = 0; i < g->nops; i++) {
		struct gpu_op *op = &g->ops[i];
		const struct gpu_api *a;
		size_t t;

		if (op->api == GPU_NONE)
			continue;
		a = &g->apis[op->api];
		if (a->tier)
			op->launch_tid = a->call_tid;
		else if (key_index_find(threads, a->pid, a->tid, &t))
			op->launch_tid = a->tid;
	}
}

static int mem_row(const struct gpu_op *op)
{
	if (op->kind == GPU_OP_MEMSET)
		return GPU_MEM_MEMSET_ROW;
	return op->subkind <= GS_GPU_COPY_PTOP ? (int)op->subkind : GS_GPU_COPY_UNKNOWN;
}

static int add_op_stats(struct gpu_model *g, const struct gpu_op *op)
{
	struct gpu_proc *p;
	size_t i;

	if (op->kind == GPU_OP_SYNC)
		return 0;
	if (key_index_find(&g->ix_procs, op->pid, 0, &i)) {
		p = &g->procs[i];
		p->ops++;
	}
	if (op->kind == GPU_OP_KERNEL)
		return exact_stats_add(&g->kernel_durs[op->name], op->dur);
	if (exact_stats_add(&g->mem_durs[mem_row(op)], op->dur))
		return -1;
	return exact_stats_add(&g->mem_bytes[mem_row(op)], op->bytes);
}

static int build_stats(struct gpu_model *g)
{
	g->kernel_durs = calloc(g->names.n + 1, sizeof(*g->kernel_durs));
	if (!g->kernel_durs)
		return -1;
	for (size_t i = 0; i < g->nops; i++)
		if (add_op_stats(g, &g->ops[i]))
			return -1;
	for (size_t i = 0; i < g->names.n; i++) {
		exact_stats_sort(&g->kernel_durs[i]);
		if (g->kernel_durs[i].n && string_pool_demangle(&g->names, (uint32_t)i))
			return -1;
	}
	for (size_t i = 0; i < GPU_MEM_ROWS; i++) {
		exact_stats_sort(&g->mem_durs[i]);
		exact_stats_sort(&g->mem_bytes[i]);
	}
	for (size_t i = 0; i < g->nnvtx; i++)
		exact_stats_sort(&g->nvtx[i].durs);
	return 0;
}

int gpu_model_finish(struct gpu_model *g, const char *path, const struct key_index *threads,
		     char *err, size_t errlen)
{
	for (size_t i = 0; i < g->nprocs; i++)
		sort_statuses(&g->procs[i]);
	if (join_ops(g) || map_contexts(g) || mark_probed(g))
		goto oom;
	if (gpu_join_calls(g, path, err, errlen))
		return -1;
	set_launch_tids(g, threads);
	if (build_stats(g))
		goto oom;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int cmp_unmatched(const void *a, const void *b)
{
	const struct gpu_unmatched *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->ref > y->ref) - (x->ref < y->ref);
}

static struct gpu_unmatched unmatched_entry(uint32_t kind, uint32_t pid, uint32_t tid,
					    uint32_t correlation, uint64_t ts, uint32_t ref)
{
	return (struct gpu_unmatched){
	    .kind = kind, .pid = pid, .tid = tid, .correlation = correlation, .ts = ts, .ref = ref};
}

int gpu_model_unmatched(const struct gpu_model *g, struct gpu_unmatched **out, size_t *n)
{
	size_t total = g->unmatched_counts[GPU_UNMATCHED_OP] +
		       g->unmatched_counts[GPU_UNMATCHED_API] + g->nmissed;
	struct gpu_unmatched *v = malloc((total + 1) * sizeof(*v));
	size_t k = 0;

	if (!v)
		return -1;
	for (size_t i = 0; i < g->nops && k < total; i++) {
		const struct gpu_op *op = &g->ops[i];

		if (op->api == GPU_NONE)
			v[k++] = unmatched_entry(GPU_UNMATCHED_OP, op->pid, 0, op->correlation,
						 op->ts, (uint32_t)i);
	}
	for (size_t i = 0; i < g->napis && k < total; i++) {
		const struct gpu_api *a = &g->apis[i];

		if (a->probed && !a->tier)
			v[k++] = unmatched_entry(GPU_UNMATCHED_API, a->pid, a->tid, a->correlation,
						 a->ts, (uint32_t)i);
	}
	for (size_t i = 0; i < g->nmissed && k < total; i++) {
		const struct gpu_missed_launch *l = &g->missed[i];
		const struct gpu_api *a = gpu_model_call_api(g, l->pid, l->tid, l->ts);

		v[k++] = unmatched_entry(GPU_UNMATCHED_LAUNCH, l->pid, l->tid,
					 a ? a->correlation : 0, l->ts, l->probe);
	}
	qsort(v, k, sizeof(*v), cmp_unmatched);
	*out = v;
	*n = k;
	return 0;
}
