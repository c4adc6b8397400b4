// SPDX-License-Identifier: MIT
/* The statistics cells every nsys-style summary shares, from exactly kept values. */
#include "lib/exact_stats.h"
#include "output/report/base/report.h"
#include "output/report/base/report_stats.h"

void report_stat_cells(struct table_cell *row, const uint64_t *sorted, size_t n, uint64_t total,
		       uint64_t grand_total)
{
	row[0].d = grand_total ? 100.0 * (double)total / (double)grand_total : 0.0;
	row[1].u = total;
	row[2].u = n;
	row[3].d = n ? (double)total / (double)n : 0.0;
	row[4].d = sorted_median(sorted, n);
	row[5].u = n ? sorted[0] : 0;
	row[6].u = n ? sorted[n - 1] : 0;
	row[7].d = sample_stddev(sorted, n, total);
}
