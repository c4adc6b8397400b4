// SPDX-License-Identifier: MIT
/*
 * gpu_idle: the longest GPU-idle gaps (between the busy intervals of a device of a process),
 * each with what the thread that launches its GPU work did meanwhile (output/analysis/
 * gpu_idle.h): the first answer to "why is my GPU idle?". Every gap is listed; the host activity of
 * the longest ones is found by reading the trace again, so only the gaps --limit keeps (or the
 * longest GPU_IDLE_ATTRIBUTED) get it.
 */
#include <stdio.h>
#include <stdlib.h>
#include "output/analysis/gpu_idle.h"
#include "output/report/base/report.h"
#include "output/report/gpu/gpu_reports.h"

#define GPU_IDLE_ATTRIBUTED 1000

static const struct table_col cols[] = {
    {"PID", "pid", COL_ID},
    {"Device", "device", COL_ID},
    {"Gap Start (ns)", "start_ns", COL_INT},
    {"Gap (ns)", "gap_ns", COL_INT},
    {"Launching Thread", "host", COL_STR},
};

static int cmp_len(const void *a, const void *b)
{
	const struct gpu_gap *x = a, *y = b;

	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static int add_rows(const struct trace_model *m, struct table *t, const struct gpu_gap *gaps,
		    size_t n, char **hosts, size_t nhosts)
{
	char beyond[64];

	snprintf(beyond, sizeof(beyond), "(not attributed: only the %zu longest gaps are)", nhosts);
	for (size_t i = 0; i < n; i++) {
		struct table_cell *row = table_add_row(t);
		const char *host = i >= nhosts ? beyond
				   : hosts[i]  ? hosts[i]
					       : "(unknown: the trace could not be read again)";

		if (!row ||
		    table_set_str(&row[4], host[0] ? host : "(nothing seen of it in the gap)"))
			return -1;
		row[0].u = gaps[i].pid;
		row[1].u = gaps[i].device;
		row[2].u = gaps[i].start > m->start_ts ? gaps[i].start - m->start_ts : 0;
		row[3].u = gaps[i].len;
	}
	return 0;
}

static int build_top(const struct trace_model *m, size_t top, struct table *t)
{
	struct gpu_gap *gaps;
	char **hosts = NULL;
	size_t n, nhosts;
	int ret = -1;

	if (gpu_busy_gaps(m, &gaps, &n))
		return -1;
	if (n > 1)
		qsort(gaps, n, sizeof(*gaps), cmp_len);
	nhosts = top ? top : GPU_IDLE_ATTRIBUTED;
	nhosts = nhosts < n ? nhosts : n;
	hosts = calloc(nhosts + 1, sizeof(*hosts));
	if (!hosts)
		goto out;
	/* on failure the gaps stand without their attribution (hosts[] is left NULL) */
	gpu_idle_attribute(m, gaps, nhosts, hosts);
	ret = add_rows(m, t, gaps, n, hosts, nhosts);
out:
	for (size_t i = 0; hosts && i < nhosts; i++)
		free(hosts[i]);
	free(hosts);
	free(gaps);
	return ret;
}

static int build(const struct trace_model *m, struct table *t)
{
	return build_top(m, 0, t);
}

const struct report_def report_gpu_idle = {
    .name = "gpu_idle",
    .summary = "GPU-idle gaps per process and device, longest first, and what the launching "
	       "thread did meanwhile (CUPTI bridge)",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "gap_ns",
    .build = build,
    .build_top = build_top,
    .needs = TRACE_MODEL_PY_STACKS, /* the Python frame of what the launching thread did */
};
