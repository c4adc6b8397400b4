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

const struct report_def *report_find(const char *name);
/* The registered reports, NULL-terminated. */
extern const struct report_def *const report_all[];

#endif /* GPUSPY_REPORT_H */
