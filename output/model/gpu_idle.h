/* SPDX-License-Identifier: MIT */
/*
 * Why the GPU was idle: for each GPU-idle gap of a process's device, what each of that
 * process's threads spent most of the gap in — a CUDA API call, a syscall span or an off-CPU
 * interval (the spans the model does not keep: the trace is read again, keeping only what
 * overlaps the gaps asked about, so memory does not grow with the trace).
 */
#ifndef GPUSPY_GPU_IDLE_H
#define GPUSPY_GPU_IDLE_H

#include <stddef.h>
#include "output/model/gpu_busy.h"
#include "output/model/trace_model.h"

/* For gaps[0..n), sets hosts[i] to a malloc'd summary such as "1234 python:
 * cudaStreamSynchronize 90%; 1240 worker: read 60%" ("" when no thread had a span in it).
 * 0, or -1 (out of memory, or the trace became unreadable) with hosts[] all freed. */
int gpu_idle_attribute(const struct trace_model *m, const struct gpu_gap *gaps, size_t n,
		       char **hosts);

#endif /* GPUSPY_GPU_IDLE_H */
