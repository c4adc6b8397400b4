// SPDX-License-Identifier: MIT
/* offcpu: per thread, the time spent off CPU by reason (exact totals from the BPF map). */
#include "output/report/base/report.h"
#include "output/report/host/host_reports.h"

static const struct table_col cols[] = {
    {"PID", "pid", COL_ID},
    {"TID", "tid", COL_ID},
    {"Thread", "thread", COL_STR},
    {"Off-CPU (ns)", "total_ns", COL_INT},
    {"Sleeping (ns)", "sleeping_ns", COL_INT},
    {"Sleeps", "sleeping_count", COL_INT},
    {"Uninterruptible (ns)", "uninterruptible_ns", COL_INT},
    {"Blocks", "uninterruptible_count", COL_INT},
    {"Preempted (ns)", "preempted_ns", COL_INT},
    {"Preemptions", "preempted_count", COL_INT},
};

static int build(const struct trace_model *m, struct table *t)
{
	for (size_t i = 0; i < m->noffcpu; i++) {
		const struct model_offcpu *o = &m->offcpu[i];
		struct table_cell *row = table_add_row(t);

		if (!row || table_set_str(&row[2], trace_model_thread_name(m, o->pid, o->tid)))
			return -1;
		row[0].u = o->pid;
		row[1].u = o->tid;
		row[3].u = o->ns[GS_OFFCPU_SLEEPING] + o->ns[GS_OFFCPU_BLOCKED] +
			   o->ns[GS_OFFCPU_PREEMPTED];
		row[4].u = o->ns[GS_OFFCPU_SLEEPING];
		row[5].u = o->count[GS_OFFCPU_SLEEPING];
		row[6].u = o->ns[GS_OFFCPU_BLOCKED];
		row[7].u = o->count[GS_OFFCPU_BLOCKED];
		row[8].u = o->ns[GS_OFFCPU_PREEMPTED];
		row[9].u = o->count[GS_OFFCPU_PREEMPTED];
	}
	return 0;
}

const struct report_def report_offcpu = {
    .name = "offcpu",
    .summary = "time off CPU per thread: sleeping, uninterruptible (I/O), preempted",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "total_ns",
    .build = build,
};
