// SPDX-License-Identifier: MIT
/* GPU-idle gaps attributed to what the launching thread did in them (gpu_idle.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/analysis/gpu_idle.h"
#include "output/analysis/step_time.h"

#define LAUNCHERS_SEEN 16 /* distinct launching threads weighed per process */

struct launcher {
	uint32_t tid, ops;
};

/* The thread that launched most of the process's GPU work; the main thread when no record
 * says (launches joined to no uprobe span). */
static uint32_t launching_thread(const struct trace_model *m, uint32_t pid)
{
	struct launcher seen[LAUNCHERS_SEEN];
	size_t n = 0, best = 0;

	for (size_t i = 0; i < m->gpu.nops; i++) {
		const struct gpu_op *op = &m->gpu.ops[i];
		size_t k = 0;

		if (op->pid != pid || !op->launch_tid)
			continue;
		while (k < n && seen[k].tid != op->launch_tid)
			k++;
		if (k == n) {
			if (n == LAUNCHERS_SEEN)
				continue;
			seen[n++] = (struct launcher){op->launch_tid, 0};
		}
		if (++seen[k].ops > seen[best].ops)
			best = k;
	}
	return n ? seen[best].tid : pid;
}

static int cmp_gap(const void *a, const void *b, void *gaps)
{
	const struct gpu_gap *x = (const struct gpu_gap *)gaps + *(const size_t *)a;
	const struct gpu_gap *y = (const struct gpu_gap *)gaps + *(const size_t *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* The gaps as windows: one origin per (process, device), its gaps in time order; order[j] is
 * the gap of window j. */
static int make_windows(const struct trace_model *m, const struct gpu_gap *gaps, size_t n,
			size_t *order, struct step_list *l)
{
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_gap, (void *)gaps);
	for (size_t j = 0; j < n; j++) {
		const struct gpu_gap *g = &gaps[order[j]];
		const struct gpu_gap *prev = j ? &gaps[order[j - 1]] : NULL;

		if ((!prev || prev->pid != g->pid || prev->device != g->device) &&
		    step_list_begin(l, g->pid, launching_thread(m, g->pid), "gpu idle gaps"))
			return -1;
		if (step_list_add(l, g->start, g->start + g->len))
			return -1;
	}
	return 0;
}

static char *summarize(const struct trace_model *m, const struct step_times *st, size_t j)
{
	const struct step *s = &st->steps.v[j];
	const struct step_time *t = &st->t[j];
	char *out = NULL;
	size_t size = 0;
	FILE *f;

	if (!t->top[0].ns)
		return strdup("");
	if (!(f = open_memstream(&out, &size)))
		return NULL;
	fprintf(f, "thread %u (%s):", s->tid, trace_model_thread_name(m, s->pid, s->tid));
	for (int k = 0; k < STEP_TOP_PIECES && t->top[k].ns; k++) {
		const struct step_piece *p = &t->top[k];
		const char *where = string_pool_get(&st->strings, p->where);

		fprintf(f, "%s %s %s%s%s %llu%%", k ? ";" : "", stall_kind_name(p->kind),
			string_pool_get(&st->strings, p->what), *where ? " at " : "", where,
			(unsigned long long)(t->wall_ns
						 ? (p->ns * 100 + t->wall_ns / 2) / t->wall_ns
						 : 0));
	}
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

int gpu_idle_attribute(const struct trace_model *m, const struct gpu_gap *gaps, size_t n,
		       char **hosts)
{
	size_t *order = malloc((n + 1) * sizeof(*order));
	struct step_list l = {0};
	struct step_times st;
	char err[256];
	int ret = -1;

	memset(hosts, 0, n * sizeof(*hosts));
	if (!order || make_windows(m, gaps, n, order, &l)) {
		step_list_free(&l);
		free(order);
		return -1;
	}
	if (step_times_measure_list(m, &l, &st, err, sizeof(err))) {
		free(order);
		return -1;
	}
	ret = 0;
	for (size_t j = 0; !ret && j < n; j++)
		if (!(hosts[order[j]] = summarize(m, &st, j)))
			ret = -1;
	for (size_t i = 0; ret && i < n; i++) {
		free(hosts[i]);
		hosts[i] = NULL;
	}
	step_times_free(&st);
	free(order);
	return ret;
}
