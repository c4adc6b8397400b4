/* SPDX-License-Identifier: MIT */
/*
 * The GPU part of the trace model: the CUPTI bridge's records (bpf/records.h, GS_REC_GPU_*),
 * gathered in the model's pass (gpu_model.c) and joined once the whole file is read
 * (gpu_finish.c):
 *
 *   GPU record (kernel, copy, memset, sync) --(pid, correlation id)--> GS_REC_GPU_API record
 *   GS_REC_GPU_API record --(pid, thread, time)--> outermost GS_REC_CUDA_CALL uprobe span
 *
 * The second link needs the uprobe spans, which the model does not keep: gpu_join.c reads the
 * file a second time. Nothing that fails to join is dropped: it is counted and listed.
 */
#ifndef GPUSPY_GPU_MODEL_H
#define GPUSPY_GPU_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/exact_stats.h"
#include "lib/key_index.h"
#include "lib/string_pool.h"
#include "output/trace/trace_format.h"

#define GPU_NONE UINT32_MAX
/* The CUPTI bridge's control thread in every process it is loaded in (cupti_bridge/bridge.c
 * names it): gpuspy's own work, not the program's. */
#define GPU_BRIDGE_THREAD_NAME "gpuspy-cupti"

enum gpu_op_kind {
	GPU_OP_KERNEL,
	GPU_OP_MEMCPY,
	GPU_OP_MEMSET,
	GPU_OP_SYNC, /* CUPTI's record of a host wait: not GPU work */
	GPU_OP_NKINDS,
};

/* Rows of the memory-operation summaries: every CUPTI copy kind, then memsets. */
#define GPU_MEM_MEMSET_ROW (GS_GPU_COPY_PTOP + 1)
#define GPU_MEM_ROWS	   (GPU_MEM_MEMSET_ROW + 1)

/* One GPU record, with what the join found for it. */
struct gpu_op {
	uint64_t ts, dur;
	uint64_t bytes; /* copies and memsets */
	uint64_t graph_node_id;
	uint32_t pid, correlation, device, context, stream;
	uint32_t grid[3], block[3];
	uint32_t registers, static_smem, dynamic_smem, graph_id;
	uint32_t subkind;	     /* copies: enum gs_gpu_copy_kind; syncs: the CUPTI sync type */
	uint32_t src_kind, dst_kind; /* CUpti_ActivityMemoryKind; memsets: dst_kind */
	uint32_t name;		     /* kernels: the mangled name's pool id */
	uint32_t api;	     /* the GS_REC_GPU_API record of its correlation id, or GPU_NONE */
	uint32_t corr_seq;   /* its rank among the ops of that record (a graph's kernels) */
	uint32_t launch_tid; /* the thread that launched it; 0 unknown */
	uint8_t kind;	     /* enum gpu_op_kind */
};

/* A GS_REC_GPU_API record and the outermost uprobe span it joined (tier > 0). A trace may hold
 * millions of them: every byte here is a megabyte per million. */
struct gpu_api {
	uint64_t ts, dur;
	uint64_t call_ts, call_dur;
	uint32_t pid, tid, correlation, cbid, kind, name;
	int32_t ret;
	uint32_t call_tid;
	uint32_t ops; /* GPU records joined to it */
	uint16_t call_probe;
	uint8_t tier; /* 2: a call on the thread with CUPTI's thread id; 1: by time only; 0: none */
	bool probed;  /* a function gpuspy probes, so a uprobe span is expected */
};

struct gpu_status {
	uint64_t ts;
	uint32_t state; /* enum gs_bridge_state */
};

/* What the bridge said about one process, and its clock calibrations. */
struct gpu_proc {
	uint32_t pid;
	uint32_t seen;	  /* bit 1 << state for every enum gs_bridge_state reported */
	uint64_t ops;	  /* kernels, copies and memsets */
	uint64_t apis;	  /* CUPTI API records */
	uint64_t dropped; /* CUPTI's dropped records, cumulative: the largest reported */
	uint64_t lost;	  /* records the bridge could not batch, cumulative */
	uint64_t overhead_ns;
	uint64_t clock_error_ns;   /* the largest error bound of its calibrations */
	uint32_t clocks;	   /* calibrations */
	int32_t cupti_result;	   /* of the last failure reported */
	char *message;		   /* the last non-empty status message */
	struct gpu_status *status; /* sorted by time once loaded */
	size_t nstatus, status_cap;
	uint32_t load_outcome;	/* enum gs_bridge_load_outcome, 0: no GS_REC_BRIDGE_LOAD */
	uint64_t load_pause_ns; /* the thread's pause when gpuspy loaded the bridge */
	uint64_t load_wait_ns;	/* ... of which waiting for a safe point */
	char *load_message;
};

struct gpu_nvtx_group {
	uint32_t kind, name;
	struct exact_stats durs;
};

enum gpu_unmatched_kind {
	GPU_UNMATCHED_OP,     /* a GPU record whose correlation id has no API record */
	GPU_UNMATCHED_API,    /* an API record of a probed function that joined no uprobe span */
	GPU_UNMATCHED_LAUNCH, /* a uprobe launch with no GPU record while the bridge was active */
};

