// SPDX-License-Identifier: MIT
/* steps: the training steps (iterations) gpuspy found in each process, how it found them
 * (output/analysis/steps.h), and where each one's time went (output/analysis/step_time.h). */
#include <stdio.h>
#include <stdlib.h>
#include "lib/exact_stats.h"
#include "lib/messages.h"
#include "output/analysis/stalls.h"
#include "output/report/base/report.h"
#include "output/report/host/host_reports.h"

/* A step this much longer than its process's median is named an outlier. */
#define OUTLIER_RATIO 1.5

enum {
	C_PID,
	C_TID,
	C_STEP,
	C_START,
	C_DURATION,
	C_INPUT,
	C_HOST,
	C_SYNC,
	C_OTHER,
	C_GPU_BUSY,
	C_GPU_IDLE,
	C_TOP,
	C_NOTE,
	C_FOUND_BY,
	C_NCOLS
};

static const struct table_col cols[] = {
    [C_PID] = {"PID", "pid", COL_ID},
    [C_TID] = {"TID", "tid", COL_ID}, /* the thread that runs the loop */
    [C_STEP] = {"Step", "step", COL_ID},
    [C_START] = {"Start (ns)", "start_ns", COL_ID}, /* CLOCK_MONOTONIC, as the records */
    [C_DURATION] = {"Duration (ns)", "duration_ns", COL_INT},
    [C_INPUT] = {"Input Wait (ns)", "input_wait_ns", COL_INT},
    [C_HOST] = {"Host Compute (ns)", "host_compute_ns", COL_INT},
    [C_SYNC] = {"Sync Wait (ns)", "sync_wait_ns", COL_INT},
    [C_OTHER] = {"Other Wait (ns)", "other_wait_ns", COL_INT},
    [C_GPU_BUSY] = {"GPU Busy (ns)", "gpu_busy_ns", COL_INT},
    [C_GPU_IDLE] = {"GPU Idle (ns)", "gpu_idle_ns", COL_INT},
    [C_TOP] = {"Mostly", "mostly", COL_STR}, /* the step's largest kind and its share */
    [C_NOTE] = {"Note", "note", COL_STR},    /* median, p90, outlier */
    [C_FOUND_BY] = {"Found by", "found_by", COL_STR},
};

static enum stall_kind largest_kind(const struct step_time *t)
{
	enum stall_kind best = STALL_HOST_COMPUTE;

	for (int k = 0; k < STALL_NKINDS; k++)
		if (t->ns[k] > t->ns[best])
			best = (enum stall_kind)k;
	return best;
}

static int set_mostly(const struct step_time *t, struct table_cell *cell)
{
	enum stall_kind k = largest_kind(t);
	char buf[64];

	snprintf(buf, sizeof(buf), "%s %llu%%", stall_kind_name(k),
		 (unsigned long long)(t->wall_ns ? t->ns[k] * 100 / t->wall_ns : 0));
	return table_set_str(cell, buf);
}

static void set_times(const struct step_time *t, struct table_cell *row)
{
	row[C_DURATION].u = t->wall_ns;
	row[C_INPUT].u = t->ns[STALL_INPUT_WAIT] + t->ns[STALL_IO_WAIT];
	row[C_HOST].u = t->ns[STALL_HOST_COMPUTE] + t->ns[STALL_LAUNCH_BOUND];
	row[C_SYNC].u = t->ns[STALL_SYNC_WAIT] + t->ns[STALL_GPU_BOUND];
	row[C_OTHER].u =
	    t->ns[STALL_LOCK_WAIT] + t->ns[STALL_CPU_CONTENTION] + t->ns[STALL_OTHER_WAIT];
	row[C_GPU_BUSY].u = t->gpu_busy_ns;
	row[C_GPU_IDLE].u = t->gpu_idle_ns;
}

/* A row of the process's median or p90 of each time column over the rows [first, last). */
static int add_spread(struct table *t, size_t first, size_t last, unsigned p, const char *how)
{
	size_t n = last - first;
	uint64_t *v = malloc((n + 1) * sizeof(*v));
	struct table_cell *row = v ? table_add_row(t) : NULL;
	char note[32];

	if (!row) {
		free(v);
		return -1;
	}
	snprintf(note, sizeof(note), p == 50 ? "median" : "p%u", p);
	for (int c = C_DURATION; c <= C_GPU_IDLE; c++) {
		for (size_t i = 0; i < n; i++)
			v[i] = t->cells[(first + i) * t->ncols + c].u;
		sort_u64(v, n);
		row[c].u = sorted_percentile(v, n, p);
	}
	free(v);
	row[C_PID].u = t->cells[first * t->ncols + C_PID].u;
	row[C_TID].u = t->cells[first * t->ncols + C_TID].u;
	row[C_STEP].empty = row[C_START].empty = row[C_TOP].empty = true;
	return table_set_str(&row[C_NOTE], note) || table_set_str(&row[C_FOUND_BY], how);
}

/* Names each step this much longer than the median an outlier. */
static int name_outliers(struct table *t, size_t first, size_t last, uint64_t median)
{
	char buf[64];

	for (size_t i = first; median && i < last; i++) {
		uint64_t dur = t->cells[i * t->ncols + C_DURATION].u;

		if ((double)dur < OUTLIER_RATIO * (double)median)
			continue;
		snprintf(buf, sizeof(buf), "outlier: %.1fx the median",
			 (double)dur / (double)median);
		if (table_set_str(&t->cells[i * t->ncols + C_NOTE], buf))
			return -1;
	}
	return 0;
}

static int add_steps(const struct step_times *st, const struct step_origin *o, struct table *t)
{
	size_t first = t->nrows;

	for (size_t i = o->first; i < o->first + o->n; i++) {
		const struct step *s = &st->steps.v[i];
		struct table_cell *row = table_add_row(t);

		if (!row || table_set_str(&row[C_FOUND_BY], o->how) ||
		    set_mostly(&st->t[i], &row[C_TOP]) || table_set_str(&row[C_NOTE], ""))
			return -1;
		row[C_PID].u = s->pid;
		row[C_TID].u = s->tid;
		row[C_STEP].u = s->index;
		row[C_START].u = s->start;
		set_times(&st->t[i], row);
	}
	if (o->n < 3) /* a median of two says nothing the rows do not */
		return 0;
	if (add_spread(t, first, first + o->n, 50, o->how) ||
	    add_spread(t, first, first + o->n, 90, o->how))
		return -1;
	return name_outliers(t, first, first + o->n,
			     t->cells[(t->nrows - 2) * t->ncols + C_DURATION].u);
}

static int build_params(const struct trace_model *m, const struct report_params *p, struct table *t)
{
	char err[256];
	const struct stalls *s = stalls_shared(m, p->steps_by, err, sizeof(err));
	int ret = 0;

	if (!s) {
		gs_error("steps: %s", err);
		return -1;
	}
	for (size_t i = 0; !ret && !s->st.whole_recording && i < s->st.steps.norigins; i++)
		ret = add_steps(&s->st, &s->st.steps.origins[i], t);
	return ret;
}

const struct report_def report_steps = {
    .name = "steps",
    .summary = "training steps (iterations) per process, found without code changes "
	       "(ProfilerStep#N NVTX ranges, else the step loop in the Python stacks), and where "
	       "each one's time went",
    .cols = cols,
    .ncols = C_NCOLS,
    .build_params = build_params,
    .needs = TRACE_MODEL_PY_STACKS,
};
