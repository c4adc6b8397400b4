// SPDX-License-Identifier: MIT
/* The list of steps (step_list.h). */
#include <stdio.h>
#include <stdlib.h>
#include "lib/array_grow.h"
#include "output/analysis/step_list.h"

int step_list_begin(struct step_list *l, uint32_t pid, uint32_t tid, const char *how)
{
	struct step_origin *o =
	    array_grow((void **)&l->origins, &l->norigins, &l->origins_cap, sizeof(*o));

	if (!o)
		return -1;
	o->pid = pid;
	o->tid = tid;
	snprintf(o->how, sizeof(o->how), "%s", how);
	o->first = l->n;
	o->n = 0;
	return 0;
}

int step_list_add(struct step_list *l, uint64_t start, uint64_t end)
{
	struct step_origin *o = &l->origins[l->norigins - 1];
	struct step *s, *prev = o->n ? &l->v[l->n - 1] : NULL;

	/* a process's steps follow each other: a step whose end is a CPU sample's (which stands
	 * for the sampling period after it) can reach past where the next call of the loop began,
	 * and ends there instead, so no two steps overlap */
	if (prev && prev->start <= start && prev->end > start)
		prev->end = start;
	s = array_grow((void **)&l->v, &l->n, &l->cap, sizeof(*s));
	if (!s)
		return -1;
	s->pid = o->pid;
	s->tid = o->tid;
	s->index = (uint32_t)o->n++;
	s->start = start;
	s->end = end;
	return 0;
}

void step_list_drop_last(struct step_list *l)
{
	l->n = l->origins[l->norigins - 1].first;
	l->norigins--;
}

void step_list_free(struct step_list *l)
{
	free(l->v);
	free(l->origins);
	*l = (struct step_list){0};
}
