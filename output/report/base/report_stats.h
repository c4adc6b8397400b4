/* SPDX-License-Identifier: MIT */
/* nsys's statistics columns (REPORT_STAT_COLS) filled from a set of durations. */
#ifndef GPUSPY_REPORT_STATS_H
#define GPUSPY_REPORT_STATS_H

#include <stddef.h>
#include <stdint.h>
#include "lib/table.h"

/* Fills the eight REPORT_STAT_COLS cells from `n` sorted values summing to `total`; Time (%) is
 * the share of `grand_total`. */
void report_stat_cells(struct table_cell *row, const uint64_t *sorted, size_t n, uint64_t total,
		       uint64_t grand_total);

#endif /* GPUSPY_REPORT_STATS_H */
