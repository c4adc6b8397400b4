// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "output/model/gpu/cuda_kernels.h"
#include "output/model/gpu/cuda_model.h"

static int add_duration(struct cuda_api_stat *s, uint64_t dur)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		uint64_t *p = realloc(s->durs, cap * sizeof(*p));

		if (!p)
			return -1;
		s->durs = p;
		s->cap = cap;
	}
	s->durs[s->n++] = dur;
	s->total_ns += dur;
	return 0;
}

static int count_error(struct cuda_model *cm, const struct gs_cuda_call *c)
{
	int32_t code = (int32_t)c->ret;
	struct cuda_api_error *e;
	size_t i;

	if (key_index_find(&cm->ix_errors, c->probe, (uint32_t)code, &i)) {
		cm->errors[i].calls++;
		return 0;
	}
	e = array_grow((void **)&cm->errors, &cm->nerrors, &cm->errors_cap, sizeof(*e));
	if (!e || key_index_put(&cm->ix_errors, c->probe, (uint32_t)code, cm->nerrors - 1))
		return -1;
	e->probe = c->probe;
	e->code = code;
	e->calls = 1;
	return 0;
}

static int count_call(struct cuda_model *cm, const struct gs_cuda_call *c, bool failed)
{
	struct cuda_api_stat *s;

	if (!cm->api) {
		cm->api = calloc(gs_cuda_nprobes, sizeof(*cm->api));
		if (!cm->api)
			return -1;
	}
	s = &cm->api[c->probe];
	cm->calls++;
	if (failed) {
		s->errors++;
		if (count_error(cm, c))
			return -1;
	}
	return add_duration(s, c->dur_ns);
}

static bool same_dims(const uint32_t a[3], const uint32_t b[3])
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

static void add_shape(struct cuda_shapes *s, const uint32_t d[3], uint64_t seq)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (same_dims(s->v[i].d, d))
			return;
	if (s->n == CUDA_MAX_SHAPES) {
		s->more = true;
		return;
	}
	memcpy(s->v[s->n].d, d, sizeof(s->v[s->n].d));
	s->v[s->n++].first = seq;
}

/* The group of launches with this (pid, probe, func, inner), created at its first launch. */
static struct cuda_launch_group *get_group(struct cuda_model *cm, const struct gs_cuda_call *c,
					   const struct cuda_call_info *info, uint64_t inner)
{
	uint64_t key = (uint64_t)c->hdr.pid << 16 | c->probe;
	struct cuda_launch_group *g;
	size_t i, head = SIZE_MAX;

	if (key_index_find(&cm->ix_groups, key, info->func, &i)) {
		/* one (pid, probe, func) nearly always has one inner handle: a short chain */
		for (head = i; i != SIZE_MAX; i = cm->groups[i].next)
			if (cm->groups[i].inner == inner)
				return &cm->groups[i];
	}
	g = array_grow((void **)&cm->groups, &cm->ngroups, &cm->groups_cap, sizeof(*g));
	if (!g || key_index_put(&cm->ix_groups, key, info->func, cm->ngroups - 1))
		return NULL;
	g->pid = c->hdr.pid;
	g->probe = c->probe;
	g->graph = info->op == GS_CUDA_OP_GRAPH;
	g->func = info->func;
	g->inner = inner;
	g->next = head;
	return g;
}

static int count_launch(struct cuda_model *cm, const struct gs_cuda_call *c,
			const struct cuda_call_info *info, uint64_t inner)
{
	struct cuda_launch_group *g = get_group(cm, c, info, inner);
	uint64_t seq = cm->launch_seq++;

	if (!g)
		return -1;
	g->launches++;
	g->total_ns += c->dur_ns;
	if (g->graph) {
		cm->graph_launches++;
		return 0;
	}
	cm->launches++;
	add_shape(&g->grids, info->grid, seq);
	add_shape(&g->blocks, info->block, seq);
	return 0;
}

static void count_transfer(struct cuda_model *cm, const struct gs_cuda_call *c,
			   const struct cuda_call_info *info)
{
	struct cuda_copy_stat *s = &cm->memsets;

	if (info->op == GS_CUDA_OP_MEMCPY)
		s = &cm->copies[gpu_mem_copy_kind(&cm->mem, c->hdr.pid, info)];
	s->count++;
	s->bytes += info->bytes;
	s->total_ns += c->dur_ns;
}

