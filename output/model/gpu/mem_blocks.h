/* SPDX-License-Identifier: MIT */
/*
 * The live GPU allocations of every traced process, ordered by (pid, address): a free finds
 * its block by exact address, and a cudaMemcpyDefault copy asks which block, if any, holds a
 * pointer that may point into the middle of one. A treap keeps both O(log n) however many
 * blocks a leaking program accumulates.
 */
#ifndef GPUSPY_MEM_BLOCKS_H
#define GPUSPY_MEM_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>

struct mem_block {
	uint32_t pid;
	uint16_t kind;	/* enum gs_mem_kind */
	uint16_t probe; /* the allocating function, an index in gs_cuda_probes[] */
	uint64_t addr, bytes;
	uint64_t ts; /* when the allocation returned */
};

struct mem_node;

struct mem_blocks {
	struct mem_node *nodes; /* nodes[0] is the null node */
	uint32_t n, cap, root, free_list, count;
	uint64_t seed;
};

/* Inserts `b`, replacing a block at the same (pid, addr); 0, or -1 when out of memory. */
int mem_blocks_put(struct mem_blocks *s, const struct mem_block *b);
/* Removes the block that starts at (pid, addr) into *out; false when there is none. */
bool mem_blocks_take(struct mem_blocks *s, uint32_t pid, uint64_t addr, struct mem_block *out);
/* The block of `pid` that contains `addr`, or NULL. */
const struct mem_block *mem_blocks_find(const struct mem_blocks *s, uint32_t pid, uint64_t addr);
/* Calls fn on every block in (pid, address) order; stops at fn's first nonzero return. */
int mem_blocks_each(const struct mem_blocks *s, int (*fn)(const struct mem_block *, void *),
		    void *arg);
void mem_blocks_free(struct mem_blocks *s);

#endif /* GPUSPY_MEM_BLOCKS_H */
