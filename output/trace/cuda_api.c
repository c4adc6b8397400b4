// SPDX-License-Identifier: MIT
/* The probed CUDA functions and the decoding of their arguments (see cuda_api.h). */
#include <stdio.h>
#include <string.h>
#include "output/trace/cuda_api.h"
#include "output/trace/cuda_errors.h"

#define CUDA_PROBE(lib, sym, cls) {#sym, GS_LIB_IS_##lib, GS_CUDA_##cls},
#define GS_LIB_IS_CUDART	  true
#define GS_LIB_IS_CUDA		  false
const struct gs_cuda_probe gs_cuda_probes[] = {
#include "output/trace/cuda_probe_list.h"
};
#undef CUDA_PROBE
const unsigned gs_cuda_nprobes = sizeof(gs_cuda_probes) / sizeof(gs_cuda_probes[0]);
_Static_assert(sizeof(gs_cuda_probes) / sizeof(gs_cuda_probes[0]) < (1u << GS_CUDA_COOKIE_SHIFT),
	       "probe indexes must fit the cookie and the record's u16");

const struct gs_cuda_probe *cuda_probe(unsigned index)
{
	return index < gs_cuda_nprobes ? &gs_cuda_probes[index] : NULL;
}

int cuda_probe_find(const char *name)
{
	for (unsigned i = 0; i < gs_cuda_nprobes; i++)
		if (!strcmp(gs_cuda_probes[i].name, name))
			return (int)i;
	return -1;
}

uint32_t cuda_probe_capture(const struct gs_cuda_probe *p)
{
	uint32_t cap = p->runtime ? GS_CUDA_CAP_RUNTIME : 0;

	switch (p->cls) {
	case GS_CUDA_LAUNCH_RT:
	case GS_CUDA_LAUNCH_DRV:
		return cap | GS_CUDA_CAP_STACK;
	case GS_CUDA_LAUNCH_EX:
		return cap | GS_CUDA_CAP_CONFIG;
	case GS_CUDA_NAME_STUB:
		return cap | GS_CUDA_CAP_NAME | GS_CUDA_CAP_NAME_ARG1;
	case GS_CUDA_NAME_FUNCTION:
	case GS_CUDA_NAME_KERNEL:
		return cap | GS_CUDA_CAP_OUT | GS_CUDA_CAP_NAME;
	case GS_CUDA_KERNEL_FUNCTION:
	case GS_CUDA_ALLOC_DEVICE:
	case GS_CUDA_ALLOC_HOST:
	case GS_CUDA_ALLOC_MANAGED:
		return cap | GS_CUDA_CAP_OUT;
	default:
		return cap;
	}
}

static void set_dims(uint32_t dims[3], uint64_t xy, uint64_t z)
{
	dims[0] = (uint32_t)xy;
	dims[1] = (uint32_t)(xy >> 32);
	dims[2] = (uint32_t)z;
}

static void set_stream(struct cuda_call_info *info, uint64_t stream)
{
	info->stream = stream;
	info->has_stream = true;
}

/* The three launch flavours: where grid, block, shared memory and stream are. */
static void decode_launch(const struct gs_cuda_call *c, struct cuda_call_info *info)
{
	const __u64 *a = c->args;

	info->op = GS_CUDA_OP_LAUNCH;
	switch (info->probe->cls) {
	case GS_CUDA_LAUNCH_RT: /* each dim3 travels in two registers: x|y, then z */
		info->func = a[0];
		set_dims(info->grid, a[1], a[2]);
		set_dims(info->block, a[3], a[4]);
		info->shmem = a[6];
		set_stream(info, a[7]);
		break;
	case GS_CUDA_LAUNCH_DRV: /* blockDimZ, shmem and stream are on the stack */
		info->func = a[0];
		info->grid[0] = (uint32_t)a[1];
		info->grid[1] = (uint32_t)a[2];
		info->grid[2] = (uint32_t)a[3];
		info->block[0] = (uint32_t)a[4];
		info->block[1] = (uint32_t)a[5];
		info->block[2] = (uint32_t)a[6];
		info->shmem = (uint32_t)a[7];
		set_stream(info, a[8]);
		break;
	default: /* CUlaunchConfig words: gx|gy, gz|bx, by|bz, shmem, hStream */
		info->func = a[1];
		set_dims(info->grid, a[4], a[5]);
		info->block[0] = (uint32_t)(a[5] >> 32);
		info->block[1] = (uint32_t)a[6];
		info->block[2] = (uint32_t)(a[6] >> 32);
		info->shmem = (uint32_t)a[7];
		set_stream(info, a[8]);
		break;
	}
}

