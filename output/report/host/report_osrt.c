// SPDX-License-Identifier: MIT
/*
 * osrt_sum: nsys's OS-runtime summary, per syscall over all traced threads.
 * osrt_thread: the same split per (process, thread), which nsys lacks.
 * Counts, totals, min, max and stddev are exact for every call; the median is histogram-based.
 */
#include <stdlib.h>
#include <string.h>
#include "lib/syscall_names.h"
#include "output/report/base/report.h"
#include "output/report/host/host_reports.h"

static const struct table_col sum_cols[] = {
    REPORT_STAT_COLS,
    {"Name", "name", COL_STR},
};

static const struct table_col thread_cols[] = {
    {"PID", "pid", COL_ID}, {"TID", "tid", COL_ID},    {"Thread", "thread", COL_STR},
    REPORT_STAT_COLS,	    {"Name", "name", COL_STR},
};

/* Fills the eight statistic cells starting at `cells`. */
static void fill_stats(struct table_cell *cells, const struct duration_stats *s,
		       uint64_t grand_total)
{
	cells[0].d = grand_total ? 100.0 * (double)s->total_ns / (double)grand_total : 0.0;
	cells[1].u = s->total_ns;
	cells[2].u = s->count;
	cells[3].d = duration_stats_avg(s);
	cells[4].d = duration_stats_median(s);
	cells[5].u = s->count ? s->min_ns : 0;
	cells[6].u = s->max_ns;
	cells[7].d = duration_stats_stddev(s);
}

static uint64_t grand_total(const struct trace_model *m)
{
	uint64_t total = 0;

	for (size_t i = 0; i < m->nsyscalls; i++)
		total += m->syscalls[i].stats.total_ns;
	return total;
}

static int cmp_nr(const void *a, const void *b)
{
	uint32_t x = (*(const struct model_syscall *const *)a)->nr;
	uint32_t y = (*(const struct model_syscall *const *)b)->nr;

	return (x > y) - (x < y);
}

/* One row per syscall number: the threads' entries sorted by number and merged run by run,
 * since a program may pass any number to syscall(2) (an array indexed by it could be huge). */
static int build_sum(const struct trace_model *m, struct table *t)
{
	const struct model_syscall **by_nr = malloc((m->nsyscalls + 1) * sizeof(*by_nr));
	struct duration_stats sum;
	uint64_t total = grand_total(m);
	char buf[32];
	int err = 0;

	if (!by_nr)
		return -1;
	for (size_t i = 0; i < m->nsyscalls; i++)
		by_nr[i] = &m->syscalls[i];
	qsort(by_nr, m->nsyscalls, sizeof(*by_nr), cmp_nr);
	for (size_t i = 0, j; i < m->nsyscalls && !err; i = j) {
		struct table_cell *row;

		duration_stats_init(&sum);
		for (j = i; j < m->nsyscalls && by_nr[j]->nr == by_nr[i]->nr; j++)
			trace_model_syscall_stats(m, by_nr[j], &sum);
		if (!sum.count)
			continue;
		row = table_add_row(t);
		if (!row || table_set_str(&row[8], gs_syscall_name(by_nr[i]->nr, buf, sizeof(buf))))
			err = -1;
		else
			fill_stats(row, &sum, total);
	}
	free(by_nr);
	return err;
}

static int build_thread(const struct trace_model *m, struct table *t)
{
	uint64_t total = grand_total(m);
	struct duration_stats stats;
	char buf[32];

	for (size_t i = 0; i < m->nsyscalls; i++) {
		const struct model_syscall *s = &m->syscalls[i];
		struct table_cell *row = table_add_row(t);

		if (!row)
			return -1;
		row[0].u = s->pid;
		row[1].u = s->tid;
		if (table_set_str(&row[2], trace_model_thread_name(m, s->pid, s->tid)) ||
		    table_set_str(&row[11], gs_syscall_name(s->nr, buf, sizeof(buf))))
			return -1;
		duration_stats_init(&stats);
		trace_model_syscall_stats(m, s, &stats);
		fill_stats(&row[3], &stats, total);
	}
	return 0;
}

const struct report_def report_osrt_sum = {
    .name = "osrt_sum",
    .summary = "OS-runtime (syscall) summary over all traced threads, as nsys stats",
    .cols = sum_cols,
    .ncols = sizeof(sum_cols) / sizeof(sum_cols[0]),
    .default_sort = "total_ns",
    .build = build_sum,
};

const struct report_def report_osrt_thread = {
    .name = "osrt_thread",
    .summary = "OS-runtime summary per process and thread",
    .cols = thread_cols,
    .ncols = sizeof(thread_cols) / sizeof(thread_cols[0]),
    .default_sort = "total_ns",
    .build = build_thread,
};
