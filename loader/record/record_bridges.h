/* SPDX-License-Identifier: MIT */
/* The CUPTI bridge of each traced process: found at attach, loaded into running processes, and
 * into processes whose first CUDA call comes later. */
#ifndef GPUSPY_RECORD_BRIDGES_H
#define GPUSPY_RECORD_BRIDGES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "loader/bridge/bridge_inject.h"
#include "loader/record/recorder.h"

/* A target's CUDA libraries (gs_cuda_lib_role bits) were found at attach: its bridge is noted
 * as present, or it is queued for recorder_load_bridges(). 0 or -ENOMEM/write error. */
int recorder_note_cuda_process(struct recorder *r, pid_t pid, int roles);
/* A target whose maps gpuspy may not read (ptrace access refused): said and recorded. */
int recorder_note_unreadable(struct recorder *r, pid_t pid);
/* Loads the bridge into the queued processes (after the probes are attached). */
int recorder_load_bridges(struct recorder *r);
/* Starts loading the bridge into processes whose first CUDA call comes later (late_bridges.h),
 * unless --no-cupti, --no-inject or no bridge. 0 or -errno, said. */
int recorder_start_late_bridges(struct recorder *r);
/* The CUPTI bridge's or the PyTorch observer's load in `pid` (flags GS_BRIDGE_LOAD_TORCH for
 * the observer), recorded. 0 or a write error. */
int recorder_write_load(struct recorder *r, pid_t pid, uint32_t flags,
			const struct bridge_inject_result *res);
/* Whether the user named the process with -p (not only one of its descendants). */
bool recorder_named(const struct recorder *r, pid_t pid);
/* bridge_inject_hold_fn: BPF's ld.so hold spares the thread that loads a library of gpuspy's. */
void recorder_exempt_from_hold(void *ctx, pid_t tid, bool exempt);
/* What follows a bridge's load (at the attach, or a late one, late_bridges.h): the record, and
 * for a new bridge the scan that raises its gate. 0 or -errno. */
int recorder_finish_bridge_load(struct recorder *r, pid_t pid,
				const struct bridge_inject_result *res);

#endif /* GPUSPY_RECORD_BRIDGES_H */
