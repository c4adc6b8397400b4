/* SPDX-License-Identifier: MIT */
/*
 * The GPU's side of a step: how long a process's GPU work (kernels, copies, memsets on any of
 * its devices and streams, their union) ran within a time window, and its longest kernel there.
 */
#ifndef GPUSPY_STEP_GPU_H
#define GPUSPY_STEP_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "output/model/trace_model.h"

struct busy_span {
	uint32_t pid;
	uint64_t start, end;
};

struct step_gpu {
	const struct trace_model *m;
	struct busy_span *busy; /* merged per process, by (pid, start) */
	size_t nbusy;
	uint32_t *ops; /* gpu.ops[] indices of GPU work, by (pid, ts) */
	size_t nops;
};

/* 0, or -1 when out of memory. */
int step_gpu_init(struct step_gpu *g, const struct trace_model *m);
/* Whether the process ran any GPU work in the recording. */
bool step_gpu_has(const struct step_gpu *g, uint32_t pid);
/* Busy time of the process's GPU work within [start, end). */
uint64_t step_gpu_busy(const struct step_gpu *g, uint32_t pid, uint64_t start, uint64_t end);
/* The name of the kernel that ran longest within [start, end) (its runs summed), in buf
 * or not; "a kernel" when none. */
const char *step_gpu_top_kernel(const struct step_gpu *g, uint32_t pid, uint64_t start,
				uint64_t end, char *buf, size_t len);
void step_gpu_free(struct step_gpu *g);

#endif /* GPUSPY_STEP_GPU_H */
