// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "output/model/gpu/gpu_model.h"
#include "output/model/gpu/gpu_strings.h"
#include "output/trace/cuda_api.h"

bool gpu_model_takes(uint16_t type)
{
	return (type >= GS_REC_GPU_KERNEL && type <= GS_REC_GPU_OVERHEAD) ||
	       type == GS_REC_GPU_DEVICE || type == GS_REC_GPU_LOSS || type == GS_REC_BRIDGE_LOAD;
}

static struct gpu_proc *get_proc(struct gpu_model *g, uint32_t pid)
{
	struct gpu_proc *p;
	size_t i;

	if (key_index_find(&g->ix_procs, pid, 0, &i))
		return &g->procs[i];
	p = array_grow((void **)&g->procs, &g->nprocs, &g->procs_cap, sizeof(*p));
	if (!p || key_index_put(&g->ix_procs, pid, 0, g->nprocs - 1))
		return NULL;
	p->pid = pid;
	return p;
}

/* The bridge cuts every name at GS_GPU_NAME_MAX: a longer one is not the bridge's, and keeping
 * it whole would let one record of a file ask for up to 64 KiB of the reader's memory. */
static int intern_name(struct gpu_model *g, const char *name, uint32_t *id)
{
	char cut[GS_GPU_NAME_MAX];
	size_t len = strnlen(name, GS_GPU_NAME_MAX);

	if (len == GS_GPU_NAME_MAX) {
		memcpy(cut, name, GS_GPU_NAME_MAX - 1);
		cut[GS_GPU_NAME_MAX - 1] = '\0';
		name = cut;
	}
	return string_pool_intern(&g->names, name, id);
}

/* Every process with GPU records gets a gpu_proc too: its index is its ordinal in exports. */
static struct gpu_op *add_op(struct gpu_model *g, const struct gs_hdr *h, uint8_t kind,
			     uint64_t dur)
{
	struct gpu_op *op;

	if (!get_proc(g, h->pid))
		return NULL;
	op = array_grow((void **)&g->ops, &g->nops, &g->ops_cap, sizeof(*op));
	if (!op)
		return NULL;
	op->kind = kind;
	op->pid = h->pid;
	op->ts = h->ts;
	op->dur = dur;
	op->api = GPU_NONE;
	return op;
}

static int on_kernel(struct gpu_model *g, const struct gs_gpu_kernel *k)
{
	struct gpu_op *op = add_op(g, &k->hdr, GPU_OP_KERNEL, k->dur_ns);

	if (!op || intern_name(g, k->name, &op->name))
		return -1;
	op->correlation = k->correlation;
	op->device = k->device;
	op->context = k->context;
	op->stream = k->stream;
	memcpy(op->grid, k->grid, sizeof(op->grid));
	memcpy(op->block, k->block, sizeof(op->block));
	op->registers = k->registers;
	op->static_smem = k->static_smem;
	op->dynamic_smem = k->dynamic_smem;
	op->graph_id = k->graph_id;
	op->graph_node_id = k->graph_node_id;
	return 0;
}

static int on_memcpy(struct gpu_model *g, const struct gs_gpu_memcpy *m)
{
	struct gpu_op *op = add_op(g, &m->hdr, GPU_OP_MEMCPY, m->dur_ns);

	if (!op)
		return -1;
	op->correlation = m->correlation;
	op->device = m->device;
	op->context = m->context;
	op->stream = m->stream;
	op->bytes = m->bytes;
	op->subkind = m->copy_kind;
	op->src_kind = m->src_kind;
	op->dst_kind = m->dst_kind;
	op->graph_id = m->graph_id;
	op->graph_node_id = m->graph_node_id;
	return 0;
}

static int on_memset(struct gpu_model *g, const struct gs_gpu_memset *m)
{
	struct gpu_op *op = add_op(g, &m->hdr, GPU_OP_MEMSET, m->dur_ns);

	if (!op)
		return -1;
	op->correlation = m->correlation;
	op->device = m->device;
	op->context = m->context;
	op->stream = m->stream;
	op->bytes = m->bytes;
	op->dst_kind = m->mem_kind;
	op->graph_id = m->graph_id;
	op->graph_node_id = m->graph_node_id;
	return 0;
}