static void decode_copy(const struct gs_cuda_call *c, struct cuda_call_info *info,
			enum gs_copy_kind kind, int stream_arg)
{
	info->op = GS_CUDA_OP_MEMCPY;
	info->dst = c->args[0];
	info->src = c->args[1];
	info->bytes = c->args[2];
	info->copy_kind = kind;
	if (stream_arg >= 0)
		set_stream(info, c->args[stream_arg]);
}

static void decode_memset(const struct gs_cuda_call *c, struct cuda_call_info *info, uint64_t unit,
			  int stream_arg)
{
	info->op = GS_CUDA_OP_MEMSET;
	info->ptr = c->args[0];
	info->bytes = c->args[2] * unit;
	if (stream_arg >= 0)
		set_stream(info, c->args[stream_arg]);
}

static void decode_alloc(const struct gs_cuda_call *c, struct cuda_call_info *info,
			 enum gs_mem_kind kind)
{
	info->op = GS_CUDA_OP_ALLOC;
	info->ptr = c->out;
	info->bytes = c->args[1];
	info->mem_kind = kind;
}

static void decode_free(const struct gs_cuda_call *c, struct cuda_call_info *info,
			enum gs_mem_kind kind)
{
	info->op = GS_CUDA_OP_FREE;
	info->ptr = c->args[0];
	info->mem_kind = kind;
}

static enum gs_copy_kind runtime_copy_kind(uint64_t kind)
{
	return kind < GS_COPY_NKINDS ? (enum gs_copy_kind)kind : GS_COPY_DEFAULT;
}

static void decode_sync(const struct gs_cuda_call *c, struct cuda_call_info *info)
{
	info->op = GS_CUDA_OP_SYNC;
	switch (info->probe->cls) {
	case GS_CUDA_SYNC_STREAM:
		set_stream(info, c->args[0]);
		break;
	case GS_CUDA_SYNC_EVENT:
		info->event = c->args[0];
		break;
	case GS_CUDA_STREAM_WAIT_EVENT:
		set_stream(info, c->args[0]);
		info->event = c->args[1];
		break;
	default:
		break;
	}
}

