// SPDX-License-Identifier: MIT
/*
 * CUPTI activity records -> bpf/records.h records. The struct read for each kind is the one
 * NVIDIA's CUPTI 13 headers document for it (CUpti_ActivityKernel10 for KERNEL and
 * CONCURRENT_KERNEL, Memcpy6, Memset4, API for RUNTIME and DRIVER, Synchronization2,
 * Overhead3, Device5): CUPTI fills the newest version its headers declare, so building against
 * CUPTI 13's headers and running with CUPTI 13 keep reader and writer in step.
 *
 * Times: hdr.ts is the start on CLOCK_MONOTONIC (clock.c), dur_ns = end - start. CUPTI gives
 * start = end = 0 when it could not time something: such records keep ts 0 and dur 0.
 */
#include <cupti.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"

/* Sets *ts; returns the duration. */
static uint64_t span(uint64_t start, uint64_t end, uint64_t *ts)
{
	*ts = start ? clock_to_mono(start) : 0;
	return start && end > start ? end - start : 0;
}

static void put_kernel(const CUpti_ActivityKernel10 *k)
{
	union bridge_rec r;
	struct gs_gpu_kernel *g = (struct gs_gpu_kernel *)&r;
	uint64_t ts;

	memset(g, 0, sizeof(*g));
	g->dur_ns = span(k->start, k->end, &ts);
	g->correlation = k->correlationId;
	g->device = k->deviceId;
	g->context = k->contextId;
	g->stream = k->streamId;
	g->grid[0] = (__u32)k->gridX;
	g->grid[1] = (__u32)k->gridY;
	g->grid[2] = (__u32)k->gridZ;
	g->block[0] = (__u32)k->blockX;
	g->block[1] = (__u32)k->blockY;
	g->block[2] = (__u32)k->blockZ;
	g->registers = k->registersPerThread;
	g->static_smem = (__u32)k->staticSharedMemory;
	g->dynamic_smem = (__u32)k->dynamicSharedMemory;
	g->graph_id = k->graphId;
	g->graph_node_id = k->graphNodeId;
	bridge_rec_finish(&r, GS_REC_GPU_KERNEL, sizeof(*g), 0, ts, k->name ? k->name : "");
	batch_add(&r.hdr);
}

static void put_memcpy(const CUpti_ActivityMemcpy6 *m)
{
	union bridge_rec r;
	struct gs_gpu_memcpy *g = (struct gs_gpu_memcpy *)&r;
	uint64_t ts;

	memset(g, 0, sizeof(*g));
	g->dur_ns = span(m->start, m->end, &ts);
	g->correlation = m->correlationId;
	g->device = m->deviceId;
	g->context = m->contextId;
	g->stream = m->streamId;
	g->bytes = m->bytes;
	g->copy_kind = m->copyKind; /* gs_gpu_copy_kind has CUPTI's values */
	g->src_kind = m->srcKind;
	g->dst_kind = m->dstKind;
	g->graph_id = m->graphId;
	g->graph_node_id = m->graphNodeId;
	bridge_rec_finish(&r, GS_REC_GPU_MEMCPY, sizeof(*g), 0, ts, NULL);
	batch_add(&r.hdr);
}

static void put_memset(const CUpti_ActivityMemset4 *m)
{
	union bridge_rec r;
	struct gs_gpu_memset *g = (struct gs_gpu_memset *)&r;
	uint64_t ts;

	memset(g, 0, sizeof(*g));
	g->dur_ns = span(m->start, m->end, &ts);
	g->correlation = m->correlationId;
	g->device = m->deviceId;
	g->context = m->contextId;
	g->stream = m->streamId;
	g->bytes = m->bytes;
	g->value = m->value;
	g->mem_kind = m->memoryKind;
	g->graph_id = m->graphId;
	g->graph_node_id = m->graphNodeId;
	bridge_rec_finish(&r, GS_REC_GPU_MEMSET, sizeof(*g), 0, ts, NULL);
	batch_add(&r.hdr);
}

static void put_api(const CUpti_ActivityAPI *a)
{
	int runtime = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
	union bridge_rec r;
	struct gs_gpu_api *g = (struct gs_gpu_api *)&r;
	const char *name = NULL;
	uint64_t ts;

	if (cuptiGetCallbackName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
				 a->cbid, &name) != CUPTI_SUCCESS)
		name = NULL;
	memset(g, 0, sizeof(*g));
	g->dur_ns = span(a->start, a->end, &ts);
	g->correlation = a->correlationId;
	g->cbid = a->cbid;
	g->kind = runtime ? GS_GPU_API_RUNTIME : GS_GPU_API_DRIVER;
	g->ret = (__s32)a->returnValue;
	bridge_rec_finish(&r, GS_REC_GPU_API, sizeof(*g), a->threadId, ts, name ? name : "");
	batch_add(&r.hdr);
}

