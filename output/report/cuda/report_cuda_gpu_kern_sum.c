// SPDX-License-Identifier: MIT
/*
 * cuda_gpu_kern_sum: nsys's GPU kernel summary, per kernel name over all processes, from the
 * CUPTI bridge's kernel records: real GPU execution times, every statistic exact.
 */
#include "output/model/gpu/gpu_model.h"
#include "output/report/base/report.h"
#include "output/report/base/report_stats.h"
#include "output/report/cuda/cuda_reports.h"

static const struct table_col cols[] = {
    REPORT_STAT_COLS_COUNTING("Instances", "instances"),
    {"Name", "name", COL_STR},
    {"Mangled", "mangled", COL_STR},
};

static uint64_t grand_total(const struct gpu_model *g)
{
	uint64_t total = 0;

	for (size_t i = 0; i < g->names.n; i++)
		total += g->kernel_durs[i].total;
	return total;
}

static int build(const struct trace_model *m, struct table *t)
{
	const struct gpu_model *g = &m->gpu;
	uint64_t total;

	if (!g->kernel_durs)
		return 0;
	total = grand_total(g);
	for (size_t i = 0; i < g->names.n; i++) {
		const struct exact_stats *s = &g->kernel_durs[i];
		struct table_cell *row;

		if (!s->n)
			continue;
		row = table_add_row(t);
		if (!row || table_set_str(&row[8], string_pool_display(&g->names, (uint32_t)i)) ||
		    table_set_str(&row[9], string_pool_get(&g->names, (uint32_t)i)))
			return -1;
		report_stat_cells(row, s->v, s->n, s->total, total);
	}
	return 0;
}

const struct report_def report_cuda_gpu_kern_sum = {
    .name = "cuda_gpu_kern_sum",
    .summary = "GPU kernel summary (CUPTI bridge: GPU execution time), as nsys stats",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "total_ns",
    .build = build,
};