static int on_sync(struct gpu_model *g, const struct gs_gpu_sync *s)
{
	struct gpu_op *op = add_op(g, &s->hdr, GPU_OP_SYNC, s->dur_ns);

	if (!op)
		return -1;
	op->correlation = s->correlation;
	op->context = s->context;
	op->stream = s->stream;
	op->subkind = s->type;
	return 0;
}

/* API records are only appended here: gpu_model_finish() joins them to the GPU records (by
 * sorting, which costs 4 bytes per record once instead of a hash entry per record kept). */
static int on_api(struct gpu_model *g, const struct gs_gpu_api *a)
{
	struct gpu_proc *p = get_proc(g, a->hdr.pid);
	struct gpu_api *e;

	if (!p)
		return -1;
	p->apis++;
	e = array_grow((void **)&g->apis, &g->napis, &g->apis_cap, sizeof(*e));
	if (!e || intern_name(g, a->name, &e->name))
		return -1;
	e->pid = a->hdr.pid;
	e->tid = a->hdr.tid;
	e->ts = a->hdr.ts;
	e->dur = a->dur_ns;
	e->correlation = a->correlation;
	e->cbid = a->cbid;
	e->kind = a->kind;
	e->ret = a->ret;
	return 0;
}

static int on_nvtx(struct gpu_model *g, const struct gs_nvtx *n)
{
	struct gpu_nvtx_group *e;
	uint32_t name;
	size_t i;

	g->nvtx_records++;
	if (intern_name(g, n->name, &name))
		return -1;
	if (key_index_find(&g->ix_nvtx, n->kind, name, &i)) {
		e = &g->nvtx[i];
	} else {
		e = array_grow((void **)&g->nvtx, &g->nnvtx, &g->nvtx_cap, sizeof(*e));
		if (!e || key_index_put(&g->ix_nvtx, n->kind, name, g->nnvtx - 1))
			return -1;
		e->kind = n->kind;
		e->name = name;
	}
	return exact_stats_add(&e->durs, n->dur_ns);
}

static int on_clock(struct gpu_model *g, const struct gs_gpu_clock *c)
{
	struct gpu_proc *p = get_proc(g, c->hdr.pid);

	if (!p)
		return -1;
	p->clocks++;
	if (c->error_ns > p->clock_error_ns)
		p->clock_error_ns = c->error_ns;
	if (c->error_ns > g->max_clock_error_ns)
		g->max_clock_error_ns = c->error_ns;
	g->has_clock = true;
	return 0;
}

static int on_status(struct gpu_model *g, const struct gs_bridge_status *s)
{
	struct gpu_proc *p = get_proc(g, s->hdr.pid);
	struct gpu_status *st;

	if (!p)
		return -1;
	st = array_grow((void **)&p->status, &p->nstatus, &p->status_cap, sizeof(*st));
	if (!st)
		return -1;
	st->ts = s->hdr.ts;
	st->state = s->state;
	if (s->state < 32)
		p->seen |= 1u << s->state;
	/* cumulative counters: the largest is the latest, whatever order batches arrived in */
	if (s->dropped > p->dropped)
		p->dropped = s->dropped;
	if (s->lost > p->lost)
		p->lost = s->lost;
	if (s->state == GS_BRIDGE_CUPTI_ERROR)
		p->cupti_result = s->cupti_result;
	if (s->message[0]) {
		free(p->message);
		p->message = strdup(s->message);
		if (!p->message)
			return -1;
	}
	return 0;
}

static int on_overhead(struct gpu_model *g, const struct gs_gpu_overhead *o)
{
	struct gpu_proc *p = get_proc(g, o->hdr.pid);

	if (!p)
		return -1;
	p->overhead_ns += o->dur_ns;
	return 0;
}

