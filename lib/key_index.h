/* SPDX-License-Identifier: MIT */
/* An open-addressing hash from a 128-bit key to an array index, so the trace model finds a
 * thread, process or statistics entry in O(1) on host-wide traces. */
#ifndef GPUSPY_KEY_INDEX_H
#define GPUSPY_KEY_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct key_slot {
	uint64_t k1, k2;
	size_t idx; /* SIZE_MAX: empty */
};

struct key_index {
	struct key_slot *slots;
	size_t cap, n;
};

bool key_index_find(const struct key_index *ix, uint64_t k1, uint64_t k2, size_t *idx);
/* Inserts or overwrites; 0, or -1 when out of memory. */
int key_index_put(struct key_index *ix, uint64_t k1, uint64_t k2, size_t idx);
/* Removes a key (its value is the caller's); false when it was not there. */
bool key_index_remove(struct key_index *ix, uint64_t k1, uint64_t k2);
void key_index_free(struct key_index *ix);

#endif /* GPUSPY_KEY_INDEX_H */
