/* SPDX-License-Identifier: MIT */
/*
 * A report turns the trace model into table rows. Each report is one module that defines its
 * columns and a build function; report_find() is the registry. Later capabilities (CUDA API,
 * GPU kernels, operators) add modules here, nothing else changes.
 */
#ifndef GPUSPY_REPORT_H
#define GPUSPY_REPORT_H

#include "table.h"
#include "trace_model.h"

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
	unsigned group_by_stack; /* ops: rows by name and the top N Python frames (0: by name) */
};

struct report_def {
	const char *name;
	const char *summary;
	const struct table_col *cols;
	size_t ncols;
	const char *default_sort; /* a column's JSON key */
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

extern const struct report_def report_osrt_sum;
extern const struct report_def report_osrt_thread;
extern const struct report_def report_offcpu;
extern const struct report_def report_processes;
extern const struct report_def report_losses;
extern const struct report_def report_cuda_api_sum;
extern const struct report_def report_cuda_api_errors;
extern const struct report_def report_cuda_launches;
extern const struct report_def report_cuda_copies;
extern const struct report_def report_gpu_mem;
extern const struct report_def report_gpu_mem_blocks;
extern const struct report_def report_cuda_libs;

extern const struct report_def report_cuda_gpu_kern_sum;
extern const struct report_def report_cuda_gpu_mem_time_sum;
extern const struct report_def report_cuda_gpu_mem_size_sum;
extern const struct report_def report_cuda_gpu_trace;
extern const struct report_def report_nvtx_sum;
extern const struct report_def report_gpu_util;
extern const struct report_def report_gpu_idle;
extern const struct report_def report_gpu_mode;
extern const struct report_def report_gpu_unmatched;
extern const struct report_def report_ops;
extern const struct report_def report_python_stacks;
extern const struct report_def report_python;

const struct report_def *report_find(const char *name);
/* The registered reports, NULL-terminated. */
extern const struct report_def *const report_all[];

/* Fills the eight REPORT_STAT_COLS cells from `n` sorted values summing to `total`; Time (%) is
 * the share of `grand_total`. */
void report_stat_cells(struct table_cell *row, const uint64_t *sorted, size_t n, uint64_t total,
		       uint64_t grand_total);

#endif /* GPUSPY_REPORT_H */
