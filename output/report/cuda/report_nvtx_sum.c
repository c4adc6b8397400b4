// SPDX-License-Identifier: MIT
/*
 * nvtx_sum: nsys's NVTX range summary, per (style, range name) over all processes, from the
 * CUPTI bridge's NVTX records. Marks are instants: counted, with zero durations.
 */
#include "output/model/gpu/gpu_model.h"
#include "output/model/gpu/gpu_strings.h"
#include "output/report/base/report.h"
#include "output/report/base/report_stats.h"
#include "output/report/cuda/cuda_reports.h"

static const struct table_col cols[] = {
    REPORT_STAT_COLS_COUNTING("Instances", "instances"),
    {"Style", "style", COL_STR},
    {"Range", "range", COL_STR},
};

static int build(const struct trace_model *m, struct table *t)
{
	const struct gpu_model *g = &m->gpu;
	uint64_t total = 0;

	for (size_t i = 0; i < g->nnvtx; i++)
		total += g->nvtx[i].durs.total;
	for (size_t i = 0; i < g->nnvtx; i++) {
		const struct gpu_nvtx_group *n = &g->nvtx[i];
		struct table_cell *row = table_add_row(t);

		if (!row || table_set_str(&row[8], gpu_nvtx_style_name(n->kind)) ||
		    table_set_str(&row[9], string_pool_get(&g->names, n->name)))
			return -1;
		report_stat_cells(row, n->durs.v, n->durs.n, n->durs.total, total);
	}
	return 0;
}

const struct report_def report_nvtx_sum = {
    .name = "nvtx_sum",
    .summary = "NVTX ranges and marks (CUPTI bridge), as nsys stats",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "total_ns",
    .build = build,
};