/* What an outermost call that succeeded adds to the launch, copy and memory tables. */
static int count_success(struct cuda_model *cm, const struct gs_cuda_call *c,
			 const struct cuda_call_info *info, uint64_t inner)
{
	bool oom = false;

	switch (info->op) {
	case GS_CUDA_OP_LAUNCH:
	case GS_CUDA_OP_GRAPH:
		return count_launch(cm, c, info, inner);
	case GS_CUDA_OP_MEMCPY:
	case GS_CUDA_OP_MEMSET:
		count_transfer(cm, c, info);
		return 0;
	default:
		gpu_mem_apply(&cm->mem, c, info, &oom);
		return oom ? -1 : 0;
	}
}

static int on_call(struct cuda_model *cm, const struct gs_cuda_call *c)
{
	struct cuda_call_info info;
	bool failed, oom = false;
	uint64_t inner;

	/* a probe index this gpuspy does not know (a newer trace) cannot be named or decoded */
	if (!cuda_call_decode(c, &info))
		return 0;
	failed = cuda_call_failed(c, &info);
	inner = cuda_nesting_feed(&cm->nesting, c, &info, &oom);
	if (oom || (inner && cuda_kernels_on_pair(cm, c->hdr.pid, inner, info.func)))
		return -1;
	/* the runtime's launches reach the driver's CUfunction through this, at any depth */
	if (info.probe->cls == GS_CUDA_KERNEL_FUNCTION && !failed && cuda_kernels_on_alias(cm, c))
		return -1;
	if (c->hdr.flags & GS_CUDA_NESTED)
		return 0;
	if (count_call(cm, c, failed))
		return -1;
	return failed ? 0 : count_success(cm, c, &info, inner);
}

static int on_lib(struct cuda_model *cm, const struct gs_cuda_lib *l)
{
	struct cuda_lib_info *e =
	    array_grow((void **)&cm->libs, &cm->nlibs, &cm->libs_cap, sizeof(*e));

	if (!e)
		return -1;
	e->pid = l->hdr.pid;
	e->roles = l->roles;
	e->probes = l->probes;
	e->dev = l->dev;
	e->ino = l->ino;
	e->path = strdup(l->path);
	return e->path ? 0 : -1;
}

int cuda_model_apply(struct cuda_model *cm, const struct gs_hdr *h)
{
	switch (h->type) {
	case GS_REC_CUDA_CALL:
		return on_call(cm, (const void *)h);
	case GS_REC_CUDA_NAME:
		return cuda_kernels_on_name(cm, (const void *)h);
	case GS_REC_CUDA_LIB:
		return on_lib(cm, (const void *)h);
	default:
		return 0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A library found in several processes is probed once: count (dev, ino) pairs. */
static uint64_t count_probed_libs(const struct cuda_model *cm)
{
	uint64_t n = 0;

	for (size_t i = 0; i < cm->nlibs; i++) {
		bool seen = !cm->libs[i].probes;

		for (size_t j = 0; j < i && !seen; j++)
			seen = cm->libs[j].probes && cm->libs[j].dev == cm->libs[i].dev &&
			       cm->libs[j].ino == cm->libs[i].ino;
		n += !seen;
	}
	return n;
}

int cuda_model_finish(struct cuda_model *cm)
{
	for (size_t i = 0; cm->api && i < gs_cuda_nprobes; i++)
		if (cm->api[i].n)
			qsort(cm->api[i].durs, cm->api[i].n, sizeof(uint64_t), cmp_u64);
	cm->libs_probed = count_probed_libs(cm);
	/* the per-thread pairing state is only needed while reading */
	cuda_nesting_free(&cm->nesting);
	return cuda_kernels_finish(cm);
}

void cuda_model_free(struct cuda_model *cm)
{
	for (size_t i = 0; cm->api && i < gs_cuda_nprobes; i++)
		free(cm->api[i].durs);
	free(cm->api);
	free(cm->errors);
	free(cm->groups);
	for (size_t i = 0; i < cm->nlibs; i++)
		free(cm->libs[i].path);
	free(cm->libs);
	gpu_mem_free(&cm->mem);
	cuda_nesting_free(&cm->nesting);
	cuda_kernels_free(cm);
	key_index_free(&cm->ix_errors);
	key_index_free(&cm->ix_groups);
	memset(cm, 0, sizeof(*cm));
}
