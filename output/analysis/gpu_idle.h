/* SPDX-License-Identifier: MIT */
/*
 * Why the GPU was idle: for each GPU-idle gap of a process's device, what the thread that
 * launches its GPU work did in the gap, sorted as the steps' time is (step_time.h): on CPU at
 * which Python function (from the CPU samples), in which CUDA call, blocked in which syscall
 * on which file. The launching thread, not the process's other threads: a helper sleeping
 * meanwhile is not why the GPU waits.
 */
#ifndef GPUSPY_GPU_IDLE_H
#define GPUSPY_GPU_IDLE_H

#include <stddef.h>
#include "output/model/gpu_busy.h"
#include "output/model/trace_model.h"

/* For gaps[0..n), sets hosts[i] to a malloc'd summary such as "thread 1234 (python3):
 * host_compute on CPU at preprocess (train.py:33) 91%; sync_wait cudaDeviceSynchronize at
 * train (train.py:47) 8%" ("" when nothing was seen of the thread in the gap). 0, or -1 (out
 * of memory, or the trace became unreadable) with hosts[] all freed. */
int gpu_idle_attribute(const struct trace_model *m, const struct gpu_gap *gaps, size_t n,
		       char **hosts);

#endif /* GPUSPY_GPU_IDLE_H */
