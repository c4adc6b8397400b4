/* SPDX-License-Identifier: MIT */
/*
 * The catalogue of probed CUDA functions (output/trace/cuda_probe_list.h) and how to read their
 * arguments: the loader takes from it what BPF must capture for each probe (the uprobe
 * cookie), the reports and exporters decode GS_REC_CUDA_CALL records with it.
 */
#ifndef GPUSPY_CUDA_API_H
#define GPUSPY_CUDA_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/records.h"

/* How a probed function's arguments are read (the CLASS column of cuda_probe_list.h). */
enum gs_cuda_class {
	GS_CUDA_LAUNCH_RT,	  /* (func, dim3 grid, dim3 block, args, shmem, stream) */
	GS_CUDA_LAUNCH_DRV,	  /* (f, gx, gy, gz, bx, by, bz, shmem, stream, ...) */
	GS_CUDA_LAUNCH_EX,	  /* (const CUlaunchConfig *, f, ...) */
	GS_CUDA_GRAPH_LAUNCH,	  /* (CUgraphExec, stream) */
	GS_CUDA_NAME_STUB,	  /* __cudaRegisterFunction(handle, hostFun, deviceFun, ...) */
	GS_CUDA_NAME_FUNCTION,	  /* (CUfunction *, CUmodule, name) */
	GS_CUDA_NAME_KERNEL,	  /* (CUkernel *, CUlibrary, name) */
	GS_CUDA_KERNEL_FUNCTION,  /* (handle *out, handle): out stands for the other one */
	GS_CUDA_MEMCPY_RT,	  /* (dst, src, bytes, kind) */
	GS_CUDA_MEMCPY_RT_ASYNC,  /* (dst, src, bytes, kind, stream) */
	GS_CUDA_MEMSET_RT,	  /* (ptr, value, bytes) */
	GS_CUDA_MEMSET_RT_ASYNC,  /* (ptr, value, bytes, stream) */
	GS_CUDA_MEMCPY_DRV,	  /* cuMemcpy(dst, src, bytes): direction from the pointers */
	GS_CUDA_MEMCPY_DRV_ASYNC, /* (dst, src, bytes, stream) */
	GS_CUDA_MEMCPY_HTOD,	  /* (dst, src, bytes) */
	GS_CUDA_MEMCPY_DTOH,
	GS_CUDA_MEMCPY_DTOD,
	GS_CUDA_MEMCPY_HTOD_ASYNC, /* (dst, src, bytes, stream) */
	GS_CUDA_MEMCPY_DTOH_ASYNC,
	GS_CUDA_MEMCPY_DTOD_ASYNC,
	GS_CUDA_MEMSET_D8,	 /* (ptr, value, count) */
	GS_CUDA_MEMSET_D32,	 /* (ptr, value, count of 32-bit words) */
	GS_CUDA_MEMSET_D8_ASYNC, /* (ptr, value, count, stream) */
	GS_CUDA_MEMSET_D32_ASYNC,
	GS_CUDA_ALLOC_DEVICE,  /* (void **out, bytes[, stream]) */
	GS_CUDA_ALLOC_HOST,    /* pinned host memory */
	GS_CUDA_ALLOC_MANAGED, /* (void **out, bytes, flags) */
	GS_CUDA_FREE_DEVICE,   /* (ptr[, stream]) */
	GS_CUDA_FREE_HOST,
	GS_CUDA_SYNC_DEVICE,	   /* () */
	GS_CUDA_SYNC_STREAM,	   /* (stream) */
	GS_CUDA_SYNC_EVENT,	   /* (event) */
	GS_CUDA_STREAM_WAIT_EVENT, /* (stream, event, flags) */
};

enum gs_cuda_op {
	GS_CUDA_OP_LAUNCH,
	GS_CUDA_OP_GRAPH,
	GS_CUDA_OP_NAMING,
	GS_CUDA_OP_MEMCPY,
	GS_CUDA_OP_MEMSET,
	GS_CUDA_OP_ALLOC,
	GS_CUDA_OP_FREE,
	GS_CUDA_OP_SYNC,
};

/* cudaMemcpyKind's values; the driver's fixed-direction copies map onto them. */
enum gs_copy_kind {
	GS_COPY_HTOH = 0,
	GS_COPY_HTOD = 1,
	GS_COPY_DTOH = 2,
	GS_COPY_DTOD = 3,
	GS_COPY_DEFAULT = 4, /* unified addressing: the pointers tell */
	GS_COPY_NKINDS = 5,
};

enum gs_mem_kind {
	GS_MEM_DEVICE = 0,
	GS_MEM_PINNED = 1,
	GS_MEM_MANAGED = 2,
	GS_MEM_NKINDS = 3,
};

struct gs_cuda_probe {
	const char *name;
	bool runtime; /* libcudart; else libcuda */
	enum gs_cuda_class cls;
};

/* What a call record means, decoded from its probe's class; unused fields are zero. */
struct cuda_call_info {
	const struct gs_cuda_probe *probe;
	enum gs_cuda_op op;
	/* launches: host stub, CUfunction or CUkernel; graphs: the exec; naming calls: the
	 * handle named or made (0 when the call failed) */
	uint64_t func;
	uint32_t grid[3], block[3];
	uint64_t shmem;
	uint64_t stream;
	bool has_stream;
	uint64_t bytes; /* copies, memsets, allocations */
	enum gs_copy_kind copy_kind;
	uint64_t dst, src; /* copies */
	uint64_t ptr;	   /* memsets, allocations (the returned pointer), frees */
	enum gs_mem_kind mem_kind;
	uint64_t event; /* event syncs and waits */
};

extern const struct gs_cuda_probe gs_cuda_probes[];
extern const unsigned gs_cuda_nprobes;

/* The probe at `index`, or NULL when out of range (a newer trace). */
const struct gs_cuda_probe *cuda_probe(unsigned index);
/* Index of the probe named `name`, or -1. */
int cuda_probe_find(const char *name);
/* GS_CUDA_CAP_* bits BPF needs for this probe. */
uint32_t cuda_probe_capture(const struct gs_cuda_probe *p);
/* Decodes a call; false when its probe index is unknown. */
bool cuda_call_decode(const struct gs_cuda_call *c, struct cuda_call_info *info);
/* Whether a decoded call failed: its return value, as the C enum it is, is not success. */
bool cuda_call_failed(const struct gs_cuda_call *c, const struct cuda_call_info *info);
/* cudaError_t / CUresult name for a call's return value ("cudaErrorInvalidValue",
 * "CUDA_ERROR_NOT_FOUND"), or a numeric fallback written into buf. */
const char *cuda_error_name(bool runtime, int64_t code, char *buf, size_t len);
const char *cuda_copy_kind_name(enum gs_copy_kind kind); /* "Host-to-Device", ... */
const char *cuda_mem_kind_name(enum gs_mem_kind kind);	 /* "device", "pinned", "managed" */

#endif /* GPUSPY_CUDA_API_H */
