/* SPDX-License-Identifier: MIT */
/*
 * What a report is: a module that turns the trace model into table rows, by its columns and a
 * build function. Each report is one file in output/report/{host,cuda,gpu}/, declared in its
 * folder's header and listed in report_registry.c (docs/ARCHITECTURE.md: adding a report).
 */
#ifndef GPUSPY_REPORT_H
#define GPUSPY_REPORT_H

#include "lib/table.h"
#include "output/model/trace_model.h"

/* nsys's eight statistics columns, before the name; the count column is named per report
 * ("Num Calls" for API calls, "Instances" for kernels and ranges, "Count" for copies). */
#define REPORT_STAT_COLS_COUNTING(count_title, count_key)                                          \
	{"Time (%)", "time_pct", COL_PCT}, {"Total Time (ns)", "total_ns", COL_INT},               \
	    {count_title, count_key, COL_INT}, {"Avg (ns)", "avg_ns", COL_FLOAT1},                 \
	    {"Med (ns)", "med_ns", COL_FLOAT1}, {"Min (ns)", "min_ns", COL_INT},                   \
	    {"Max (ns)", "max_ns", COL_INT},                                                       \
	{                                                                                          \
		"StdDev (ns)", "stddev_ns", COL_FLOAT1                                             \
	}
/* osrt_sum, cuda_api_sum */
#define REPORT_STAT_COLS REPORT_STAT_COLS_COUNTING("Num Calls", "calls")

/* Options of `gpuspy report` that only some reports take. */
struct report_params {
	unsigned group_by_stack;   /* ops: rows by name and the top N Python frames (0: by name) */
	bool group_by_input_shape; /* ops: rows by name and input shapes */
	const char *steps_by;	   /* steps: "nvtx:NAME" or "py:FUNCTION"; NULL: found by itself */
};

struct report_def {
	const char *name;
	const char *summary;
	const struct table_col *cols;
	size_t ncols;
	const char *default_sort; /* a column's JSON key */
	unsigned needs;		  /* the optional model parts it reads (TRACE_MODEL_*) */
	int (*build)(const struct trace_model *m, struct table *t);
	/* reports whose rows cost work each (gpu_idle reads the trace again): told how many rows
	 * --limit will keep (0: all), so they can spend that work on those only */
	int (*build_top)(const struct trace_model *m, size_t top, struct table *t);
	/* --format collapsed: the report's stacks as folded lines for flame graph tools
	 * ("root;caller;leaf weight"), weighted by samples or by ns; NULL for reports without
	 * stacks. 0, or -1 when out of memory. */
	int (*collapsed)(const struct trace_model *m, bool weight_ns, FILE *out);
	/* reports that take report_params: called instead of build (it may switch `t` to
	 * another column set before adding rows) */
	int (*build_params)(const struct trace_model *m, const struct report_params *p,
			    struct table *t);
	/* text in a layout of the report's own (ops: torch.profiler's table), given the rows
	 * sorted and limited; NULL: the generic table */
	void (*print_text)(const struct trace_model *m, const struct table *t, FILE *out);
};

#endif /* GPUSPY_REPORT_H */
