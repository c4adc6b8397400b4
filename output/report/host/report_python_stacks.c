// SPDX-License-Identifier: MIT
/* python_stacks: every captured Python stack in time order, leaf first, for reading a trace's
 * stacks one by one and for tests that compare them with a program's own tracebacks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/report/base/report.h"
#include "output/report/host/host_reports.h"

enum { C_TS, C_END, C_PID, C_TID, C_KIND, C_DEPTH, C_FLAGS, C_FRAMES, C_NCOLS };

static const struct table_col cols[] = {
    [C_TS] = {"Start (ns)", "ts", COL_ID}, /* CLOCK_MONOTONIC, as the records hold it */
    [C_END] = {"End (ns)", "end_ts", COL_ID},	[C_PID] = {"PID", "pid", COL_ID},
    [C_TID] = {"TID", "tid", COL_ID},		[C_KIND] = {"Kind", "kind", COL_STR},
    [C_DEPTH] = {"Depth", "depth", COL_INT},	[C_FLAGS] = {"Flags", "flags", COL_STR},
    [C_FRAMES] = {"Frames", "frames", COL_STR},
};

static const char *flags_name(uint32_t flags)
{
	if (flags & GS_PY_NO_THREAD)
		return "no-python-thread";
	return flags & GS_PY_TRUNCATED ? "truncated" : "";
}

/* Frames leaf first, "qualname (file:line)" joined by " <- ". */
static char *frames_text(const struct py_model *pm, const struct py_stack *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t j = 0; j < s->nframes; j++) {
		const char *qualname, *filename;
		int line;

		py_frame_symbol(pm, py_stack_frame(pm, s, j), &qualname, &filename, &line);
		fprintf(f, "%s%s (%s:%d)", j ? " <- " : "", qualname, filename, line);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int add_row(const struct py_model *pm, const struct py_stack *s, struct table *t)
{
	struct table_cell *row = table_add_row(t);
	char *text;
	int err;

	if (!row)
		return -1;
	text = frames_text(pm, s);
	err = !text || table_set_str(&row[C_FRAMES], text) ||
	      table_set_str(&row[C_KIND], py_stack_kind_name(s->kind)) ||
	      table_set_str(&row[C_FLAGS], flags_name(s->flags));
	free(text);
	row[C_TS].u = s->ts;
	row[C_END].u = s->end_ts;
	row[C_PID].u = s->pid;
	row[C_TID].u = s->tid;
	row[C_DEPTH].u = s->nframes;
	return err ? -1 : 0;
}

static int build(const struct trace_model *m, struct table *t)
{
	for (size_t i = 0; i < py_model_stack_count(&m->py); i++)
		if (add_row(&m->py, py_model_stack(&m->py, i), t))
			return -1;
	return 0;
}

const struct report_def report_python_stacks = {
    .name = "python_stacks",
    .summary = "every captured Python stack in time order, leaf frame first",
    .cols = cols,
    .ncols = C_NCOLS,
    .build = build,
    .needs = TRACE_MODEL_PY_STACKS,
};
