/* SPDX-License-Identifier: MIT */
/*
 * Loading gpuspy's CUPTI bridge into a CUDA process that is already running (it was not
 * started with CUDA_INJECTION64_PATH): one thread is stopped with ptrace at a syscall boundary
 * where no loader or allocator lock can be held by it (and none of ld.so's is held by any
 * thread), dlopen() from the process's own libc loads the bridge and gpuspy_bridge_load_late()
 * starts its control thread, then the thread is restored exactly and goes on (remote_call.h:
 * each call returns through a frame that restores it even if gpuspy dies meanwhile). CUPTI is
 * switched on later by the bridge's own thread, once gpuspy's probe raises its gate, never in the
 * borrowed thread.
 */
#ifndef GPUSPY_BRIDGE_INJECT_H
#define GPUSPY_BRIDGE_INJECT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bridge_inject_result {
	uint32_t outcome;  /* enum gs_bridge_load_outcome (trace_format.h) */
	int err;	   /* -errno behind a refusal or failure */
	pid_t tid;	   /* the thread that made the call, 0 if none */
	uint64_t pause_ns; /* how long that thread was held, from its first stop to its release */
	uint64_t wait_ns;  /* of which spent waiting for it to reach a safe point */
	uint64_t released_ns; /* when it was let go (CLOCK_MONOTONIC), 0 if never stopped */
	char message[320];
};

/* What is loaded and how it is started: after the dlopen, `entry(args...)` is called in the
 * same thread with `blob` copied onto its stack (args[i] with bit i of `blob_args` set is an
 * offset into the blob, made its address), and must set the int32_t at `started_off` in the
 * blob to 1 once started; a library that says no may write a one-line reason, NUL-terminated,
 * at `why_off` (`why_len` bytes at most; 0: none). */
struct inject_lib {
	const char *path;  /* valid in gpuspy's filesystem and, checked, in the process's */
	const char *entry; /* exported by the library */
	const char *what;  /* for messages: "the CUPTI bridge" */
	bool cuda;	   /* left to CUDA_INJECTION64_PATH where the process names one */
	const void *blob;
	size_t blob_len;
	uint64_t args[6];
	unsigned blob_args;
	size_t started_off;
	size_t why_off, why_len;
	uint32_t refused_outcome; /* the outcome when it gave a reason (0: failed) */
	uint64_t sample_phase_ns; /* how long /proc is sampled for a blocked thread before the
				   * main thread is followed (0: 1.5 s) */
};

/* The CUPTI bridge at `bridge`: gpuspy_bridge_load_late(&started). */
void inject_lib_cupti(struct inject_lib *lib, const char *bridge);

/* Called with exempt = true just before the thread loads the bridge, and false once it is
 * released: BPF's ld.so hold must not stop the process for a dlopen gpuspy itself makes. */
typedef void (*bridge_inject_hold_fn)(void *ctx, pid_t tid, bool exempt);

/* Loads `lib` into `pid`; `named`: the user named the process (-p), which lifts the refusal of
 * setuid and non-dumpable processes. Everything is in *res; the process is left as it was unless
 * the outcome is GS_BRIDGE_LOAD_INJECTED (or a dlopen that did not return in time is left to
 * finish: GS_BRIDGE_LOAD_FAILED, -ETIMEDOUT). */
void bridge_inject(pid_t pid, const struct inject_lib *lib, bool named, bridge_inject_hold_fn hold,
		   void *ctx, struct bridge_inject_result *res);

#endif /* GPUSPY_BRIDGE_INJECT_H */
