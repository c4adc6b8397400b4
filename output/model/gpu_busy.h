/* SPDX-License-Identifier: MIT */
/*
 * When the GPU was busy: the union of the kernel, copy and memset intervals of each process on
 * each of its devices and streams, clipped to the recording, and the idle gaps between them.
 * Device indexes are the process's own (CUDA_VISIBLE_DEVICES renumbers them and the records
 * carry no device UUID), so a device is always taken per process.
 */
#ifndef GPUSPY_GPU_BUSY_H
#define GPUSPY_GPU_BUSY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "output/model/trace_model.h"

/* A device of a process (all_streams) or one of its streams. */
struct gpu_lane {
	uint32_t pid, device, stream;
	bool all_streams;
	uint64_t busy_ns, ops;
};

/* An idle interval between two busy ones on a device of a process. */
struct gpu_gap {
	uint32_t pid, device;
	uint64_t start, len;
};

/* The recording's time span: its start and end records, else the GPU work's own span. */
void gpu_busy_window(const struct trace_model *m, uint64_t *start, uint64_t *end);
/* Each device of each process followed by its streams; 0, or -1 when out of memory. */
int gpu_busy_lanes(const struct trace_model *m, struct gpu_lane **lanes, size_t *n);
/* Every gap, in (pid, device, start) order; 0, or -1 when out of memory. */
int gpu_busy_gaps(const struct trace_model *m, struct gpu_gap **gaps, size_t *n);

#endif /* GPUSPY_GPU_BUSY_H */
