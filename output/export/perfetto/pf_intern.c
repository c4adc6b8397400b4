// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "output/export/perfetto/pf_intern.h"

struct pf_intern_slot {
	uint64_t hash, iid; /* iid 0: empty */
	char *s;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static bool grow(struct pf_intern *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct pf_intern_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return false;
	for (size_t i = 0; i < t->cap; i++) {
		struct pf_intern_slot *o = &t->slots[i];
		size_t j;

		if (!o->iid)
			continue;
		for (j = o->hash & (cap - 1); slots[j].iid; j = (j + 1) & (cap - 1))
			;
		slots[j] = *o;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return true;
}

uint64_t pf_intern_get(struct pf_intern *t, const char *s, bool *fresh)
{
	uint64_t h = fnv1a(s);
	size_t i;

	*fresh = false;
	/* at most half full, so probing stays short */
	if ((t->count + 1) * 2 > t->cap && !grow(t))
		return 0;
	for (i = h & (t->cap - 1); t->slots[i].iid; i = (i + 1) & (t->cap - 1))
		if (t->slots[i].hash == h && !strcmp(t->slots[i].s, s))
			return t->slots[i].iid;
	if (!(t->slots[i].s = strdup(s)))
		return 0;
	t->slots[i].hash = h;
	t->slots[i].iid = ++t->next_iid; /* ids start at 1: 0 means none to Perfetto */
	t->count++;
	*fresh = true;
	return t->slots[i].iid;
}

void pf_intern_clear(struct pf_intern *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		free(t->slots[i].s);
		t->slots[i] = (struct pf_intern_slot){0};
	}
	t->count = 0;
	t->next_iid = 0;
}

void pf_intern_free(struct pf_intern *t)
{
	pf_intern_clear(t);
	free(t->slots);
	*t = (struct pf_intern){0};
}
