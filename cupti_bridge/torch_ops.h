/* SPDX-License-Identifier: MIT */
/*
 * gpuspy's in-process PyTorch operator observer (build/libgpuspy_torch.so): the interface the
 * loader (or a test harness) calls inside a process that has libtorch mapped. It registers a
 * global at::RecordFunction callback pair through libtorch's exported entry points, whose
 * addresses the caller resolves and passes in, and keeps compact per-thread records of every
 * operator start and end while enabled. docs/TORCH_OBSERVER.md gives the ABI facts it rests on.
 *
 * Lifecycle: gpuspy_torch_ops_init() once (checks the library's version and layout, refuses
 * anything else with a one-line reason); then any number of enable/disable pairs; the records
 * are taken out with gpuspy_torch_ops_read() at any time, from any thread. Nothing is
 * registered with libtorch, and nothing allocated, before the first enable.
 */
#ifndef GPUSPY_TORCH_OPS_H
#define GPUSPY_TORCH_OPS_H

#include <stddef.h>
#include <stdint.h>

#define TORCH_OPS_EXPORT __attribute__((visibility("default")))

/* Addresses of libtorch's functions in this process (the mangled names in brackets). */
struct gpuspy_torch_syms {
	const void
	    *add_global_callback;    /* at::addGlobalCallback(at::RecordFunctionCallback)
				      * [_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE] */
	const void *remove_callback; /* at::removeCallback(unsigned long)
				      * [_ZN2at14removeCallbackEm] */
	const void *rf_name;	     /* at::RecordFunction::name() const
				      * [_ZNK2at14RecordFunction4nameEv] */
	const void *rf_is_async;     /* at::RecordFunction::isAsync() const
				      * [_ZNK2at14RecordFunction7isAsyncEv] */
};

enum gpuspy_torch_op_kind {
	GPUSPY_TORCH_OP_START = 1,
	GPUSPY_TORCH_OP_END = 2,
};

#define GPUSPY_TORCH_OP_ASYNC 1 /* flags: RecordFunction::isAsync() */
/* Longest input shapes text: a longer one is not recorded (no shapes), rather than cut on the
 * wire (bpf/records.h's GS_GPU_NAME_MAX, NUL included, limits a GS_REC_TORCH_NAME). */
#define GPUSPY_TORCH_SHAPES_TEXT_MAX 1023

/* One operator start or end. An end is kept only when its start was (same thread, same
 * session), so starts and ends nest per thread; a start whose end came after the disable has
 * no end. 32 bytes: the last word is packed so that the shapes id fits (ids stay below
 * 2^24, NAMES_MAX). */
struct gpuspy_torch_op {
	uint64_t ts;	  /* CLOCK_MONOTONIC ns */
	int64_t seq_nr;	  /* RecordFunction::seqNr(): links a backward op to its forward, -1 none */
	uint32_t tid;	  /* kernel thread id */
	uint32_t name_id; /* gpuspy_torch_ops_name(name_id); 0: no name */
	uint32_t fwd_tid; /* forwardThreadId(): torch's logical id of the forward thread, 0 none */
	uint32_t kind : 2;  /* enum gpuspy_torch_op_kind */
	uint32_t flags : 2; /* GPUSPY_TORCH_OP_* */
	uint32_t scope : 4; /* at::RecordScope (10 of them): 0 FUNCTION, 1 BACKWARD_FUNCTION, ... */
	uint32_t shapes : 24; /* start only, input shapes recorded: the id of their text
			       * (gpuspy_torch_ops_name), "[[16, 3, 16, 16], [8], [], []]" as
			       * torch.profiler's record_shapes=True writes it; 0 none */
};
_Static_assert(sizeof(struct gpuspy_torch_op) == 32, "gpuspy_torch_op is 32 bytes");

struct gpuspy_torch_stats {
	uint64_t recorded;  /* records written */
	uint64_t dropped;   /* records that found their thread's buffer full */
	uint64_t no_buffer; /* records lost because a thread's buffer could not be allocated */
	uint32_t names;	    /* distinct names interned */
	uint32_t buffers;   /* per-thread buffers allocated */
	uint32_t enables;   /* successful enables so far */
	uint32_t shapes_on; /* the registration asks libtorch for inputs (this enable's shapes) */
	uint64_t pending;   /* records in the rings, not read yet */
	uint64_t no_shapes; /* starts recorded with shapes on but without them: too many inputs
			     * or dimensions, custom or symbolic sizes, inputs not boxed, the
			     * table full */
};

/* 0, or -1 with a one-line reason (no trailing newline) in why: an unknown libtorch version
 * or layout, a missing address. Idempotent once it succeeded. */
TORCH_OPS_EXPORT int gpuspy_torch_ops_init(const struct gpuspy_torch_syms *syms, char *why,
					   size_t why_len);
/* Registers the callbacks (at::addGlobalCallback) and turns recording on: 0, or -1 (not
 * initialised). A second enable while enabled does nothing. */
TORCH_OPS_EXPORT int gpuspy_torch_ops_enable(void);
/* Turns recording off, then unregisters (at::removeCallback). Callbacks libtorch already
 * handed to a running operator still arrive and find recording off. */
TORCH_OPS_EXPORT void gpuspy_torch_ops_disable(void);
/* While enabled: 0 keeps the callbacks registered but has them return at once, 1 records
 * again. What a registered observer costs libtorch by itself (bench/observer_bench.sh's
 * floor); a recorder that goes away uses disable. */
TORCH_OPS_EXPORT void gpuspy_torch_ops_set_recording(int on);
/* Input shapes (torch.profiler's record_shapes) for the next enable: 1 asks libtorch for each
 * operator's inputs (needs_inputs: it boxes them, which costs) and records their shapes, 0 (the
 * default) does not. A change while enabled takes effect at the next enable. 0, or -1 when
 * this libtorch's tensors cannot be read (operators are still recorded, without shapes). */
TORCH_OPS_EXPORT int gpuspy_torch_ops_set_shapes(int on);
/* Moves up to max records, oldest first per thread, into out: how many. */
TORCH_OPS_EXPORT size_t gpuspy_torch_ops_read(struct gpuspy_torch_op *out, size_t max);
/* The interned name of an id from a record, NULL if there is none; valid until exit. */
TORCH_OPS_EXPORT const char *gpuspy_torch_ops_name(uint32_t id);
TORCH_OPS_EXPORT void gpuspy_torch_ops_stats(struct gpuspy_torch_stats *out);

/* Not exported: torch_send.c's fork handler. In a forked child, recording off and the locks
 * usable again; the callbacks stay registered (libtorch's own lock may be held) and return at
 * once. */
void torch_ops_after_fork_child(void);
/* Not exported: why input shapes are not available, NULL if they are (after init). */
const char *torch_ops_shapes_why(void);

#endif
