// SPDX-License-Identifier: MIT
/* A treap (a binary search tree kept balanced by random heap priorities) over a node pool:
 * split and merge are the only structural operations, each O(log n) expected. */
#include <stdlib.h>
#include <string.h>
#include "output/model/gpu/mem_blocks.h"

struct mem_node {
	struct mem_block b;
	uint64_t prio;
	uint32_t left, right; /* 0: none */
};

/* (pid, addr) order as one comparison */
static int key_cmp(uint32_t pid, uint64_t addr, const struct mem_block *b)
{
	if (pid != b->pid)
		return pid < b->pid ? -1 : 1;
	return addr < b->addr ? -1 : addr > b->addr;
}

static uint64_t next_prio(struct mem_blocks *s)
{
	/* splitmix64: any decent spread keeps the expected depth logarithmic */
	uint64_t z = (s->seed += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Splits tree t into keys below (pid, addr) and the rest; with `inclusive`, the key itself
 * goes to the lower part. */
static void split(struct mem_node *nodes, uint32_t t, uint32_t pid, uint64_t addr, bool inclusive,
		  uint32_t *lo, uint32_t *hi)
{
	int c;

	if (!t) {
		*lo = *hi = 0;
		return;
	}
	c = key_cmp(pid, addr, &nodes[t].b);
	if (c > 0 || (c == 0 && inclusive)) {
		split(nodes, nodes[t].right, pid, addr, inclusive, &nodes[t].right, hi);
		*lo = t;
	} else {
		split(nodes, nodes[t].left, pid, addr, inclusive, lo, &nodes[t].left);
		*hi = t;
	}
}

/* Joins two trees where every key of `a` is below every key of `b`. */
static uint32_t merge(struct mem_node *nodes, uint32_t a, uint32_t b)
{
	if (!a || !b)
		return a ? a : b;
	if (nodes[a].prio > nodes[b].prio) {
		nodes[a].right = merge(nodes, nodes[a].right, b);
		return a;
	}
	nodes[b].left = merge(nodes, a, nodes[b].left);
	return b;
}

static uint32_t new_node(struct mem_blocks *s)
{
	uint32_t i = s->free_list;

	if (i) {
		s->free_list = s->nodes[i].left;
		return i;
	}
	if (!s->cap || s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 256;
		struct mem_node *p = cap > s->cap ? realloc(s->nodes, cap * sizeof(*p)) : NULL;

		if (!p)
			return 0;
		s->nodes = p;
		s->cap = cap;
		if (!s->n)
			s->n = 1; /* node 0 stands for "none" */
	}
	return s->n++;
}

static uint32_t find_exact(const struct mem_blocks *s, uint32_t pid, uint64_t addr)
{
	uint32_t t = s->root;

	while (t) {
		int c = key_cmp(pid, addr, &s->nodes[t].b);

		if (!c)
			return t;
		t = c < 0 ? s->nodes[t].left : s->nodes[t].right;
	}
	return 0;
}

int mem_blocks_put(struct mem_blocks *s, const struct mem_block *b)
{
	uint32_t t = find_exact(s, b->pid, b->addr), lo, hi;

	if (t) {
		s->nodes[t].b = *b;
		return 0;
	}
	t = new_node(s);
	if (!t)
		return -1;
	s->nodes[t] = (struct mem_node){.b = *b, .prio = next_prio(s)};
	split(s->nodes, s->root, b->pid, b->addr, false, &lo, &hi);
	s->root = merge(s->nodes, merge(s->nodes, lo, t), hi);
	s->count++;
	return 0;
}

bool mem_blocks_take(struct mem_blocks *s, uint32_t pid, uint64_t addr, struct mem_block *out)
{
	uint32_t lo, mid, hi;

	if (!find_exact(s, pid, addr))
		return false;
	split(s->nodes, s->root, pid, addr, false, &lo, &hi);
	split(s->nodes, hi, pid, addr, true, &mid, &hi);
	*out = s->nodes[mid].b;
	s->nodes[mid].left = s->free_list;
	s->free_list = mid;
	s->root = merge(s->nodes, lo, hi);
	s->count--;
	return true;
}

const struct mem_block *mem_blocks_find(const struct mem_blocks *s, uint32_t pid, uint64_t addr)
{
	const struct mem_block *floor = NULL;
	uint32_t t = s->root;

	/* the last block starting at or below addr is the only one that can hold it */
	while (t) {
		const struct mem_block *b = &s->nodes[t].b;

		if (key_cmp(pid, addr, b) >= 0) {
			floor = b;
			t = s->nodes[t].right;
		} else {
			t = s->nodes[t].left;
		}
	}
	if (floor && floor->pid == pid && addr - floor->addr < floor->bytes)
		return floor;
	return NULL;
}

static int each(const struct mem_node *nodes, uint32_t t,
		int (*fn)(const struct mem_block *, void *), void *arg)
{
	int ret;

	if (!t)
		return 0;
	ret = each(nodes, nodes[t].left, fn, arg);
	if (!ret)
		ret = fn(&nodes[t].b, arg);
	return ret ? ret : each(nodes, nodes[t].right, fn, arg);
}

int mem_blocks_each(const struct mem_blocks *s, int (*fn)(const struct mem_block *, void *),
		    void *arg)
{
	return each(s->nodes, s->root, fn, arg);
}

void mem_blocks_free(struct mem_blocks *s)
{
	free(s->nodes);
	memset(s, 0, sizeof(*s));
}
