// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "lib/cgroup_attr.h"
#include "lib/key_index.h"
#include "output/report/base/report_groups.h"

enum group_by group_by_parse(const char *s)
{
	if (!strcmp(s, "process"))
		return GROUP_PROCESS;
	if (!strcmp(s, "container"))
		return GROUP_CONTAINER;
	if (!strcmp(s, "user"))
		return GROUP_USER;
	return GROUP_NONE;
}

const char *group_by_name(enum group_by by)
{
	static const char *const names[] = {"none", "process", "container", "user"};

	return names[by];
}

void report_group_label(const struct trace_model *m, const struct model_process *p,
			enum group_by by, char *buf, size_t len)
{
	struct cgroup_attr attr;

	switch (by) {
	case GROUP_PROCESS:
		snprintf(buf, len, "%u %s", p->pid, p->comm);
		return;
	case GROUP_USER:
		snprintf(buf, len, "%s", p->has_attr ? trace_model_process_user(m, p) : "unknown");
		return;
	default:
		if (!p->has_attr) {
			snprintf(buf, len, "unknown");
			return;
		}
		cgroup_classify(trace_model_process_cgroup(m, p), &attr);
		snprintf(buf, len, "%s", attr.label);
		return;
	}
}

static int cmp_label(const void *a, const void *b)
{
	const struct report_group *x = a, *y = b;

	return strcmp(x->label, y->label);
}

static int cmp_first_pid(const void *a, const void *b)
{
	const struct report_group *x = a, *y = b;

	return (x->pids[0] > y->pids[0]) - (x->pids[0] < y->pids[0]);
}

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Labels are hashed into the index (two FNV variants make a 128-bit key). */
static void label_key(const char *s, uint64_t *k1, uint64_t *k2)
{
	uint64_t a = 0xcbf29ce484222325ULL, b = 0x84222325cbf29ce4ULL;

	for (; *s; s++) {
		a = (a ^ (unsigned char)*s) * 0x100000001b3ULL;
		b = (b ^ (unsigned char)*s) * 0x1000193ULL + 0x9e3779b9ULL;
	}
	*k1 = a;
	*k2 = b;
}

static struct report_group *group_of(struct report_group **groups, size_t *n, size_t *cap,
				     struct key_index *ix, const char *label)
{
	uint64_t k1, k2;
	size_t i;
	struct report_group *g;

	label_key(label, &k1, &k2);
	if (key_index_find(ix, k1, k2, &i))
		return &(*groups)[i];
	g = array_grow((void **)groups, n, cap, sizeof(*g));
	if (!g || key_index_put(ix, k1, k2, *n - 1))
		return NULL;
	snprintf(g->label, sizeof(g->label), "%s", label);
	return g;
}

static int add_pid(struct report_group *g, uint32_t pid)
{
	uint32_t *slot = array_grow((void **)&g->pids, &g->n, &g->cap, sizeof(*slot));

	if (!slot)
		return -1;
	*slot = pid;
	return 0;
}

int report_groups_build(const struct trace_model *m, enum group_by by, struct report_group **out,
			size_t *n)
{
	struct report_group *groups = NULL, *g;
	struct key_index ix = {0};
	size_t ngroups = 0, cap = 0;
	char label[sizeof(groups->label)];

	for (size_t i = 0; i < m->nprocs; i++) {
		report_group_label(m, &m->procs[i], by, label, sizeof(label));
		g = group_of(&groups, &ngroups, &cap, &ix, label);
		if (!g || add_pid(g, m->procs[i].pid)) {
			key_index_free(&ix);
			report_groups_free(groups, ngroups);
			return -1;
		}
	}
	key_index_free(&ix);
	for (size_t i = 0; i < ngroups; i++) {
		g = &groups[i];
		qsort(g->pids, g->n, sizeof(*g->pids), cmp_pid);
		g->filter.pids = g->pids;
		g->filter.n = g->n;
	}
	if (ngroups) /* qsort(NULL, 0, ...) is undefined: a trace without processes */
		qsort(groups, ngroups, sizeof(*groups),
		      by == GROUP_PROCESS ? cmp_first_pid : cmp_label);
	*out = groups;
	*n = ngroups;
	return 0;
}

void report_groups_free(struct report_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i].pids);
	free(g);
}
