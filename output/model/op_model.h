/* SPDX-License-Identifier: MIT */
/*
 * The PyTorch operator part of the trace model: every operator call (GS_REC_OP_CALL, one per
 * at::_ops::<op>::call that returned while traced) with its name (GS_REC_OP_NAME), nested per
 * thread once the whole file is read:
 *
 *   self CPU   = the call's duration minus its direct children's on the same thread
 *   Self CUDA  = GPU time of the kernels, copies and memsets launched while it was the
 *                innermost operator of its thread (the launch is the CUDA call gpu_join.c
 *                joined the GPU record to, or CUPTI's API record when no uprobe span joined)
 *   CUDA total = GPU time of those launched anywhere inside it
 *
 * as torch.profiler's key_averages() defines them. Calls are kept one by one (64 bytes each)
 * for reports that group them and for the timeline.
 *
 * The in-process observer (GS_REC_TORCH_OP and GS_REC_TORCH_NAME, docs/TORCH_OBSERVER.md)
 * gives the same calls from inside the process: op_torch.c pairs each start with its end per
 * thread, and each pair becomes an op_call like an OP_CALL's, plus what only the observer knows
 * (struct op_torch, 24 bytes, for its calls only: sequence number, forward thread, scope, input
 * shapes, the backward op linked). Every RecordFunction is a call then, not only at::_ops:
 * autograd nodes, the engine's evaluate_function ranges, user ranges. A process with both kinds
 * of records would have its operators counted twice, so there the in-process calls win: all its
 * OP_CALL records are left out, those from before the observer was on included
 * (uprobe_calls_ignored says how many).
 */
#ifndef GPUSPY_OP_MODEL_H
#define GPUSPY_OP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/key_index.h"
#include "lib/string_pool.h"
#include "output/model/op_torch.h"
#include "output/trace/trace_format.h"

struct gpu_model;

/* One operator call. What a timeline needs: ts, dur, pid, tid, op_model_name(op), depth. */
struct op_call {
	uint64_t ts, dur;	/* CLOCK_MONOTONIC ns: entry, and entry to return (start to end) */
	uint64_t self_ns;	/* dur minus the direct children's durations */
	uint64_t self_cuda_ns;	/* see above */
	uint64_t cuda_total_ns; /* see above */
	uint32_t pid, tid;
	uint32_t op;	 /* its name: op_model_name(); a names id once op_model_finish() ran */
	uint32_t parent; /* calls[] index of the call it ran inside on its thread, or OP_NONE */
	uint16_t depth;	 /* operator calls open around it on the thread, as BPF counted them */
	uint16_t flags;	 /* GS_CUDA_NESTED: inside another operator call */
	uint32_t torch;	 /* an in-process call: its torch[] index; OP_NONE for an OP_CALL */
};

/* Calls per process of each kind, for the rule above. */
struct op_pid_calls {
	uint32_t pid;
	uint32_t load_outcome; /* the observer's GS_REC_BRIDGE_LOAD (flag TORCH), 0: none */
	uint64_t uprobe, inprocess;
	char *load_message; /* how it was loaded, or why not and what was used instead */
};

struct op_model {
	/* operator index -> its name: a hash, since the index is a record's u32 and an array
	 * sized by it would let one record of a file ask for 32 GiB */
	struct string_pool names;
	struct key_index ix_names; /* operator index -> names id */
	struct op_call *calls;	   /* sorted by (pid, tid, ts) after op_model_finish() */
	size_t ncalls, calls_cap;
	uint64_t calls_seen; /* calls (OP_CALLs, in-process start/end pairs; of a process with both,
			      * its in-process ones), kept in calls[] or only counted */
	uint64_t gpu_ops_inside;     /* GPU records launched inside some operator */
	struct key_index ix_threads; /* (pid, tid) -> first calls[] index of the thread */

	/* the in-process observer's calls */
	struct op_torch *torch; /* indexed by op_call.torch */
	size_t ntorch, torch_cap;
	struct op_torch_reader reader; /* its records paired, while the file is read */
	struct op_pid_calls *pids;
	size_t npids, pids_cap;
	struct key_index ix_pids;      /* pid -> pids[] */
	uint64_t uprobe_calls_ignored; /* OP_CALLs of processes that have in-process calls */
	uint64_t calls_with_shapes;    /* calls with input shapes (named) */
	uint32_t unknown_name;	       /* names id of "<unknown operator>" after finish */
};

/* Whether op_model_apply() takes this record: also the PyTorch observer's GS_REC_BRIDGE_LOAD
 * (GS_BRIDGE_LOAD_TORCH), how each process's operators were recorded. */
bool op_model_takes(const struct gs_hdr *h);
/* Takes GS_REC_OP_CALL, GS_REC_OP_NAME, GS_REC_TORCH_OP and GS_REC_TORCH_NAME in file order;
 * 0, or -1 when out of memory. Without `keep_calls` a call is only counted. */
int op_model_apply_only(struct op_model *om, const struct gs_hdr *h, bool keep_calls);
int op_model_apply(struct op_model *om, const struct gs_hdr *h);
/* After the last record and gpu_model_finish(): drops the OP_CALLs of processes with in-process
 * calls, names every call, sorts, nests, attributes GPU time, links forward to backward ops.
 * 0, or -1 when out of memory. */
int op_model_finish(struct op_model *om, const struct gpu_model *g);
void op_model_free(struct op_model *om);

/* A call's name ("aten::addmm"), or "<unknown operator>" when the trace lacks it: `op` is an
 * op_call's op (after op_model_finish()). */
const char *op_model_name(const struct op_model *om, uint32_t op);
/* What the in-process observer recorded of a call, or NULL for an OP_CALL's. */
const struct op_torch *op_model_torch(const struct op_model *om, const struct op_call *c);
/* A call's input shapes text, or NULL when none was recorded. */
const char *op_model_shapes(const struct op_model *om, const struct op_call *c);
/* The innermost call of thread (pid, tid) running at `ts`, or NULL. */
const struct op_call *op_model_call_at(const struct op_model *om, uint32_t pid, uint32_t tid,
				       uint64_t ts);

#endif /* GPUSPY_OP_MODEL_H */
