/* SPDX-License-Identifier: MIT */
/*
 * GPU memory accounting in file order: successful allocations and frees per (process, kind),
 * the live blocks, and the peak of what was outstanding. The trace model keeps one for the
 * reports; the Chrome exporter replays one for its memory counter track.
 */
#ifndef GPUSPY_GPU_MEM_H
#define GPUSPY_GPU_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/key_index.h"
#include "output/model/gpu/mem_blocks.h"
#include "output/trace/cuda_api.h"

struct gpu_mem_kind_usage {
	uint64_t allocs, frees, unknown_frees;
	uint64_t alloc_bytes, freed_bytes, outstanding_bytes, peak_bytes;
};

struct gpu_mem_usage {
	uint32_t pid;
	struct gpu_mem_kind_usage kind[GS_MEM_NKINDS];
};

struct gpu_mem {
	struct mem_blocks blocks;
	struct gpu_mem_usage *usage; /* one per process that allocated or freed */
	size_t nusage, usage_cap;
	struct key_index ix_usage;
};

/* Feeds one decoded, successful, outermost call; calls that are neither an allocation nor a
 * free are ignored. Returns the process's usage when the call changed it, NULL otherwise;
 * sets *oom when memory ran out. */
const struct gpu_mem_usage *gpu_mem_apply(struct gpu_mem *g, const struct gs_cuda_call *c,
					  const struct cuda_call_info *info, bool *oom);
/* Resolves GS_COPY_DEFAULT against the device blocks live now; other kinds pass through. */
enum gs_copy_kind gpu_mem_copy_kind(const struct gpu_mem *g, uint32_t pid,
				    const struct cuda_call_info *info);
/* Drops the blocks and usage of the processes `gone` says have exited, for live views that run
 * for hours. 0, or -1 when out of memory (some may then remain). */
int gpu_mem_forget(struct gpu_mem *g, bool (*gone)(uint32_t pid, void *ctx), void *ctx);
void gpu_mem_free(struct gpu_mem *g);

#endif /* GPUSPY_GPU_MEM_H */
