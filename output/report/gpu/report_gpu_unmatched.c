// SPDX-License-Identifier: MIT
/*
 * gpu_unmatched: everything the GPU join could not pair, never dropped: GPU records whose
 * correlation id has no CUPTI API record, API records of probed functions that overlap no
 * uprobe span, and uprobe launches that got no GPU record while the bridge was active (and
 * flushed after them). In time order.
 */
#include <stdlib.h>
#include "output/model/gpu/gpu_finish.h"
#include "output/model/gpu/gpu_model.h"
#include "output/report/base/report.h"
#include "output/report/gpu/gpu_reports.h"
#include "output/trace/cuda_api.h"

static const struct table_col cols[] = {
    {"Kind", "kind", COL_STR},
    {"PID", "pid", COL_ID},
    {"TID", "tid", COL_ID},
    {"CorrId", "correlation", COL_ID},
    {"Start (ns)", "start_ns", COL_INT},
    {"Name", "name", COL_STR},
};

static const char *kind_name(uint32_t kind)
{
	switch (kind) {
	case GPU_UNMATCHED_OP:
		return "gpu record without api record";
	case GPU_UNMATCHED_API:
		return "api record without uprobe span";
	default:
		return "launch without gpu record";
	}
}

static const char *entry_name(const struct gpu_model *g, const struct gpu_unmatched *u, char *buf,
			      size_t len)
{
	const struct gs_cuda_probe *p;

	switch (u->kind) {
	case GPU_UNMATCHED_OP:
		return gpu_op_name(g, &g->ops[u->ref], buf, len);
	case GPU_UNMATCHED_API:
		return string_pool_get(&g->names, g->apis[u->ref].name);
	default:
		p = cuda_probe(u->ref);
		return p ? p->name : "?";
	}
}

static int build(const struct trace_model *m, struct table *t)
{
	const struct gpu_model *g = &m->gpu;
	struct gpu_unmatched *v;
	size_t n;
	char buf[64];
	int err = 0;

	if (gpu_model_unmatched(g, &v, &n))
		return -1;
	for (size_t i = 0; i < n && !err; i++) {
		const struct gpu_unmatched *u = &v[i];
		struct table_cell *row = table_add_row(t);

		if (!row || table_set_str(&row[0], kind_name(u->kind)) ||
		    table_set_str(&row[5], entry_name(g, u, buf, sizeof(buf)))) {
			err = -1;
			break;
		}
		row[1].u = u->pid;
		row[2].u = u->tid;
		row[3].u = u->correlation;
		row[4].u = u->ts > m->start_ts ? u->ts - m->start_ts : 0;
	}
	free(v);
	return err;
}

const struct report_def report_gpu_unmatched = {
    .name = "gpu_unmatched",
    .summary = "GPU records, CUPTI API records and launches the GPU join could not pair",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = NULL, /* time order */
    .build = build,
};
