// SPDX-License-Identifier: MIT
/* cuda_api_errors: the failed outermost CUDA API calls, per function and error. */
#include "output/report/base/report.h"
#include "output/report/cuda/cuda_reports.h"

static const struct table_col cols[] = {
    {"Calls", "calls", COL_INT},
    {"Name", "name", COL_STR},
    {"Error", "error", COL_STR},
};

static int build(const struct trace_model *m, struct table *t)
{
	char buf[48];

	for (size_t i = 0; i < m->cuda.nerrors; i++) {
		const struct cuda_api_error *e = &m->cuda.errors[i];
		const struct gs_cuda_probe *p = cuda_probe(e->probe);
		struct table_cell *row = table_add_row(t);

		if (!row || table_set_str(&row[1], p->name) ||
		    table_set_str(&row[2], cuda_error_name(p->runtime, e->code, buf, sizeof(buf))))
			return -1;
		row[0].u = e->calls;
	}
	return 0;
}

const struct report_def report_cuda_api_errors = {
    .name = "cuda_api_errors",
    .summary = "failed CUDA API calls (outermost) by function and error",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "calls",
    .build = build,
};
