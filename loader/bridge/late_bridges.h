/* SPDX-License-Identifier: MIT */
/*
 * The CUPTI bridge for processes that start using CUDA while gpuspy is attached: a job
 * launched after `record -a`, `top` or `serve` started, a child a `-p` target spawns, a
 * Python process that initialises CUDA long after the attach. Processes that were already
 * CUDA processes at the attach are loaded by record_bridges.c before the loop starts. A
 * process is queued at the first CUDA call gpuspy sees that shows it using CUDA (one that
 * succeeded: the forked child of a CUDA process maps the driver too, but its calls fail) and
 * loaded LATE_BRIDGE_DELAY_NS later (cuInit is behind a call that succeeded; the delay lets
 * the program get on with its start-up, and spares those that end at once), on a worker
 * thread of its own: finding a safe point can take up to 2 s (bridge_inject.h), and the
 * recorder's loop must go on draining the ring buffer and serving live views meanwhile. One
 * process at a time; the loop takes the outcomes with late_bridges_take() and does the rest
 * (the trace record, the scan that opens the bridge's gate). A process whose environment
 * names a CUDA_INJECTION64_PATH already gets that library from the driver at cuInit, and is
 * left to it. The PyTorch observer (torch_observer.h) goes the same way for a process that
 * maps a libtorch after the attach (`import torch`, or a launched command), queued when ld.so
 * reports the library and loaded once the import is done (the load waits for ld.so's lock).
 */
#ifndef GPUSPY_LATE_BRIDGES_H
#define GPUSPY_LATE_BRIDGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "loader/bridge/bridge_inject.h"

#define LATE_BRIDGE_DELAY_NS 500000000ull
/* after a libtorch was mapped: its import is still under way (ld.so's lock held) and gets
 * waited out by the load itself */
#define LATE_TORCH_DELAY_NS 50000000ull

struct late_bridges;
struct pid_list;

struct late_bridge_outcome {
	pid_t pid;
	bool torch; /* the PyTorch observer's load, else the CUPTI bridge's */
	struct bridge_inject_result res;
};

/* Starts the worker; `bridge` or `torch` may be NULL (that library is not loaded). The calling
 * thread (the recorder's) has SIGCHLD blocked from now on, so the ptrace stops the worker waits for
 * wake it and no other thread. 0 or -errno. */
int late_bridges_new(const char *bridge, const char *torch, bridge_inject_hold_fn hold,
		     void *hold_ctx, struct late_bridges **out);
/* In each call `torch` says which library: the PyTorch observer (torch_observer.h), else the
 * CUPTI bridge. */
/* `pid` was dealt with at the attach (loaded, present, refused, skipped): never queued. */
int late_bridges_mark(struct late_bridges *lb, pid_t pid, bool torch);
/* Whether `pid` is neither queued nor dealt with, and that library is loaded at all: one hash
 * lookup, for every CUDA call. */
bool late_bridges_is_new(const struct late_bridges *lb, pid_t pid, bool torch);
/* `pid` made its first CUDA call that shows it using CUDA, or mapped a libtorch, at `now`
 * (CLOCK_MONOTONIC): queued unless it is gone already. 0 or -ENOMEM. */
int late_bridges_queue(struct late_bridges *lb, pid_t pid, bool torch, uint64_t now);
/* Whether a load is queued, under way or finished and not yet taken. */
bool late_bridges_busy(struct late_bridges *lb);
/* Moves up to `max` finished loads into `out`; their count. */
size_t late_bridges_take(struct late_bridges *lb, struct late_bridge_outcome *out, size_t max);
/* Stops the worker after the load under way, if any; queued processes are dropped. The
 * outcomes finished so far stay for late_bridges_take(). */
void late_bridges_stop(struct late_bridges *lb);
/* Exited processes: forgotten, so a pid handed out again is a new process. */
void late_bridges_forget(struct late_bridges *lb, const struct pid_list *dead);
/* Per-process entries kept (processes seen making CUDA calls, alive or not yet released). */
size_t late_bridges_tracked(const struct late_bridges *lb);
void late_bridges_free(struct late_bridges *lb);

#endif /* GPUSPY_LATE_BRIDGES_H */
