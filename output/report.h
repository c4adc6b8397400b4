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

/* nsys's eight statistics columns (osrt_sum, cuda_api_sum), before the name. */
#define REPORT_STAT_COLS                                                                           \
	{"Time (%)", "time_pct", COL_PCT}, {"Total Time (ns)", "total_ns", COL_INT},               \
	    {"Num Calls", "calls", COL_INT}, {"Avg (ns)", "avg_ns", COL_FLOAT1},                   \
	    {"Med (ns)", "med_ns", COL_FLOAT1}, {"Min (ns)", "min_ns", COL_INT},                   \
	    {"Max (ns)", "max_ns", COL_INT},                                                       \
	{                                                                                          \
		"StdDev (ns)", "stddev_ns", COL_FLOAT1                                             \
	}

struct report_def {
	const char *name;
	const char *summary;
	const struct table_col *cols;
	size_t ncols;
	const char *default_sort; /* a column's JSON key */
	int (*build)(const struct trace_model *m, struct table *t);
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

const struct report_def *report_find(const char *name);
/* The registered reports, NULL-terminated. */
extern const struct report_def *const report_all[];

#endif /* GPUSPY_REPORT_H */
