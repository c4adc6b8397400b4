// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for everything `gpuspy report` and `gpuspy export` do with a file once the
 * reader has checked it: the trace model with its CUDA, GPU, Python and operator models (and
 * their second passes over the file), every registered report's build function with and
 * without a row limit, its sort and its text, CSV and JSON tables, the ops report's own text
 * layout, the folded stacks, per-group models (--group-by), and the Chrome and Kineto exports
 * with their training steps (--steps-by).
 * Output goes to /dev/null: what matters is that any bytes give a clean result or a clean
 * error, never a crash, leak or undefined behaviour. The Makefile builds it, like fuzz_reader,
 * without the reader's checksum checks, so mutated records reach the models.
 *
 * The models read the file by path (the GPU join and the exports read it more than once), so
 * each input is written to a memfd and named /proc/self/fd/N.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "output/export/export_chrome.h"
#include "output/export/export_kineto.h"
#include "output/report/base/report_groups.h"
#include "output/report/report_registry.h"

#define MAX_GROUPS 4 /* groups whose models are built, per input: each is a full load */

static FILE *sink;

static void print_table(const struct trace_model *m, const struct report_def *def, struct table *t)
{
	int col = def->default_sort ? table_column(t, def->default_sort) : -1;

	if (col >= 0)
		table_sort(t, col);
	table_print(t, TABLE_TEXT, sink);
	table_print(t, TABLE_CSV, sink);
	table_print(t, TABLE_JSON, sink);
	if (def->print_text)
		def->print_text(m, t, sink);
	table_limit(t, 2);
	table_print(t, TABLE_TEXT, sink);
}

/* The rows as report_cmd.c builds them: with the report's parameters, or for all rows. */
static int build_rows(const struct trace_model *m, const struct report_def *def,
		      const struct report_params *params, struct table *t)
{
	if (def->build_params)
		return def->build_params(m, params, t);
	return def->build_top ? def->build_top(m, 0, t) : def->build(m, t);
}

/* One report as `report --report NAME` builds it, and with --limit, --group-by-stack or
 * --group-by-input-shape. */
static void run_report(const struct trace_model *m, const struct report_def *def, unsigned stack,
		       bool shapes)
{
	struct report_params params = {.group_by_stack = stack, .group_by_input_shape = shapes};
	struct table t;

	table_init(&t, def->cols, def->ncols);
	if (!build_rows(m, def, &params, &t))
		print_table(m, def, &t);
	table_free(&t);
	if (def->build_top) {
		table_init(&t, def->cols, def->ncols);
		if (!def->build_top(m, 3, &t))
			print_table(m, def, &t);
		table_free(&t);
	}
	if (def->collapsed) {
		(void)def->collapsed(m, false, sink);
		(void)def->collapsed(m, true, sink);
	}
}

static void run_reports(const struct trace_model *m, unsigned stack, bool shapes)
{
	for (size_t i = 0; report_all[i]; i++)
		run_report(m, report_all[i], stack, shapes);
}

/* --group-by: each group's model is the file read again for its processes only. */
static void run_groups(const char *path, const struct trace_model *m, enum group_by by)
{
	struct report_group *groups;
	struct trace_model gm;
	size_t n;
	char err[256];

	if (report_groups_build(m, by, &groups, &n))
		return;
	for (size_t i = 0; i < n && i < MAX_GROUPS; i++) {
		if (trace_model_load_filtered(path, &gm, TRACE_MODEL_ALL, &groups[i].filter, err,
					      sizeof(err)))
			continue;
		run_reports(&gm, 0, false);
		trace_model_free(&gm);
	}
	report_groups_free(groups, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the input's last byte picks the options: --group-by (none, process, container, user),
	 * --group-by-stack (0: by name), the exports' --steps-by (the preferred way, NVTX ranges,
	 * or a Python function's calls) and --group-by-input-shape (the top bit) */
	static const char *const steps_by[] = {NULL, "nvtx:ProfilerStep#", "py:train", NULL};
	unsigned pick = size ? data[size - 1] : 0;
	struct export_opts opts = {.python_depth = EXPORT_PYTHON_DEPTH,
				   .steps_by = steps_by[(pick >> 4) % 4]};
	struct trace_model m;
	char path[64], err[256];
	int fd;

	if (!sink && !(sink = fopen("/dev/null", "w")))
		abort();
	fd = memfd_create("fuzz_report", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!trace_model_load_only(path, &m, TRACE_MODEL_ALL, err, sizeof(err))) {
		run_reports(&m, (pick >> 2) % 4, pick >> 7 & 1);
		if (pick % 4)
			run_groups(path, &m, (enum group_by)(pick % 4));
		trace_model_free(&m);
	}
	(void)export_chrome(path, &opts, sink, err, sizeof(err));
	(void)export_kineto(path, &opts, sink, err, sizeof(err));
	close(fd);
	return 0;
}
