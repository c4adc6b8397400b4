// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/export/export_kineto_ranks.h"
#include "output/model/trace_model.h"

static int cmp_proc_rank(const void *a, const void *b)
{
	const struct model_process *x = *(const struct model_process *const *)a;
	const struct model_process *y = *(const struct model_process *const *)b;

	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	return (x->pid > y->pid) - (x->pid < y->pid);
}

void kineto_ranks_free(struct kineto_ranks *kr)
{
	for (size_t i = 0; i < kr->n; i++)
		free(kr->ranks[i].pids);
	free(kr->ranks);
	kr->ranks = NULL;
	kr->n = 0;
}

/* Groups the processes sorted by rank into kr; 0 or -1 (out of memory). */
static int group(struct model_process **ranked, size_t n, struct kineto_ranks *kr)
{
	for (size_t i = 0, j; i < n; i = j) {
		struct kineto_rank *r;

		for (j = i; j < n && ranked[j]->rank == ranked[i]->rank;)
			j++;
		r = &kr->ranks[kr->n];
		r->rank = ranked[i]->rank;
		r->pids = malloc((j - i) * sizeof(*r->pids));
		if (!r->pids)
			return -1;
		kr->n++;
		for (size_t k = i; k < j; k++)
			r->pids[k - i] = ranked[k]->pid; /* sorted: pid is the second key */
		r->filter = (struct pid_filter){.pids = r->pids, .n = j - i};
	}
	return 0;
}

int kineto_ranks_find(const char *path, struct kineto_ranks *kr, char *err, size_t errlen)
{
	struct model_process **ranked = NULL;
	struct trace_model m;
	size_t n = 0;
	int ret = -1;

	memset(kr, 0, sizeof(*kr));
	/* only the processes are needed: no Python stacks nor operator calls */
	if (trace_model_load_only(path, &m, 0, err, errlen))
		return -1;
	ranked = calloc(m.nprocs + 1, sizeof(*ranked));
	kr->ranks = calloc(m.nprocs + 1, sizeof(*kr->ranks));
	if (!ranked || !kr->ranks)
		goto cleanup;
	for (size_t i = 0; i < m.nprocs; i++)
		if (m.procs[i].has_rank && m.procs[i].rank >= 0)
			ranked[n++] = &m.procs[i];
	qsort(ranked, n, sizeof(*ranked), cmp_proc_rank);
	ret = group(ranked, n, kr);
cleanup:
	if (ret) {
		snprintf(err, errlen, "out of memory");
		kineto_ranks_free(kr);
	}
	free(ranked);
	trace_model_free(&m);
	return ret;
}
