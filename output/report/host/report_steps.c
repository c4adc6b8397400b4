// SPDX-License-Identifier: MIT
/* steps: the training steps (iterations) gpuspy found in each process, and how it found them
 * (output/analysis/steps.h). */
#include "lib/messages.h"
#include "output/analysis/steps.h"
#include "output/report/base/report.h"
#include "output/report/host/host_reports.h"

enum { C_PID, C_TID, C_STEP, C_START, C_DURATION, C_FOUND_BY, C_NCOLS };

static const struct table_col cols[] = {
    [C_PID] = {"PID", "pid", COL_ID},
    [C_TID] = {"TID", "tid", COL_ID}, /* the thread that runs the loop */
    [C_STEP] = {"Step", "step", COL_ID},
    [C_START] = {"Start (ns)", "start_ns", COL_ID}, /* CLOCK_MONOTONIC, as the records */
    [C_DURATION] = {"Duration (ns)", "duration_ns", COL_INT},
    [C_FOUND_BY] = {"Found by", "found_by", COL_STR},
};

static int add_steps(const struct step_list *l, const struct step_origin *o, struct table *t)
{
	for (size_t i = o->first; i < o->first + o->n; i++) {
		struct table_cell *row = table_add_row(t);

		if (!row || table_set_str(&row[C_FOUND_BY], o->how))
			return -1;
		row[C_PID].u = l->v[i].pid;
		row[C_TID].u = l->v[i].tid;
		row[C_STEP].u = l->v[i].index;
		row[C_START].u = l->v[i].start;
		/* a corrupt file may end a step before it starts */
		row[C_DURATION].u = l->v[i].end > l->v[i].start ? l->v[i].end - l->v[i].start : 0;
	}
	return 0;
}

static int build_params(const struct trace_model *m, const struct report_params *p, struct table *t)
{
	struct step_list l = {0};
	char err[256];
	int ret = 0;

	if (steps_find(m, p->steps_by, &l, err, sizeof(err))) {
		gs_error("steps: %s", err);
		return -1;
	}
	for (size_t i = 0; !ret && i < l.norigins; i++)
		ret = add_steps(&l, &l.origins[i], t);
	step_list_free(&l);
	return ret;
}

const struct report_def report_steps = {
    .name = "steps",
    .summary = "training steps (iterations) per process, found without code changes: "
	       "ProfilerStep#N NVTX ranges, else the step loop in the Python stacks",
    .cols = cols,
    .ncols = C_NCOLS,
    .build_params = build_params,
    .needs = TRACE_MODEL_PY_STACKS,
};
