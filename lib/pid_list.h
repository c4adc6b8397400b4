/* SPDX-License-Identifier: MIT */
/* A sorted list of pids, and dropping a hash table's keys that name one of them: how the
 * recording's modules forget the processes that have exited (record_exit.h). */
#ifndef GPUSPY_PID_LIST_H
#define GPUSPY_PID_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct key_index;

/* Sorted, without duplicates. */
struct pid_list {
	const uint32_t *pids;
	size_t n;
};

bool pid_list_has(const struct pid_list *l, uint32_t pid);

/* Rebuilds `ix` without the keys whose part `which` (1: k1, 2: k2) is a pid of `dead`; the
 * values are kept. 0, or -1 when out of memory (`ix` is then unchanged). */
int key_index_drop_pids(struct key_index *ix, const struct pid_list *dead, int which);

#endif /* GPUSPY_PID_LIST_H */
