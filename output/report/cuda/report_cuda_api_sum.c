// SPDX-License-Identifier: MIT
/*
 * cuda_api_sum: nsys's CUDA API summary, per probed function, plus the failed calls. Only
 * outermost calls count: the driver calls a runtime call makes are part of its time. Every
 * statistic is exact, the median too (every duration is kept).
 */
#include "output/report/base/report.h"
#include "output/report/base/report_stats.h"
#include "output/report/cuda/cuda_reports.h"

static const struct table_col cols[] = {
    REPORT_STAT_COLS,
    {"Errors", "errors", COL_INT},
    {"Name", "name", COL_STR},
};

static uint64_t grand_total(const struct cuda_model *cm)
{
	uint64_t total = 0;

	for (unsigned i = 0; cm->api && i < gs_cuda_nprobes; i++)
		total += cm->api[i].total_ns;
	return total;
}

static int build(const struct trace_model *m, struct table *t)
{
	const struct cuda_model *cm = &m->cuda;
	uint64_t total = grand_total(cm);

	for (unsigned i = 0; cm->api && i < gs_cuda_nprobes; i++) {
		const struct cuda_api_stat *s = &cm->api[i];
		struct table_cell *row;

		if (!s->n)
			continue;
		row = table_add_row(t);
		if (!row || table_set_str(&row[9], gs_cuda_probes[i].name))
			return -1;
		report_stat_cells(row, s->durs, s->n, s->total_ns, total);
		row[8].u = s->errors;
	}
	return 0;
}

const struct report_def report_cuda_api_sum = {
    .name = "cuda_api_sum",
    .summary = "CUDA API summary (outermost calls; failed calls counted as errors), as nsys stats",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "total_ns",
    .build = build,
};
