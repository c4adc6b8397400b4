// SPDX-License-Identifier: MIT
/*
 * gpu_mem: device, pinned host and managed memory per process: successful outermost
 * allocations and frees in file order, the peak outstanding and what was never freed. A free
 * of a block allocated before the recording (or by an unprobed function) cannot be sized: it
 * is counted apart.
 */
#include "output/report/base/report.h"
#include "output/report/gpu/gpu_reports.h"

static const struct table_col cols[] = {
    {"PID", "pid", COL_ID},
    {"Process", "process", COL_STR},
    {"Kind", "kind", COL_STR},
    {"Allocs", "allocs", COL_INT},
    {"Frees", "frees", COL_INT},
    {"Allocated (B)", "alloc_bytes", COL_INT},
    {"Freed (B)", "freed_bytes", COL_INT},
    {"Peak (B)", "peak_bytes", COL_INT},
    {"Outstanding (B)", "outstanding_bytes", COL_INT},
    {"Unknown Frees", "unknown_frees", COL_INT},
};

static int add_row(const struct trace_model *m, struct table *t, uint32_t pid,
		   enum gs_mem_kind kind, const struct gpu_mem_kind_usage *k)
{
	const struct model_process *p = trace_model_process(m, pid);
	struct table_cell *row;

	if (!k->allocs && !k->frees && !k->unknown_frees)
		return 0;
	row = table_add_row(t);
	if (!row || table_set_str(&row[1], p && p->comm[0] ? p->comm : "?") ||
	    table_set_str(&row[2], cuda_mem_kind_name(kind)))
		return -1;
	row[0].u = pid;
	row[3].u = k->allocs;
	row[4].u = k->frees;
	row[5].u = k->alloc_bytes;
	row[6].u = k->freed_bytes;
	row[7].u = k->peak_bytes;
	row[8].u = k->outstanding_bytes;
	row[9].u = k->unknown_frees;
	return 0;
}

static int build(const struct trace_model *m, struct table *t)
{
	const struct gpu_mem *g = &m->cuda.mem;

	for (size_t i = 0; i < g->nusage; i++)
		for (int k = 0; k < GS_MEM_NKINDS; k++)
			if (add_row(m, t, g->usage[i].pid, (enum gs_mem_kind)k,
				    &g->usage[i].kind[k]))
				return -1;
	return 0;
}

const struct report_def report_gpu_mem = {
    .name = "gpu_mem",
    .summary = "GPU memory per process and kind: allocations, frees, peak, outstanding",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "peak_bytes",
    .build = build,
};
