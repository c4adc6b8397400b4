// SPDX-License-Identifier: MIT
/* cuda_libs: the CUDA libraries found in each traced process and how many functions were
 * probed in each, so a missing table can be told from an unprobed library. */
#include "output/report/base/report.h"
#include "output/report/cuda/cuda_reports.h"

static const struct table_col cols[] = {
    {"PID", "pid", COL_ID},
    {"Roles", "roles", COL_STR},
    {"Probes", "probes", COL_INT},
    {"Path", "path", COL_STR},
};

static const char *roles_name(uint32_t roles)
{
	bool rt = roles & GS_CUDA_LIB_RUNTIME, drv = roles & GS_CUDA_LIB_DRIVER;

	if (roles & GS_CUDA_LIB_BRIDGE)
		return "CUPTI bridge"; /* gpuspy's own, found mapped: its USDT probe is attached */
	return rt && drv ? "runtime+driver" : rt ? "runtime" : drv ? "driver" : "none";
}

static int build(const struct trace_model *m, struct table *t)
{
	for (size_t i = 0; i < m->cuda.nlibs; i++) {
		const struct cuda_lib_info *l = &m->cuda.libs[i];
		struct table_cell *row = table_add_row(t);

		if (!row || table_set_str(&row[1], roles_name(l->roles)) ||
		    table_set_str(&row[3], l->path))
			return -1;
		row[0].u = l->pid;
		row[2].u = l->probes;
	}
	return 0;
}

const struct report_def report_cuda_libs = {
    .name = "cuda_libs",
    .summary = "CUDA libraries found per process, their roles and the functions probed",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "probes",
    .build = build,
};
