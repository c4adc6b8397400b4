// SPDX-License-Identifier: MIT
/* stalls: what the steps' time went to, ranked, with where, what, the cause in other threads
 * and advice (output/analysis/stalls.h). */
#include "lib/messages.h"
#include "output/analysis/stalls.h"
#include "output/report/base/report.h"
#include "output/report/host/host_reports.h"

enum {
	C_RANK,
	C_KIND,
	C_SHARE,
	C_TIME,
	C_STEPS,
	C_PIDS,
	C_WHERE,
	C_WHAT,
	C_CAUSE,
	C_ADVICE,
	C_NCOLS
};

static const struct table_col cols[] = {
    [C_RANK] = {"Rank", "rank", COL_ID},
    [C_KIND] = {"Kind", "kind", COL_STR},
    [C_SHARE] = {"Share (%)", "share_pct", COL_PCT}, /* of the steps' wall time */
    [C_TIME] = {"Time (ns)", "total_ns", COL_INT},
    [C_STEPS] = {"Steps", "steps", COL_INT}, /* how many steps it is in */
    [C_PIDS] = {"PIDs", "pids", COL_STR},
    [C_WHERE] = {"Where", "where", COL_STR},
    [C_WHAT] = {"What", "what", COL_STR},
    [C_CAUSE] = {"Cause", "cause", COL_STR},
    [C_ADVICE] = {"Advice", "advice", COL_STR},
};

static int add_finding(const struct stall_finding *f, size_t rank, struct table *t)
{
	struct table_cell *row = table_add_row(t);

	if (!row || table_set_str(&row[C_KIND], stall_kind_name(f->kind)) ||
	    table_set_str(&row[C_PIDS], f->pids) || table_set_str(&row[C_WHERE], f->where) ||
	    table_set_str(&row[C_WHAT], f->what) || table_set_str(&row[C_CAUSE], f->cause) ||
	    table_set_str(&row[C_ADVICE], f->advice))
		return -1;
	row[C_RANK].u = rank;
	row[C_SHARE].d = f->share_pct;
	row[C_TIME].u = f->ns;
	row[C_STEPS].u = f->steps;
	return 0;
}

static int build_params(const struct trace_model *m, const struct report_params *p, struct table *t)
{
	char err[256];
	const struct stalls *s = stalls_shared(m, p->steps_by, err, sizeof(err));
	int ret = 0;

	if (!s) {
		gs_error("stalls: %s", err);
		return -1;
	}
	for (size_t i = 0; !ret && i < s->n; i++)
		ret = add_finding(&s->v[i], i + 1, t);
	return ret;
}

const struct report_def report_stalls = {
    .name = "stalls",
    .summary = "what the training steps' time went to, ranked by share, with where (Python "
	       "frame), what (call, syscall, file), the cause in other threads and advice",
    .cols = cols,
    .ncols = C_NCOLS,
    .build_params = build_params,
    .needs = TRACE_MODEL_PY_STACKS,
};
