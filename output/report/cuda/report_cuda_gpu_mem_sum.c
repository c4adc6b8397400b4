// SPDX-License-Identifier: MIT
/*
 * cuda_gpu_mem_time_sum and cuda_gpu_mem_size_sum: nsys's summaries of GPU memory operations
 * by time and by size, one row per copy direction and one for memsets, from the CUPTI
 * bridge's copy and memset records. Sizes are decimal MB (10^6 bytes), as nsys prints them.
 */
#include <stdio.h>
#include "output/model/gpu/gpu_model.h"
#include "output/model/gpu/gpu_strings.h"
#include "output/report/base/report.h"
#include "output/report/base/report_stats.h"
#include "output/report/cuda/cuda_reports.h"

#define MB 1e6

static const struct table_col time_cols[] = {
    REPORT_STAT_COLS_COUNTING("Count", "count"),
    {"Operation", "operation", COL_STR},
};

static const struct table_col size_cols[] = {
    {"Total (MB)", "total_mb", COL_FLOAT3},   {"Count", "count", COL_INT},
    {"Avg (MB)", "avg_mb", COL_FLOAT3},	      {"Med (MB)", "med_mb", COL_FLOAT3},
    {"Min (MB)", "min_mb", COL_FLOAT3},	      {"Max (MB)", "max_mb", COL_FLOAT3},
    {"StdDev (MB)", "stddev_mb", COL_FLOAT3}, {"Operation", "operation", COL_STR},
};

static void operation_name(int row, char *buf, size_t len)
{
	if (row == GPU_MEM_MEMSET_ROW)
		snprintf(buf, len, "[CUDA memset]");
	else
		snprintf(buf, len, "[CUDA memcpy %s]", gpu_copy_kind_name((uint32_t)row));
}

static int build_time(const struct trace_model *m, struct table *t)
{
	const struct gpu_model *g = &m->gpu;
	uint64_t total = 0;
	char op[64];

	for (int r = 0; r < GPU_MEM_ROWS; r++)
		total += g->mem_durs[r].total;
	for (int r = 0; r < GPU_MEM_ROWS; r++) {
		const struct exact_stats *s = &g->mem_durs[r];
		struct table_cell *row;

		if (!s->n)
			continue;
		operation_name(r, op, sizeof(op));
		row = table_add_row(t);
		if (!row || table_set_str(&row[8], op))
			return -1;
		report_stat_cells(row, s->v, s->n, s->total, total);
	}
	return 0;
}

static int build_size(const struct trace_model *m, struct table *t)
{
	const struct gpu_model *g = &m->gpu;
	char op[64];

	for (int r = 0; r < GPU_MEM_ROWS; r++) {
		const struct exact_stats *s = &g->mem_bytes[r];
		struct table_cell *row;

		if (!s->n)
			continue;
		operation_name(r, op, sizeof(op));
		row = table_add_row(t);
		if (!row || table_set_str(&row[7], op))
			return -1;
		row[0].d = (double)s->total / MB;
		row[1].u = s->n;
		row[2].d = (double)s->total / (double)s->n / MB;
		row[3].d = sorted_median(s->v, s->n) / MB;
		row[4].d = (double)s->v[0] / MB;
		row[5].d = (double)s->v[s->n - 1] / MB;
		row[6].d = sample_stddev(s->v, s->n, s->total) / MB;
	}
	return 0;
}

const struct report_def report_cuda_gpu_mem_time_sum = {
    .name = "cuda_gpu_mem_time_sum",
    .summary = "GPU memory operations by time (CUPTI bridge), as nsys stats",
    .cols = time_cols,
    .ncols = sizeof(time_cols) / sizeof(time_cols[0]),
    .default_sort = "total_ns",
    .build = build_time,
};

const struct report_def report_cuda_gpu_mem_size_sum = {
    .name = "cuda_gpu_mem_size_sum",
    .summary = "GPU memory operations by size in decimal MB (CUPTI bridge), as nsys stats",
    .cols = size_cols,
    .ncols = sizeof(size_cols) / sizeof(size_cols[0]),
    .default_sort = "total_mb",
    .build = build_size,
};
