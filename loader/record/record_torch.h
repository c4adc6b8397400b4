/* SPDX-License-Identifier: MIT */
/*
 * How each traced process's PyTorch operators are seen (--ops): by gpuspy's in-process
 * observer (loader/bridge/torch_observer.h), loaded into the process like the CUPTI bridge, or
 * by uprobes on at::_ops::<op>::call (loader/probes/op_probes.h). Each process that maps a
 * libtorch gets one GS_REC_BRIDGE_LOAD record flagged GS_BRIDGE_LOAD_TORCH: the observer
 * loaded, present, or why not, and then (auto) whether uprobes took over.
 */
#ifndef GPUSPY_RECORD_TORCH_H
#define GPUSPY_RECORD_TORCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "loader/bridge/bridge_inject.h"
#include "loader/record/recorder.h"

/* The operator libraries `pid` maps now: at the attach (`held` false: the observer is loaded
 * by recorder_load_torch() once the probes are live), or while BPF holds it after ld.so mapped
 * new libraries (`held`: the load is queued on the late worker, since the import that mapped
 * libtorch is still under way). 0, or -errno as op_probes_scan() returns it. */
int recorder_scan_ops(struct recorder *r, pid_t pid, bool held);
/* Loads the observer into the processes found at the attach, then waits (up to a second and
 * a half) until each observer started says its recording is on, so that "recording" means
 * their operators are recorded. 0 or a write error. */
int recorder_load_torch(struct recorder *r);
/* A late load's outcome (late_bridges.h): recorded; the observer turned on, or uprobes. */
int recorder_finish_torch_load(struct recorder *r, pid_t pid,
			       const struct bridge_inject_result *res);
/* `pid` ran exec: what was decided for its old program is forgotten. */
void recorder_torch_exec(struct recorder *r, pid_t pid);
/* Exited processes: forgotten, so a pid handed out again is a new process. */
void recorder_forget_torch(struct recorder *r, const struct pid_list *dead);
void recorder_free_torch(struct recorder *r);

#endif /* GPUSPY_RECORD_TORCH_H */