bool cuda_call_decode(const struct gs_cuda_call *c, struct cuda_call_info *info)
{
	memset(info, 0, sizeof(*info));
	info->probe = cuda_probe(c->probe);
	if (!info->probe)
		return false;
	switch (info->probe->cls) {
	case GS_CUDA_LAUNCH_RT:
	case GS_CUDA_LAUNCH_DRV:
	case GS_CUDA_LAUNCH_EX:
		decode_launch(c, info);
		break;
	case GS_CUDA_GRAPH_LAUNCH:
		info->op = GS_CUDA_OP_GRAPH;
		info->func = c->args[0];
		set_stream(info, c->args[1]);
		break;
	case GS_CUDA_NAME_STUB:
		info->op = GS_CUDA_OP_NAMING;
		info->func = c->args[1]; /* the host stub */
		break;
	case GS_CUDA_NAME_FUNCTION:
	case GS_CUDA_NAME_KERNEL:
	case GS_CUDA_KERNEL_FUNCTION:
		info->op = GS_CUDA_OP_NAMING;
		info->func = c->out; /* the handle made */
		break;
	case GS_CUDA_MEMCPY_RT:
		decode_copy(c, info, runtime_copy_kind(c->args[3]), -1);
		break;
	case GS_CUDA_MEMCPY_RT_ASYNC:
		decode_copy(c, info, runtime_copy_kind(c->args[3]), 4);
		break;
	case GS_CUDA_MEMCPY_DRV:
		decode_copy(c, info, GS_COPY_DEFAULT, -1);
		break;
	case GS_CUDA_MEMCPY_DRV_ASYNC:
		decode_copy(c, info, GS_COPY_DEFAULT, 3);
		break;
	case GS_CUDA_MEMCPY_HTOD:
		decode_copy(c, info, GS_COPY_HTOD, -1);
		break;
	case GS_CUDA_MEMCPY_DTOH:
		decode_copy(c, info, GS_COPY_DTOH, -1);
		break;
	case GS_CUDA_MEMCPY_DTOD:
		decode_copy(c, info, GS_COPY_DTOD, -1);
		break;
	case GS_CUDA_MEMCPY_HTOD_ASYNC:
		decode_copy(c, info, GS_COPY_HTOD, 3);
		break;
	case GS_CUDA_MEMCPY_DTOH_ASYNC:
		decode_copy(c, info, GS_COPY_DTOH, 3);
		break;
	case GS_CUDA_MEMCPY_DTOD_ASYNC:
		decode_copy(c, info, GS_COPY_DTOD, 3);
		break;
	case GS_CUDA_MEMSET_RT:
	case GS_CUDA_MEMSET_D8:
		decode_memset(c, info, 1, -1);
		break;
	case GS_CUDA_MEMSET_RT_ASYNC:
	case GS_CUDA_MEMSET_D8_ASYNC:
		decode_memset(c, info, 1, 3);
		break;
	case GS_CUDA_MEMSET_D32:
		decode_memset(c, info, 4, -1);
		break;
	case GS_CUDA_MEMSET_D32_ASYNC:
		decode_memset(c, info, 4, 3);
		break;
	case GS_CUDA_ALLOC_DEVICE:
		decode_alloc(c, info, GS_MEM_DEVICE);
		break;
	case GS_CUDA_ALLOC_HOST:
		decode_alloc(c, info, GS_MEM_PINNED);
		break;
	case GS_CUDA_ALLOC_MANAGED:
		decode_alloc(c, info, GS_MEM_MANAGED);
		break;
	case GS_CUDA_FREE_DEVICE:
		decode_free(c, info, GS_MEM_DEVICE);
		break;
	case GS_CUDA_FREE_HOST:
		decode_free(c, info, GS_MEM_PINNED);
		break;
	default:
		decode_sync(c, info);
		break;
	}
	return true;
}

bool cuda_call_failed(const struct gs_cuda_call *c, const struct cuda_call_info *info)
{
	/* __cudaRegisterFunction returns void: rax is whatever was left in it */
	if (info->probe->cls == GS_CUDA_NAME_STUB)
		return false;
	/* cudaError_t and CUresult are C enums: the upper half of rax is junk */
	return (int32_t)c->ret != 0;
}

const char *cuda_error_name(bool runtime, int64_t code, char *buf, size_t len)
{
	const struct gs_cuda_error *t = runtime ? gs_cudart_errors : gs_cuda_driver_errors;

	/* cudaError_t and CUresult are C enums: the value is in eax, the upper half is junk */
	code = (int32_t)code;
	for (; t->name; t++)
		if (t->code == code)
			return t->name;
	snprintf(buf, len, "%s%lld", runtime ? "cudaError " : "CUresult ", (long long)code);
	return buf;
}

const char *cuda_copy_kind_name(enum gs_copy_kind kind)
{
	static const char *const names[GS_COPY_NKINDS] = {
	    [GS_COPY_HTOH] = "Host-to-Host",	     [GS_COPY_HTOD] = "Host-to-Device",
	    [GS_COPY_DTOH] = "Device-to-Host",	     [GS_COPY_DTOD] = "Device-to-Device",
	    [GS_COPY_DEFAULT] = "Unified (Default)",
	};

	return kind < GS_COPY_NKINDS ? names[kind] : "unknown";
}

const char *cuda_mem_kind_name(enum gs_mem_kind kind)
{
	static const char *const names[GS_MEM_NKINDS] = {
	    [GS_MEM_DEVICE] = "device",
	    [GS_MEM_PINNED] = "pinned",
	    [GS_MEM_MANAGED] = "managed",
	};

	return kind < GS_MEM_NKINDS ? names[kind] : "unknown";
}