const struct gpu_device *gpu_model_device(const struct gpu_model *g, uint32_t pid, uint32_t device)
{
	for (size_t i = 0; i < g->ndevices; i++)
		if (g->devices[i].pid == pid && g->devices[i].rec->device == device)
			return &g->devices[i];
	return NULL;
}

/* The bridge sends a device's record at every CUPTI session: the last one is kept (a process
 * has a handful of GPUs, so a linear search is enough). */
static int on_device(struct gpu_model *g, const struct gs_gpu_device *d)
{
	struct gpu_device *dev = (struct gpu_device *)gpu_model_device(g, d->hdr.pid, d->device);
	char *name = strndup(d->name, GS_GPU_NAME_MAX - 1);

	if (!name)
		return -1;
	if (!dev) {
		dev = array_grow((void **)&g->devices, &g->ndevices, &g->devices_cap, sizeof(*dev));
		if (!dev || !(dev->rec = malloc(sizeof(*dev->rec)))) {
			if (dev) /* not kept: the array's last entry */
				g->ndevices--;
			free(name);
			return -1;
		}
		dev->name = NULL;
	}
	dev->pid = d->hdr.pid;
	memcpy(dev->rec, d, sizeof(*dev->rec));
	free(dev->name);
	dev->name = name;
	return 0;
}

/* How the bridge came to be in the process (gpuspy loaded it on attach), or why not. */
static int on_load(struct gpu_model *g, const struct gs_bridge_load *l)
{
	struct gpu_proc *p = get_proc(g, l->hdr.pid); /* the observer's are op_model.h's */

	if (!p)
		return -1;
	p->load_outcome = l->outcome;
	p->load_pause_ns = l->pause_ns;
	p->load_wait_ns = l->wait_ns;
	free(p->load_message);
	p->load_message = strdup(l->message);
	return p->load_message ? 0 : -1;
}

static void on_loss(struct gpu_model *g, const struct gs_gpu_loss *l)
{
	/* cumulative: the last record is the total */
	g->loss_batches = l->batches;
	g->loss_records = l->records;
	g->loss_gaps = l->gaps;
}

int gpu_model_apply(struct gpu_model *g, const struct gs_hdr *h)
{
	g->records++;
	switch (h->type) {
	case GS_REC_GPU_KERNEL:
		return on_kernel(g, (const void *)h);
	case GS_REC_GPU_MEMCPY:
		return on_memcpy(g, (const void *)h);
	case GS_REC_GPU_MEMSET:
		return on_memset(g, (const void *)h);
	case GS_REC_GPU_SYNC:
		return on_sync(g, (const void *)h);
	case GS_REC_GPU_API:
		return on_api(g, (const void *)h);
	case GS_REC_NVTX:
		return on_nvtx(g, (const void *)h);
	case GS_REC_GPU_CLOCK:
		return on_clock(g, (const void *)h);
	case GS_REC_BRIDGE_STATUS:
		return on_status(g, (const void *)h);
	case GS_REC_GPU_OVERHEAD:
		return on_overhead(g, (const void *)h);
	case GS_REC_GPU_LOSS:
		on_loss(g, (const void *)h);
		return 0;
	case GS_REC_BRIDGE_LOAD:
		g->records--; /* not a GPU record */
		return on_load(g, (const void *)h);
	case GS_REC_GPU_DEVICE:
		g->records--; /* what a GPU is, not what it did */
		return on_device(g, (const void *)h);
	default:
		g->records--;
		return 0;
	}
}

void gpu_model_free(struct gpu_model *g)
{
	for (size_t i = 0; i < g->nprocs; i++) {
		free(g->procs[i].message);
		free(g->procs[i].load_message);
		free(g->procs[i].status);
	}
	for (size_t i = 0; i < g->nnvtx; i++)
		exact_stats_free(&g->nvtx[i].durs);
	for (size_t i = 0; i < g->ndevices; i++) {
		free(g->devices[i].rec);
		free(g->devices[i].name);
	}
	free(g->devices);
	for (size_t i = 0; g->kernel_durs && i < g->names.n; i++)
		exact_stats_free(&g->kernel_durs[i]);
	for (size_t i = 0; i < GPU_MEM_ROWS; i++) {
		exact_stats_free(&g->mem_durs[i]);
		exact_stats_free(&g->mem_bytes[i]);
	}
	free(g->kernel_durs);
	free(g->ops);
	free(g->apis);
	free(g->procs);
	free(g->nvtx);
	free(g->missed);
	string_pool_free(&g->names);
	key_index_free(&g->ix_procs);
	key_index_free(&g->ix_nvtx);
	free(g->calls);
	key_index_free(&g->ix_contexts);
	memset(g, 0, sizeof(*g));
}

