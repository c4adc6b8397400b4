// SPDX-License-Identifier: MIT
/* Sorted pid lists (pid_list.h). */
#include <stdint.h>
#include "lib/key_index.h"
#include "lib/pid_list.h"

bool pid_list_has(const struct pid_list *l, uint32_t pid)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->pids[mid] == pid)
			return true;
		if (l->pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

int key_index_drop_pids(struct key_index *ix, const struct pid_list *dead, int which)
{
	struct key_index kept = {0};

	if (!dead->n || !ix->n)
		return 0;
	for (size_t i = 0; i < ix->cap; i++) {
		const struct key_slot *s = &ix->slots[i];

		if (s->idx == SIZE_MAX ||
		    pid_list_has(dead, (uint32_t)(which == 1 ? s->k1 : s->k2)))
			continue;
		if (key_index_put(&kept, s->k1, s->k2, s->idx)) {
			key_index_free(&kept);
			return -1;
		}
	}
	key_index_free(ix);
	*ix = kept;
	return 0;
}
