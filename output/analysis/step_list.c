// SPDX-License-Identifier: MIT
/* The list of steps (step_list.h). */
#include <stdbool.h>
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

static bool has_steps(const struct step_list *l, uint32_t pid)
{
	for (size_t i = 0; i < l->norigins; i++)
		if (l->origins[i].pid == pid)
			return true;
	return false;
}

static bool serves_a_loop(const struct step_list *l, uint32_t pid, step_parent_of parent_of,
			  void *ctx)
{
	uint32_t up = parent_of(ctx, pid);

	/* a depth bound: a corrupt file may make parents a cycle */
	for (int depth = 0; up && up != pid && depth < 64; depth++) {
		if (has_steps(l, up))
			return true;
		up = parent_of(ctx, up);
	}
	return false;
}

int step_list_drop_served(struct step_list *l, step_parent_of parent_of, void *ctx)
{
	struct step_list kept = {0};

	for (size_t i = 0; i < l->norigins; i++) {
		const struct step_origin *o = &l->origins[i];

		if (serves_a_loop(l, o->pid, parent_of, ctx))
			continue;
		if (step_list_begin(&kept, o->pid, o->tid, o->how))
			goto oom;
		for (size_t j = o->first; j < o->first + o->n; j++)
			if (step_list_add(&kept, l->v[j].start, l->v[j].end))
				goto oom;
	}
	step_list_free(l);
	*l = kept;
	return 0;
oom:
	step_list_free(&kept);
	return -1;
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
