/* SPDX-License-Identifier: MIT */
/*
 * Pairs a runtime kernel launch with the driver launch it made. A runtime launch carries a
 * host stub, which is named only when __cudaRegisterFunction or the ELF symbol table named
 * it; the driver's cuLaunchKernel inside it carries the CUfunction, named by
 * cuModuleGetFunction or cuLibraryGetKernel + cuKernelGetFunction. Records are written at
 * return, so the nested driver launch comes first: each thread's last one is kept until its
 * outer call arrives.
 */
#ifndef GPUSPY_CUDA_NESTING_H
#define GPUSPY_CUDA_NESTING_H

#include <stddef.h>
#include <stdint.h>
#include "lib/key_index.h"
#include "output/trace/cuda_api.h"

struct cuda_nested_launch {
	uint64_t ts, end, func;
};

struct cuda_nesting {
	struct cuda_nested_launch *last; /* per thread */
	size_t n, cap;
	struct key_index ix; /* (pid, tid) -> last[] */
};

/* Feed every call record in file order. For a runtime launch, returns the function handle of
 * the driver launch made inside it on the same thread, or 0; sets *oom when memory ran out. */
uint64_t cuda_nesting_feed(struct cuda_nesting *n, const struct gs_cuda_call *c,
			   const struct cuda_call_info *info, bool *oom);
void cuda_nesting_free(struct cuda_nesting *n);

#endif /* GPUSPY_CUDA_NESTING_H */
