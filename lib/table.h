/* SPDX-License-Identifier: MIT */
/*
 * A report's rows, printed as an nsys-style text table, CSV, or a JSON array of row objects.
 * Reports fill rows; sorting by any column (--sort KEY, the column's JSON key) and --limit
 * are generic here so every report supports them the same way.
 */
#ifndef GPUSPY_TABLE_H
#define GPUSPY_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum table_format { TABLE_TEXT, TABLE_CSV, TABLE_JSON };

enum col_kind {
	COL_STR,    /* left-aligned text */
	COL_ID,	    /* unsigned integer printed as is: pids, tids */
	COL_INT,    /* unsigned integer, grouped with commas in text */
	COL_FLOAT1, /* one decimal, grouped in text */
	COL_FLOAT3, /* three decimals, grouped in text: decimal MB as nsys prints them */
	COL_PCT,    /* percentage with one decimal */
};

struct table_col {
	const char *title;    /* text and CSV header, e.g. "Total Time (ns)" */
	const char *json_key; /* also the --sort key, e.g. "total_ns" */
	enum col_kind kind;
};

struct table_cell {
	char *s; /* owned copy for COL_STR */
	uint64_t u;
	double d;
	bool
	    empty; /* no value (a kernel's grid in a copy's row): blank in text/CSV, null in JSON */
};

struct table {
	const struct table_col *cols;
	size_t ncols;
	struct table_cell *cells; /* nrows * ncols */
	size_t nrows, cap;
};

void table_init(struct table *t, const struct table_col *cols, size_t ncols);
void table_free(struct table *t);
/* Appends a zeroed row and returns its cells, or NULL when out of memory. */
struct table_cell *table_add_row(struct table *t);
int table_set_str(struct table_cell *cell, const char *s);
/* Index of the column with this JSON key, or -1. */
int table_column(const struct table *t, const char *key);
/* Numbers descending, text ascending; ties keep their order. */
void table_sort(struct table *t, int col);
void table_limit(struct table *t, size_t n);
void table_print(const struct table *t, enum table_format fmt, FILE *out);

#endif /* GPUSPY_TABLE_H */
