// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "output/model/gpu/gpu_mem.h"

static struct gpu_mem_usage *get_usage(struct gpu_mem *g, uint32_t pid)
{
	struct gpu_mem_usage *u;
	size_t i;

	if (key_index_find(&g->ix_usage, pid, 0, &i))
		return &g->usage[i];
	u = array_grow((void **)&g->usage, &g->nusage, &g->usage_cap, sizeof(*u));
	if (!u || key_index_put(&g->ix_usage, pid, 0, g->nusage - 1))
		return NULL;
	u->pid = pid;
	return u;
}

static void add_outstanding(struct gpu_mem_kind_usage *k, uint64_t bytes)
{
	k->outstanding_bytes += bytes;
	if (k->outstanding_bytes > k->peak_bytes)
		k->peak_bytes = k->outstanding_bytes;
}

static int on_alloc(struct gpu_mem *g, struct gpu_mem_usage *u, const struct gs_cuda_call *c,
		    const struct cuda_call_info *info)
{
	struct gpu_mem_kind_usage *k = &u->kind[info->mem_kind];
	struct mem_block b =
			     {
				 .pid = c->hdr.pid,
				 .kind = (uint16_t)info->mem_kind,
				 .probe = c->probe,
				 .addr = info->ptr,
				 .bytes = info->bytes,
				 .ts = c->hdr.ts + c->dur_ns,
			     },
			 old;

	k->allocs++;
	k->alloc_bytes += info->bytes;
	/* a zero-byte allocation succeeds with a NULL pointer: nothing to track */
	if (!info->ptr)
		return 0;
	/* the same address handed out again means its free was not seen (lost, or made by a
	 * function gpuspy does not probe): it is no longer outstanding */
	if (mem_blocks_take(&g->blocks, b.pid, b.addr, &old))
		u->kind[old.kind].outstanding_bytes -= old.bytes;
	add_outstanding(k, info->bytes);
	return mem_blocks_put(&g->blocks, &b);
}

static void on_free(struct gpu_mem *g, struct gpu_mem_usage *u, const struct gs_cuda_call *c,
		    const struct cuda_call_info *info)
{
	struct mem_block b;
	struct gpu_mem_kind_usage *k;

	/* a block is freed as whatever it was allocated as (cudaFree frees managed memory too) */
	if (!mem_blocks_take(&g->blocks, c->hdr.pid, info->ptr, &b)) {
		u->kind[info->mem_kind].unknown_frees++;
		return;
	}
	k = &u->kind[b.kind];
	k->frees++;
	k->freed_bytes += b.bytes;
	k->outstanding_bytes -= b.bytes;
}

const struct gpu_mem_usage *gpu_mem_apply(struct gpu_mem *g, const struct gs_cuda_call *c,
					  const struct cuda_call_info *info, bool *oom)
{
	struct gpu_mem_usage *u;

	if (info->op != GS_CUDA_OP_ALLOC && info->op != GS_CUDA_OP_FREE)
		return NULL;
	/* freeing NULL is a no-op every program is allowed to make */
	if (info->op == GS_CUDA_OP_FREE && !info->ptr)
		return NULL;
	u = get_usage(g, c->hdr.pid);
	if (!u) {
		*oom = true;
		return NULL;
	}
	if (info->op == GS_CUDA_OP_FREE)
		on_free(g, u, c, info);
	else if (on_alloc(g, u, c, info))
		*oom = true;
	return u;
}

static bool on_device(const struct gpu_mem *g, uint32_t pid, uint64_t addr)
{
	const struct mem_block *b = mem_blocks_find(&g->blocks, pid, addr);

	return b && b->kind == GS_MEM_DEVICE;
}

enum gs_copy_kind gpu_mem_copy_kind(const struct gpu_mem *g, uint32_t pid,
				    const struct cuda_call_info *info)
{
	bool dst, src;

	if (info->copy_kind != GS_COPY_DEFAULT)
		return info->copy_kind;
	dst = on_device(g, pid, info->dst);
	src = on_device(g, pid, info->src);
	if (dst && src)
		return GS_COPY_DTOD;
	if (dst)
		return GS_COPY_HTOD;
	return src ? GS_COPY_DTOH : GS_COPY_DEFAULT;
}

struct gone_blocks {
	bool (*gone)(uint32_t pid, void *ctx);
	void *ctx;
	struct mem_block *v;
	size_t n, cap;
};

static int collect_gone(const struct mem_block *b, void *arg)
{
	struct gone_blocks *gb = arg;
	struct mem_block *slot;

	if (!gb->gone(b->pid, gb->ctx))
		return 0;
	slot = array_grow((void **)&gb->v, &gb->n, &gb->cap, sizeof(*slot));
	if (!slot)
		return -1;
	*slot = *b;
	return 0;
}

/* The usage entries of live processes, moved down over the gone ones, and indexed again. */
static int compact_usage(struct gpu_mem *g, bool (*gone)(uint32_t pid, void *ctx), void *ctx)
{
	size_t kept = 0;

	key_index_free(&g->ix_usage);
	for (size_t i = 0; i < g->nusage; i++) {
		if (gone(g->usage[i].pid, ctx))
			continue;
		g->usage[kept] = g->usage[i];
		if (key_index_put(&g->ix_usage, g->usage[kept].pid, 0, kept))
			return -1;
		kept++;
	}
	g->nusage = kept;
	return 0;
}

int gpu_mem_forget(struct gpu_mem *g, bool (*gone)(uint32_t pid, void *ctx), void *ctx)
{
	struct gone_blocks gb = {.gone = gone, .ctx = ctx};
	struct mem_block unused;
	int err = mem_blocks_each(&g->blocks, collect_gone, &gb);

	for (size_t i = 0; i < gb.n; i++)
		mem_blocks_take(&g->blocks, gb.v[i].pid, gb.v[i].addr, &unused);
	free(gb.v);
	return compact_usage(g, gone, ctx) || err ? -1 : 0;
}

void gpu_mem_free(struct gpu_mem *g)
{
	mem_blocks_free(&g->blocks);
	free(g->usage);
	key_index_free(&g->ix_usage);
	memset(g, 0, sizeof(*g));
}