static void put_sync(const CUpti_ActivitySynchronization2 *s)
{
	union bridge_rec r;
	struct gs_gpu_sync *g = (struct gs_gpu_sync *)&r;
	uint64_t ts;

	memset(g, 0, sizeof(*g));
	g->dur_ns = span(s->start, s->end, &ts);
	g->correlation = s->correlationId;
	g->type = (__u32)s->type;
	g->context = s->contextId;
	g->stream = s->streamId;
	g->event = s->cudaEventId;
	bridge_rec_finish(&r, GS_REC_GPU_SYNC, sizeof(*g), 0, ts, NULL);
	batch_add(&r.hdr);
}

static void put_overhead(const CUpti_ActivityOverhead3 *o)
{
	union bridge_rec r;
	struct gs_gpu_overhead *g = (struct gs_gpu_overhead *)&r;
	uint32_t tid = 0;
	uint64_t ts;

	if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
		tid = o->objectId.pt.threadId;
	memset(g, 0, sizeof(*g));
	g->dur_ns = span(o->start, o->end, &ts);
	g->kind = (__u32)o->overheadKind;
	g->object_kind = (__u32)o->objectKind;
	bridge_rec_finish(&r, GS_REC_GPU_OVERHEAD, sizeof(*g), tid, ts, NULL);
	batch_add(&r.hdr);
}

/* A device record has no time: it describes the GPU, so every session keeps it (the model keeps
 * one per process and device). */
static void put_device(const CUpti_ActivityDevice5 *d)
{
	union bridge_rec r;
	struct gs_gpu_device *g = (struct gs_gpu_device *)&r;

	memset(g, 0, sizeof(*g));
	g->global_mem = d->globalMemorySize;
	g->mem_bandwidth = d->globalMemoryBandwidth;
	g->device = d->id;
	g->compute_major = d->computeCapabilityMajor;
	g->compute_minor = d->computeCapabilityMinor;
	g->sms = d->numMultiprocessors;
	g->warp_size = d->numThreadsPerWarp;
	g->max_threads_per_block = d->maxThreadsPerBlock;
	g->max_warps_per_sm = d->maxWarpsPerMultiprocessor;
	g->max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
	g->regs_per_block = d->maxRegistersPerBlock;
	g->regs_per_sm = d->maxRegistersPerMultiprocessor;
	g->smem_per_block = d->maxSharedMemoryPerBlock;
	g->smem_per_sm = d->maxSharedMemoryPerMultiprocessor;
	g->l2_cache = d->l2CacheSize;
	g->const_mem = d->constantMemorySize;
	g->core_clock_khz = d->coreClockRate;
	g->copy_engines = d->numMemcpyEngines;
	_Static_assert(sizeof(g->uuid) == sizeof(d->uuid.bytes), "CUuuid is 16 bytes");
	memcpy(g->uuid, d->uuid.bytes, sizeof(g->uuid));
	bridge_rec_finish(&r, GS_REC_GPU_DEVICE, sizeof(*g), 0, bridge_now_ns(),
			  d->name ? d->name : "");
	batch_add(&r.hdr);
}

/* The start of a record, in CUPTI's clock, for the "launched while attached" filter. */
static uint64_t record_start(const CUpti_Activity *a)
{
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return ((const CUpti_ActivityKernel10 *)a)->start;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return ((const CUpti_ActivityMemcpy6 *)a)->start;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return ((const CUpti_ActivityMemset4 *)a)->start;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return ((const CUpti_ActivityAPI *)a)->start;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return ((const CUpti_ActivitySynchronization2 *)a)->start;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return ((const CUpti_ActivityOverhead3 *)a)->start;
	default:
		return 0;
	}
}

void convert_record(const void *cupti_record, uint64_t floor_cupti, int keep)
{
	const CUpti_Activity *a = cupti_record;
	uint64_t start = record_start(a);

	/* a record of work from before this recorder attached: not ours */
	if (!keep || (start && start < floor_cupti))
		goto done;
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		put_kernel((const CUpti_ActivityKernel10 *)a);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		put_memcpy((const CUpti_ActivityMemcpy6 *)a);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		put_memset((const CUpti_ActivityMemset4 *)a);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		put_api((const CUpti_ActivityAPI *)a);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		put_sync((const CUpti_ActivitySynchronization2 *)a);
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		put_overhead((const CUpti_ActivityOverhead3 *)a);
		break;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		put_device((const CUpti_ActivityDevice5 *)a);
		break;
	default:
		break; /* a kind the bridge did not enable */
	}
done:
	/* CUPTI hands ownership of an overhead record's details and of a device record's name to
	 * the client (cupti_activity.h: "Client is responsible for freeing this memory") */
	if (a->kind == CUPTI_ACTIVITY_KIND_OVERHEAD)
		free(((const CUpti_ActivityOverhead3 *)a)->overheadData);
	else if (a->kind == CUPTI_ACTIVITY_KIND_DEVICE)
		free((void *)((const CUpti_ActivityDevice5 *)a)->name);
}
