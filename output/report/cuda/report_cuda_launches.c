// SPDX-License-Identifier: MIT
/*
 * cuda_launches: per kernel, the successful outermost launches with the host time the
 * launching calls took, the grid and block shapes used, and which functions launched it.
 * Launch groups (cuda_model.h) are merged by kernel name: the same kernel reached through a
 * runtime stub in one process and a CUfunction in another is one row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/model/gpu/cuda_kernels.h"
#include "output/report/base/report.h"
#include "output/report/cuda/cuda_reports.h"

static const struct table_col cols[] = {
    {"Launches", "launches", COL_INT}, {"CPU Time (ns)", "total_ns", COL_INT},
    {"Grids", "grids", COL_STR},       {"Blocks", "blocks", COL_STR},
    {"API", "api", COL_STR},	       {"Name", "name", COL_STR},
    {"Mangled", "mangled", COL_STR},
};

struct kernel_ref {
	const struct cuda_launch_group *g;
	char placeholder[48]; /* the name of an unknown kernel or a graph */
};

static const char *ref_mangled(const struct kernel_ref *r)
{
	return r->g->name ? r->g->name->mangled : r->placeholder;
}

static const char *ref_display(const struct kernel_ref *r)
{
	return r->g->name ? r->g->name->display : r->placeholder;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct kernel_ref *x = a, *y = b;
	int c = strcmp(ref_mangled(x), ref_mangled(y));

	/* group order is first-launch order: keep it within a kernel */
	return c ? c : (x->g > y->g) - (x->g < y->g);
}

static struct kernel_ref *sorted_refs(const struct cuda_model *cm)
{
	struct kernel_ref *refs = calloc(cm->ngroups ? cm->ngroups : 1, sizeof(*refs));

	if (!refs)
		return NULL;
	for (size_t i = 0; i < cm->ngroups; i++) {
		const struct cuda_launch_group *g = &cm->groups[i];

		refs[i].g = g;
		if (!g->name)
			cuda_kernel_placeholder(refs[i].placeholder, sizeof(refs[i].placeholder),
						g->graph, g->func);
	}
	qsort(refs, cm->ngroups, sizeof(*refs), cmp_ref);
	return refs;
}

static int cmp_first(const void *a, const void *b)
{
	const struct cuda_dims *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/* "x,y,z x,y,z ..." over the groups of one kernel, in first-seen order. */
static int format_shapes(const struct kernel_ref *refs, size_t n, bool grids, char *buf, size_t len)
{
	struct cuda_dims *all = malloc(n * CUDA_MAX_SHAPES * sizeof(*all));
	size_t nall = 0, out = 0, shown = 0;
	bool more = false;

	if (!all)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct cuda_shapes *s = grids ? &refs[i].g->grids : &refs[i].g->blocks;

		memcpy(&all[nall], s->v, s->n * sizeof(*all));
		nall += s->n;
		more |= s->more;
	}
	qsort(all, nall, sizeof(*all), cmp_first);
	buf[0] = '\0';
	for (size_t i = 0; i < nall; i++) {
		bool dup = false;

		for (size_t j = 0; j < i && !dup; j++)
			dup = !memcmp(all[j].d, all[i].d, sizeof(all[i].d));
		if (dup)
			continue;
		if (shown++ == CUDA_MAX_SHAPES) {
			more = true;
			break;
		}
		out += (size_t)snprintf(buf + out, len - out, "%s%u,%u,%u", out ? " " : "",
					all[i].d[0], all[i].d[1], all[i].d[2]);
	}
	if (more)
		snprintf(buf + out, len - out, " ...");
	free(all);
	return 0;
}

/* Distinct launching functions, in first-launch order. */
static void format_apis(const struct kernel_ref *refs, size_t n, char *buf, size_t len)
{
	size_t out = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		for (size_t j = 0; j < i && !dup; j++)
			dup = refs[j].g->probe == refs[i].g->probe;
		if (!dup && out < len)
			out += (size_t)snprintf(buf + out, len - out, "%s%s", out ? " " : "",
						cuda_probe(refs[i].g->probe)->name);
	}
}

/* One row from the n groups of one kernel. */
static int add_kernel(struct table *t, const struct kernel_ref *refs, size_t n)
{
	/* CUDA_MAX_SHAPES shapes of at most 3 x 10 digits, 2 commas and a space, and " ..." */
	char grids[CUDA_MAX_SHAPES * 33 + 8], blocks[sizeof(grids)], apis[512];
	struct table_cell *row = table_add_row(t);

	if (!row)
		return -1;
	for (size_t i = 0; i < n; i++) {
		row[0].u += refs[i].g->launches;
		row[1].u += refs[i].g->total_ns;
	}
	format_apis(refs, n, apis, sizeof(apis));
	if (format_shapes(refs, n, true, grids, sizeof(grids)) ||
	    format_shapes(refs, n, false, blocks, sizeof(blocks)))
		return -1;
	if (table_set_str(&row[2], grids) || table_set_str(&row[3], blocks) ||
	    table_set_str(&row[4], apis) || table_set_str(&row[5], ref_display(&refs[0])) ||
	    table_set_str(&row[6], ref_mangled(&refs[0])))
		return -1;
	return 0;
}

static int build(const struct trace_model *m, struct table *t)
{
	struct kernel_ref *refs = sorted_refs(&m->cuda);
	size_t n = m->cuda.ngroups;
	int err = 0;

	if (!refs)
		return -1;
	for (size_t i = 0, j; i < n && !err; i = j) {
		for (j = i + 1; j < n && !strcmp(ref_mangled(&refs[j]), ref_mangled(&refs[i])); j++)
			;
		err = add_kernel(t, &refs[i], j - i);
	}
	free(refs);
	return err;
}

const struct report_def report_cuda_launches = {
    .name = "cuda_launches",
    .summary = "kernel launches (successful, outermost) per kernel: host time, shapes, API",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "launches",
    .build = build,
};
