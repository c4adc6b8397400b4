/* SPDX-License-Identifier: MIT */
/* Kernel names in the CUDA model: bound by name records, aliases and the driver launch nested in
 * a runtime launch, resolved after the last record; and looked up by launch. */
#ifndef GPUSPY_CUDA_KERNELS_H
#define GPUSPY_CUDA_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "output/model/gpu/cuda_model_types.h"
#include "output/trace/trace_format.h"

/* The kernel a launch of `func` ran, by the launch's own handle, else by `inner` (the driver
 * launch inside a runtime launch); NULL when neither is named. */
const struct cuda_name *cuda_model_kernel(const struct cuda_model *cm, uint32_t pid, uint64_t func,
					  uint64_t inner);
/* The display name of a launch whose kernel is not known: "<unknown kernel 0x...>", or
 * "<graph 0x...>" for a graph launch. */
void cuda_kernel_placeholder(char *buf, size_t len, bool graph, uint64_t handle);

/* For cuda_model.c, as records come and after the last one. */
int cuda_kernels_on_name(struct cuda_model *cm, const struct gs_cuda_name *n);
int cuda_kernels_on_alias(struct cuda_model *cm, const struct gs_cuda_call *c);
int cuda_kernels_on_pair(struct cuda_model *cm, uint32_t pid, uint64_t inner, uint64_t func);
int cuda_kernels_finish(struct cuda_model *cm);
void cuda_kernels_free(struct cuda_model *cm);

#endif /* GPUSPY_CUDA_KERNELS_H */