const struct gpu_proc *gpu_model_proc(const struct gpu_model *g, uint32_t pid)
{
	size_t i;

	return key_index_find(&g->ix_procs, pid, 0, &i) ? &g->procs[i] : NULL;
}

const struct gpu_api *gpu_model_call_api(const struct gpu_model *g, uint32_t pid, uint32_t tid,
					 uint64_t ts)
{
	const struct gpu_api *a;
	size_t lo = 0, hi = g->ncalls;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		a = &g->apis[g->calls[mid]];

		if (a->pid < pid || (a->pid == pid && a->call_tid < tid) ||
		    (a->pid == pid && a->call_tid == tid && a->call_ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	a = lo < g->ncalls ? &g->apis[g->calls[lo]] : NULL;
	return a && a->pid == pid && a->call_tid == tid && a->call_ts == ts ? a : NULL;
}

uint32_t gpu_model_context_device(const struct gpu_model *g, uint32_t pid, uint32_t context)
{
	size_t i;

	return key_index_find(&g->ix_contexts, pid, context, &i) ? (uint32_t)i : 0;
}

static uint64_t sum_procs(const struct gpu_model *g, bool dropped)
{
	uint64_t n = 0;

	for (size_t i = 0; i < g->nprocs; i++)
		n += dropped ? g->procs[i].dropped : g->procs[i].lost;
	return n;
}

uint64_t gpu_loss_count(const struct gpu_model *g, unsigned kind)
{
	switch (kind) {
	case GPU_LOSS_RECORDS:
		return g->loss_records;
	case GPU_LOSS_GAPS:
		return g->loss_gaps;
	case GPU_LOSS_CUPTI_DROPPED:
		return sum_procs(g, true);
	case GPU_LOSS_BRIDGE_LOST:
		return sum_procs(g, false);
	default:
		return 0;
	}
}

const char *gpu_loss_kind_name(unsigned kind)
{
	static const char *const names[GPU_LOSS_NKINDS] = {
	    [GPU_LOSS_RECORDS] = "GPU records (ring buffer full)",
	    [GPU_LOSS_GAPS] = "GPU record batches missing from a bridge's sequence",
	    [GPU_LOSS_CUPTI_DROPPED] = "GPU records dropped by CUPTI (its buffers full)",
	    [GPU_LOSS_BRIDGE_LOST] = "GPU records lost in the CUPTI bridge (out of memory)",
	};

	return kind < GPU_LOSS_NKINDS ? names[kind] : "unknown";
}

uint64_t gpu_model_loss_total(const struct gpu_model *g)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < GPU_LOSS_NKINDS; k++)
		n += gpu_loss_count(g, k);
	return n;
}

const char *gpu_op_name(const struct gpu_model *g, const struct gpu_op *op, char *buf, size_t len)
{
	switch (op->kind) {
	case GPU_OP_KERNEL:
		return string_pool_display(&g->names, op->name);
	case GPU_OP_MEMCPY:
		snprintf(buf, len, "[CUDA memcpy %s]", gpu_copy_kind_name(op->subkind));
		return buf;
	case GPU_OP_MEMSET:
		return "[CUDA memset]";
	default:
		return gpu_sync_type_name(op->subkind);
	}
}

const char *gpu_op_mangled(const struct gpu_model *g, const struct gpu_op *op, char *buf,
			   size_t len)
{
	if (op->kind == GPU_OP_KERNEL)
		return string_pool_get(&g->names, op->name);
	return gpu_op_name(g, op, buf, len);
}
