// SPDX-License-Identifier: MIT
/*
 * cuda_copies: the host side of data movement per operation, named as nsys names GPU memory
 * operations. A cudaMemcpyDefault or cuMemcpy copy is classified by its pointers against the
 * device allocations live at the time; one that matches none stays "Unified (Default)".
 */
#include <stdio.h>
#include "output/report/base/report.h"
#include "output/report/cuda/cuda_reports.h"

static const struct table_col cols[] = {
    {"Count", "count", COL_INT},
    {"Total (B)", "bytes", COL_INT},
    {"CPU Time (ns)", "total_ns", COL_INT},
    {"Operation", "operation", COL_STR},
};

static int add_row(struct table *t, const struct cuda_copy_stat *s, const char *op)
{
	struct table_cell *row;

	if (!s->count)
		return 0;
	row = table_add_row(t);
	if (!row || table_set_str(&row[3], op))
		return -1;
	row[0].u = s->count;
	row[1].u = s->bytes;
	row[2].u = s->total_ns;
	return 0;
}

static int build(const struct trace_model *m, struct table *t)
{
	/* nsys's order: the directions first, then memsets */
	static const enum gs_copy_kind order[] = {GS_COPY_HTOD, GS_COPY_DTOH, GS_COPY_DTOD,
						  GS_COPY_HTOH, GS_COPY_DEFAULT};
	char op[64];

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		snprintf(op, sizeof(op), "[CUDA memcpy %s]", cuda_copy_kind_name(order[i]));
		if (add_row(t, &m->cuda.copies[order[i]], op))
			return -1;
	}
	return add_row(t, &m->cuda.memsets, "[CUDA memset]");
}

const struct report_def report_cuda_copies = {
    .name = "cuda_copies",
    .summary = "memory copies and memsets (successful, outermost calls) per operation",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "total_ns",
    .build = build,
};
