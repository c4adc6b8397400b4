// SPDX-License-Identifier: MIT
/*
 * gpu_util: how busy each device of each process was over the recording (the union of its
 * kernel, copy and memset intervals, so overlapping streams count once), then each stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include "output/model/gpu_busy.h"
#include "output/report/base/report.h"
#include "output/report/gpu/gpu_reports.h"

static const struct table_col cols[] = {
    {"PID", "pid", COL_ID},
    {"Device", "device", COL_ID},
    {"Stream", "stream", COL_STR},
    {"Busy (ns)", "busy_ns", COL_INT},
    {"Busy (%)", "busy_pct", COL_PCT},
    {"Ops", "ops", COL_INT},
};

static int build(const struct trace_model *m, struct table *t)
{
	struct gpu_lane *lanes;
	uint64_t start, end;
	size_t n;
	int ret = 0;

	if (gpu_busy_lanes(m, &lanes, &n))
		return -1;
	gpu_busy_window(m, &start, &end);
	for (size_t i = 0; i < n && !ret; i++) {
		struct table_cell *row = table_add_row(t);
		char stream[16];

		snprintf(stream, sizeof(stream), "%u", lanes[i].stream);
		if (!row || table_set_str(&row[2], lanes[i].all_streams ? "all" : stream)) {
			ret = -1;
			break;
		}
		row[0].u = lanes[i].pid;
		row[1].u = lanes[i].device;
		row[3].u = lanes[i].busy_ns;
		row[4].d =
		    end > start ? 100.0 * (double)lanes[i].busy_ns / (double)(end - start) : 0;
		row[5].u = lanes[i].ops;
	}
	free(lanes);
	return ret;
}

const struct report_def report_gpu_util = {
    .name = "gpu_util",
    .summary = "GPU busy time over the recording per process and device ('all' streams), then "
	       "per stream (CUPTI bridge)",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = NULL, /* each device before its streams */
    .build = build,
};
