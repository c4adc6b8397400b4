/* SPDX-License-Identifier: MIT */
/*
 * `gpuspy top`'s rows: per process (or container, or user) over the last interval, from the
 * live model, sorted by any column, printed as a table (text, csv) or JSON.
 */
#ifndef GPUSPY_TOP_ROWS_H
#define GPUSPY_TOP_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "lib/table.h"
#include "loader/live/live_model.h"
#include "output/report/base/report_groups.h"

struct top_view {
	enum group_by group_by; /* GROUP_PROCESS by default */
	const char *sort;	/* a column's JSON key; NULL: GPU busy, launches, API, CPU */
	size_t limit;		/* 0: every row */
	bool all;		/* also idle processes (no CPU, CUDA or GPU activity) */
	enum table_format format;
	bool compact; /* text: the columns a terminal has room for */
};

/* Whether `key` names a column (for --sort). */
bool top_sort_key_valid(const char *key);
/* The sort keys, for --help and the interactive key that cycles through them. */
const char *top_next_sort_key(const char *key);
/* The rows of the interval that just ended, printed. 0, or -ENOMEM. */
int top_rows_print(const struct live_model *lm, const struct top_view *v, FILE *out);

#endif /* GPUSPY_TOP_ROWS_H */