struct gpu_unmatched {
	uint32_t kind; /* enum gpu_unmatched_kind */
	uint32_t pid, tid, correlation;
	uint64_t ts;
	uint32_t ref; /* ops[] or apis[] index, or the launch's probe index */
};

/* Launches without a GPU record (only the join's second pass finds them); the unmatched GPU and
 * API records are not listed in the model, since there may be one per record: see
 * gpu_model_unmatched(). */
struct gpu_missed_launch {
	uint32_t pid, tid;
	uint64_t ts;
	uint16_t probe;
};

/* A GPU's properties as the bridge sent them (GS_REC_GPU_DEVICE), one per (process, device):
 * device indexes are a process's own (CUDA_VISIBLE_DEVICES renumbers them). */
struct gpu_device {
	uint32_t pid;
	/* the fixed part of the last record for it, a copy of its own: a struct that ends in a
	 * flexible array may not be a member (C11 6.7.2.1) */
	struct gs_gpu_device *rec;
	char *name;
};

struct pid_filter;

struct gpu_model {
	struct gpu_op *ops; /* in file order */
	size_t nops, ops_cap;
	struct gpu_api *apis;
	size_t napis, apis_cap;
	struct gpu_proc *procs; /* a process's index here is its ordinal in the exports */
	size_t nprocs, procs_cap;
	struct gpu_nvtx_group *nvtx;
	size_t nnvtx, nvtx_cap;
	struct gpu_missed_launch *missed;
	size_t nmissed, missed_cap;
	struct gpu_device *devices; /* in the order first seen */
	size_t ndevices, devices_cap;
	struct string_pool names;
	const struct pid_filter *filter; /* the processes the model was read for (NULL: all) */

	/* after gpu_model_finish() */
	struct exact_stats *kernel_durs; /* indexed by kernel name id */
	struct exact_stats mem_durs[GPU_MEM_ROWS], mem_bytes[GPU_MEM_ROWS];
	uint64_t counts[GPU_OP_NKINDS];
	uint64_t nvtx_records, records;
	uint64_t unmatched_counts[3]; /* by enum gpu_unmatched_kind */
	uint64_t unprobed_apis;	      /* API records of functions gpuspy does not probe */
	uint64_t max_clock_error_ns;
	bool has_clock;
	uint64_t loss_batches, loss_records, loss_gaps; /* the last GS_REC_GPU_LOSS */

	struct key_index ix_procs; /* pid -> procs[] */
	struct key_index ix_nvtx;  /* (kind, name) -> nvtx[] */
	/* apis[] indexes of the records that joined a uprobe call, by (pid, call tid, call ts):
	 * a sorted array, 4 bytes per joined record where a hash would take 48 */
	uint32_t *calls;
	size_t ncalls;
	struct key_index ix_contexts; /* (pid, context) -> device */
};

/* Whether gpu_model_apply() takes this record type. */
bool gpu_model_takes(uint16_t type);
/* Takes the GPU record types in file order; 0, or -1 when out of memory. */
int gpu_model_apply(struct gpu_model *g, const struct gs_hdr *h);
void gpu_model_free(struct gpu_model *g);

const struct gpu_proc *gpu_model_proc(const struct gpu_model *g, uint32_t pid);
/* The API record joined to the outermost uprobe call of (pid, tid) that started at ts. */
const struct gpu_api *gpu_model_call_api(const struct gpu_model *g, uint32_t pid, uint32_t tid,
					 uint64_t ts);
/* The properties of device `device` of process `pid`, or NULL when none were recorded. */
const struct gpu_device *gpu_model_device(const struct gpu_model *g, uint32_t pid, uint32_t device);
/* The device of a context, from the kernels and copies that ran in it (syncs carry none). */
uint32_t gpu_model_context_device(const struct gpu_model *g, uint32_t pid, uint32_t context);
/* What the GPU records lost, by kind; the kinds add up to gpu_model_loss_total(). */
enum gpu_loss_kind {
	GPU_LOSS_RECORDS,	/* records in batches the ring buffer could not take */
	GPU_LOSS_GAPS,		/* batches missing from a bridge's sequence (records unknown) */
	GPU_LOSS_CUPTI_DROPPED, /* CUPTI's dropped records, summed over processes */
	GPU_LOSS_BRIDGE_LOST,	/* records the bridge could not batch, summed over processes */
	GPU_LOSS_NKINDS,
};
uint64_t gpu_loss_count(const struct gpu_model *g, unsigned kind);
const char *gpu_loss_kind_name(unsigned kind);
uint64_t gpu_model_loss_total(const struct gpu_model *g);
/* The kernel name or the operation ("[CUDA memcpy Host-to-Device]", "[CUDA memset]") */
const char *gpu_op_name(const struct gpu_model *g, const struct gpu_op *op, char *buf, size_t len);
/* The mangled kernel name, or the same as gpu_op_name() for other operations. */
const char *gpu_op_mangled(const struct gpu_model *g, const struct gpu_op *op, char *buf,
			   size_t len);

#endif /* GPUSPY_GPU_MODEL_H */
