// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include "lib/key_index.h"

static size_t hash(uint64_t k1, uint64_t k2)
{
	uint64_t h = (k1 ^ (k2 * 0x9e3779b97f4a7c15ULL)) * 0xbf58476d1ce4e5b9ULL;

	return (size_t)(h ^ (h >> 31));
}

static struct key_slot *probe(const struct key_index *ix, uint64_t k1, uint64_t k2)
{
	size_t mask = ix->cap - 1;

	for (size_t i = hash(k1, k2) & mask;; i = (i + 1) & mask) {
		struct key_slot *s = &ix->slots[i];

		if (s->idx == SIZE_MAX || (s->k1 == k1 && s->k2 == k2))
			return s;
	}
}

bool key_index_find(const struct key_index *ix, uint64_t k1, uint64_t k2, size_t *idx)
{
	const struct key_slot *s;

	if (!ix->cap)
		return false;
	s = probe(ix, k1, k2);
	if (s->idx == SIZE_MAX)
		return false;
	*idx = s->idx;
	return true;
}

/* Keeps the load factor at most 1/2 so probes stay short and always find an empty slot. */
static int grow(struct key_index *ix)
{
	struct key_index bigger = {.cap = ix->cap ? ix->cap * 2 : 256};

	bigger.slots = malloc(bigger.cap * sizeof(*bigger.slots));
	if (!bigger.slots)
		return -1;
	for (size_t i = 0; i < bigger.cap; i++)
		bigger.slots[i].idx = SIZE_MAX;
	for (size_t i = 0; i < ix->cap; i++) {
		const struct key_slot *s = &ix->slots[i];

		if (s->idx != SIZE_MAX)
			*probe(&bigger, s->k1, s->k2) = *s;
	}
	bigger.n = ix->n;
	free(ix->slots);
	*ix = bigger;
	return 0;
}

int key_index_put(struct key_index *ix, uint64_t k1, uint64_t k2, size_t idx)
{
	struct key_slot *s;

	if ((ix->n + 1) * 2 > ix->cap && grow(ix))
		return -1;
	s = probe(ix, k1, k2);
	if (s->idx == SIZE_MAX)
		ix->n++;
	s->k1 = k1;
	s->k2 = k2;
	s->idx = idx;
	return 0;
}

/* Linear probing without tombstones: the keys after the removed one that would no longer be
 * found from their home slot move back into the gap (backward-shift deletion), so lookups
 * stay as short as before however many removals a long live session makes. */
bool key_index_remove(struct key_index *ix, uint64_t k1, uint64_t k2)
{
	size_t mask = ix->cap - 1, gap, home;
	struct key_slot *s;

	if (!ix->cap)
		return false;
	s = probe(ix, k1, k2);
	if (s->idx == SIZE_MAX)
		return false;
	gap = (size_t)(s - ix->slots);
	for (size_t j = (gap + 1) & mask; ix->slots[j].idx != SIZE_MAX; j = (j + 1) & mask) {
		home = hash(ix->slots[j].k1, ix->slots[j].k2) & mask;
		/* it stays when its home lies cyclically in (gap, j]: the gap is not on its path */
		if (gap <= j ? (home > gap && home <= j) : (home > gap || home <= j))
			continue;
		ix->slots[gap] = ix->slots[j];
		gap = j;
	}
	ix->slots[gap].idx = SIZE_MAX;
	ix->n--;
	return true;
}

void key_index_free(struct key_index *ix)
{
	free(ix->slots);
	ix->slots = NULL;
	ix->cap = ix->n = 0;
}
