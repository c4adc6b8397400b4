// SPDX-License-Identifier: MIT
/*
 * ops: torch.profiler's key_averages().table() from the operator calls gpuspy probed, one row
 * per operator name over all traced processes (or, with --group-by-stack N, per name and top N
 * Python frames, as key_averages(group_by_stack_n=N); with --group-by-input-shape, per name and
 * input shapes, as key_averages(group_by_input_shape=True)). Text output copies torch's layout
 * (profiler_util.py's _build_table), so the two tables can be read side by side.
 */
#include <string.h>
#include "lib/array_grow.h"
#include "lib/string_pool.h"
#include "output/report/base/report.h"
#include "output/report/host/host_reports.h"

enum {
	C_NAME,
	C_SELF_PCT,
	C_SELF,
	C_TOTAL_PCT,
	C_TOTAL,
	C_AVG,
	C_SELF_CUDA,
	C_SELF_CUDA_PCT,
	C_CUDA_TOTAL,
	C_CUDA_AVG,
	C_CALLS,
	C_SHAPES, /* only with --group-by-input-shape */
	C_SOURCE, /* only with --group-by-stack */
	NCOLS,
};

static const struct table_col cols[NCOLS] = {
    [C_NAME] = {"Name", "name", COL_STR},
    [C_SELF_PCT] = {"Self CPU %", "self_cpu_pct", COL_PCT},
    [C_SELF] = {"Self CPU", "self_cpu_ns", COL_INT},
    [C_TOTAL_PCT] = {"CPU total %", "cpu_total_pct", COL_PCT},
    [C_TOTAL] = {"CPU total", "cpu_total_ns", COL_INT},
    [C_AVG] = {"CPU time avg", "cpu_avg_ns", COL_FLOAT1},
    [C_SELF_CUDA] = {"Self CUDA", "self_cuda_ns", COL_INT},
    [C_SELF_CUDA_PCT] = {"Self CUDA %", "self_cuda_pct", COL_PCT},
    [C_CUDA_TOTAL] = {"CUDA total", "cuda_total_ns", COL_INT},
    [C_CUDA_AVG] = {"CUDA time avg", "cuda_avg_ns", COL_FLOAT1},
    [C_CALLS] = {"# of Calls", "calls", COL_INT},
    [C_SHAPES] = {"Input Shapes", "input_shapes", COL_STR},
    [C_SOURCE] = {"Source Location", "source", COL_STR},
};

/* The columns grouping by stack without shapes: torch's, Source Location right after the calls */
static const struct table_col cols_stack[C_SHAPES + 1] = {
    [C_NAME] = {"Name", "name", COL_STR},
    [C_SELF_PCT] = {"Self CPU %", "self_cpu_pct", COL_PCT},
    [C_SELF] = {"Self CPU", "self_cpu_ns", COL_INT},
    [C_TOTAL_PCT] = {"CPU total %", "cpu_total_pct", COL_PCT},
    [C_TOTAL] = {"CPU total", "cpu_total_ns", COL_INT},
    [C_AVG] = {"CPU time avg", "cpu_avg_ns", COL_FLOAT1},
    [C_SELF_CUDA] = {"Self CUDA", "self_cuda_ns", COL_INT},
    [C_SELF_CUDA_PCT] = {"Self CUDA %", "self_cuda_pct", COL_PCT},
    [C_CUDA_TOTAL] = {"CUDA total", "cuda_total_ns", COL_INT},
    [C_CUDA_AVG] = {"CUDA time avg", "cuda_avg_ns", COL_FLOAT1},
    [C_CALLS] = {"# of Calls", "calls", COL_INT},
    [C_SHAPES] = {"Source Location", "source", COL_STR},
};

/* torch's profiler_util.py */
#define NAME_MAX_WIDTH	 55
#define SHAPES_MAX_WIDTH 80
#define SRC_MAX_WIDTH	 75
#define COL_WIDTH	 12
#define MAX_STACK_ENTRY	 5
#define SRC_MAX_LEN	 4096

struct op_row {
	uint32_t op, source; /* source: the pool id of the stack text (grouping by stack) */
	uint32_t shapes;     /* names id of the input shapes text (grouping by them); OP_NONE */
	uint64_t calls, self, total, self_cuda, cuda_total;
};

struct grouping {
	const struct trace_model *m;
	unsigned depth;		    /* --group-by-stack N; 0: by name */
	bool by_shapes;		    /* --group-by-input-shape */
	int shapes_col, source_col; /* their table columns, -1: none */
	struct op_row *rows;
	size_t nrows, cap;
	struct key_index ix_rows;   /* (op, source) -> rows[] */
	struct string_pool sources; /* id 0: "" (no stack) */
	struct key_index ix_stacks; /* py stacks[] index -> source id */
};

/* torch's "file(line): function" entries, leaf first, one per line. */
static void format_stack(const struct py_model *pm, const struct py_stack *s, unsigned depth,
			 char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t j = 0; j < s->nframes && j < depth && at + 1 < len; j++) {
		const char *qualname, *filename;
		int line, n;

		py_frame_symbol(pm, py_stack_frame(pm, s, j), &qualname, &filename, &line);
		n = snprintf(buf + at, len - at, "%s%s(%d): %s", j ? "\n" : "", filename, line,
			     qualname);
		if (n < 0)
			break;
		at += (size_t)n;
	}
}

/* The pool id of the text of the call's Python stack; stacks are shared by many calls, so
 * each is formatted once. */
static int source_of(struct grouping *g, const struct op_call *c, uint32_t *id)
{
	const struct py_model *pm = &g->m->py;
	const struct py_stack *s = py_model_stack_at(pm, c->pid, c->tid, c->ts);
	char text[SRC_MAX_LEN];
	size_t cached;

	if (!s) {
		*id = 0;
		return 0;
	}
	if (key_index_find(&g->ix_stacks, (uint64_t)(s - pm->stacks), 0, &cached)) {
		*id = (uint32_t)cached;
		return 0;
	}
	format_stack(pm, s, g->depth, text, sizeof(text));
	if (string_pool_intern(&g->sources, text, id))
		return -1;
	return key_index_put(&g->ix_stacks, (uint64_t)(s - pm->stacks), 0, *id);
}

/* torch prints "[]" for an event without inputs: a call without shapes is one of those */
static const char *shapes_text(const struct op_model *om, uint32_t shapes)
{
	return shapes == OP_NONE ? "[]" : op_model_name(om, shapes);
}

static uint32_t shapes_of(const struct grouping *g, const struct op_call *c)
{
	const struct op_model *om = &g->m->ops;
	const struct op_torch *x = op_model_torch(om, c);
	const char *text = op_model_shapes(om, c);

	if (!g->by_shapes || !x || !text || !strcmp(text, "[]") || !text[0])
		return OP_NONE;
	return x->shapes;
}

static int add_call(struct grouping *g, const struct op_call *c)
{
	uint32_t source = 0, shapes = shapes_of(g, c);
	uint64_t k1 = (uint64_t)shapes << 32 | c->op;
	struct op_row *r;
	size_t i;

	if (g->depth && source_of(g, c, &source))
		return -1;
	if (key_index_find(&g->ix_rows, k1, source, &i)) {
		r = &g->rows[i];
	} else {
		r = array_grow((void **)&g->rows, &g->nrows, &g->cap, sizeof(*r));
		if (!r || key_index_put(&g->ix_rows, k1, source, g->nrows - 1))
			return -1;
		r->op = c->op;
		r->source = source;
		r->shapes = shapes;
	}
	r->calls++;
	r->self += c->self_ns;
	r->total += c->dur;
	r->self_cuda += c->self_cuda_ns;
	r->cuda_total += c->cuda_total_ns;
	return 0;
}

static double share(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

static int fill_row(const struct grouping *g, const struct op_row *r, uint64_t self_total,
		    uint64_t cuda_total, struct table *t)
{
	struct table_cell *row = table_add_row(t);

	if (!row || table_set_str(&row[C_NAME], op_model_name(&g->m->ops, r->op)))
		return -1;
	row[C_SELF_PCT].d = share(r->self, self_total);
	row[C_SELF].u = r->self;
	/* torch divides both CPU shares by the self total */
	row[C_TOTAL_PCT].d = share(r->total, self_total);
	row[C_TOTAL].u = r->total;
	row[C_AVG].d = (double)r->total / (double)r->calls;
	row[C_SELF_CUDA].u = r->self_cuda;
	row[C_SELF_CUDA_PCT].d = share(r->self_cuda, cuda_total);
	row[C_CUDA_TOTAL].u = r->cuda_total;
	row[C_CUDA_AVG].d = (double)r->cuda_total / (double)r->calls;
	row[C_CALLS].u = r->calls;
	if (g->shapes_col >= 0 &&
	    table_set_str(&row[g->shapes_col], shapes_text(&g->m->ops, r->shapes)))
		return -1;
	if (g->source_col >= 0 &&
	    table_set_str(&row[g->source_col], string_pool_get(&g->sources, r->source)))
		return -1;
	return 0;
}

static int group_calls(struct grouping *g)
{
	const struct op_model *om = &g->m->ops;
	uint32_t none;

	if (string_pool_intern(&g->sources, "", &none))
		return -1;
	for (size_t i = 0; i < om->ncalls; i++)
		if (add_call(g, &om->calls[i]))
			return -1;
	return 0;
}

static void totals(const struct op_model *om, uint64_t *self, uint64_t *self_cuda)
{
	*self = *self_cuda = 0;
	for (size_t i = 0; i < om->ncalls; i++) {
		*self += om->calls[i].self_ns;
		*self_cuda += om->calls[i].self_cuda_ns;
	}
}

static int build_params(const struct trace_model *m, const struct report_params *p, struct table *t)
{
	struct grouping g = {.m = m,
			     .depth = p->group_by_stack,
			     .by_shapes = p->group_by_input_shape,
			     .shapes_col = p->group_by_input_shape ? C_SHAPES : -1,
			     .source_col = -1};
	uint64_t self_total, cuda_total;
	int err;

	/* Input Shapes and Source Location exist only when grouping by them, in that order */
	if (g.depth)
		g.source_col = g.by_shapes ? C_SOURCE : C_SHAPES;
	if (g.depth && !g.by_shapes)
		table_init(t, cols_stack, C_SHAPES + 1);
	else
		table_init(t, cols, g.by_shapes ? (size_t)C_SHAPES + 1 + !!g.depth : C_SHAPES);
	totals(&m->ops, &self_total, &cuda_total);
	err = group_calls(&g);
	for (size_t i = 0; !err && i < g.nrows; i++)
		err = fill_row(&g, &g.rows[i], self_total, cuda_total, t);
	free(g.rows);
	key_index_free(&g.ix_rows);
	key_index_free(&g.ix_stacks);
	string_pool_free(&g.sources);
	return err;
}

/* torch's _format_time: microseconds with three decimals, in the largest unit >= 1 */
static void format_time(char *buf, size_t len, double ns)
{
	double us = ns / 1e3;

	if (us >= 1e6)
		snprintf(buf, len, "%.3fs", us / 1e6);
	else if (us >= 1e3)
		snprintf(buf, len, "%.3fms", us / 1e3);
	else
		snprintf(buf, len, "%.3fus", us);
}

/* torch's _format_time_share */
static void format_share(char *buf, size_t len, double pct, uint64_t total)
{
	if (!total)
		snprintf(buf, len, "NaN");
	else
		snprintf(buf, len, "%.2f%%", pct);
}

struct layout {
	int name_w, shapes_w, src_w;
	bool cuda, shapes, source;
	int shapes_col, source_col; /* the table's columns, -1: none */
	uint64_t self_total, cuda_total;
};

/* One line: every field padded to its width and followed by two spaces, as torch does. */
static void print_line(const struct layout *l, const char *const *fields, FILE *out)
{
	size_t n = 0;

	fprintf(out, "%*s  ", l->name_w, fields[n++]);
	for (int c = C_SELF_PCT; c <= C_CALLS; c++) {
		if (!l->cuda && c >= C_SELF_CUDA && c <= C_CUDA_AVG)
			continue;
		fprintf(out, "%*s  ", COL_WIDTH, fields[n++]);
	}
	if (l->shapes)
		fprintf(out, "%*s  ", l->shapes_w, fields[n++]);
	if (l->source)
		fprintf(out, "%-*s  ", l->src_w, fields[n]);
	fputc('\n', out);
}

static void print_dashes(int w, FILE *out)
{
	for (int i = 0; i < w; i++)
		fputc('-', out);
	fputs("  ", out);
}

static void print_rule(const struct layout *l, FILE *out)
{
	int ncols = (C_CALLS - C_SELF_PCT + 1) - (l->cuda ? 0 : 4);

	print_dashes(l->name_w, out);
	for (int c = 0; c < ncols; c++)
		print_dashes(COL_WIDTH, out);
	if (l->shapes)
		print_dashes(l->shapes_w, out);
	if (l->source)
		print_dashes(l->src_w, out);
	fputc('\n', out);
}

/* torch's trim_path: keeps the end of a long entry, marked with "..." */
static const char *trim_entry(const char *s, size_t len, int width, char *buf, size_t buflen)
{
	if (len > (size_t)width) {
		s += len - (size_t)width;
		len = (size_t)width;
		if (len > 3) {
			snprintf(buf, buflen, "...%.*s", (int)len - 3, s + 3);
			return buf;
		}
	}
	snprintf(buf, buflen, "%.*s", (int)len, s);
	return buf;
}

static void print_row(const struct layout *l, const struct table_cell *row, FILE *out)
{
	char v[NCOLS][64], name[NAME_MAX_WIDTH + 1], src[SRC_MAX_WIDTH + 8];
	char shapes[SHAPES_MAX_WIDTH + 1];
	const char *fields[NCOLS] = {0};
	const char *stack = l->source ? row[l->source_col].s : NULL, *nl;
	size_t n = 0, name_len = strlen(row[C_NAME].s);

	/* torch cuts names at its maximum width, whatever the column's */
	snprintf(name, sizeof(name), "%.*s%s",
		 name_len >= NAME_MAX_WIDTH - 3 ? NAME_MAX_WIDTH - 3 : (int)name_len, row[C_NAME].s,
		 name_len >= NAME_MAX_WIDTH - 3 ? "..." : "");
	fields[n++] = name;
	format_share(v[C_SELF_PCT], 64, row[C_SELF_PCT].d, l->self_total);
	format_time(v[C_SELF], 64, (double)row[C_SELF].u);
	format_share(v[C_TOTAL_PCT], 64, row[C_TOTAL_PCT].d, l->self_total);
	format_time(v[C_TOTAL], 64, (double)row[C_TOTAL].u);
	format_time(v[C_AVG], 64, row[C_AVG].d);
	format_time(v[C_SELF_CUDA], 64, (double)row[C_SELF_CUDA].u);
	format_share(v[C_SELF_CUDA_PCT], 64, row[C_SELF_CUDA_PCT].d, l->cuda_total);
	format_time(v[C_CUDA_TOTAL], 64, (double)row[C_CUDA_TOTAL].u);
	format_time(v[C_CUDA_AVG], 64, row[C_CUDA_AVG].d);
	snprintf(v[C_CALLS], 64, "%llu", (unsigned long long)row[C_CALLS].u);
	for (int c = C_SELF_PCT; c <= C_CALLS; c++)
		if (l->cuda || c < C_SELF_CUDA || c > C_CUDA_AVG)
			fields[n++] = v[c];
	if (l->shapes) {
		/* torch cuts them at the column's width, unmarked */
		snprintf(shapes, sizeof(shapes), "%.*s", l->shapes_w, row[l->shapes_col].s);
		fields[n++] = shapes;
	}
	if (!stack) {
		print_line(l, fields, out);
		return;
	}
	/* the leaf frame on the row, up to MAX_STACK_ENTRY - 1 callers below it, a blank line */
	for (int entry = 0; entry < MAX_STACK_ENTRY && (entry == 0 || *stack); entry++) {
		nl = strchr(stack, '\n');
		fields[n] = trim_entry(stack, nl ? (size_t)(nl - stack) : strlen(stack), l->src_w,
				       src, sizeof(src));
		print_line(l, fields, out);
		for (size_t k = 0; k < n; k++)
			fields[k] = "";
		stack = nl ? nl + 1 : stack + strlen(stack);
	}
	fields[n] = "";
	print_line(l, fields, out);
}

/* Input shapes as torch prints them, "[]" for none. */
static const char *call_shapes(const struct op_model *om, const struct op_call *c)
{
	const char *s = op_model_shapes(om, c);

	return s && s[0] ? s : "[]";
}

/* torch shows Input Shapes when some call has shapes, in a column as wide as the longest
 * (whether --limit shows it or not), +4, up to its maximum. */
static void measure_shapes(const struct op_model *om, struct layout *l)
{
	size_t longest = 0;

	for (size_t i = 0; i < om->ncalls; i++) {
		const char *s = call_shapes(om, &om->calls[i]);
		size_t n = strlen(s);

		l->shapes |= strcmp(s, "[]") != 0;
		longest = n > longest ? n : longest;
	}
	l->shapes_w = (int)(longest + 4 < SHAPES_MAX_WIDTH ? longest + 4 : SHAPES_MAX_WIDTH);
}

/* The name column fits the longest operator name called (whether --limit shows it or not,
 * as torch measures before cutting rows), +4, up to torch's maximum; the source column the
 * longest frame shown. */
static void measure(const struct trace_model *m, const struct table *t, struct layout *l)
{
	const struct op_model *om = &m->ops;
	uint32_t last = OP_NONE;
	size_t longest = 0;

	for (size_t i = 0; i < om->ncalls; i++) {
		size_t n;

		if (om->calls[i].op == last)
			continue;
		last = om->calls[i].op;
		n = strlen(op_model_name(om, last));
		longest = n > longest ? n : longest;
	}
	l->name_w = (int)(longest + 4 < NAME_MAX_WIDTH ? longest + 4 : NAME_MAX_WIDTH);
	if (l->shapes_col >= 0)
		measure_shapes(om, l);
	longest = 0;
	for (size_t i = 0; l->source && i < t->nrows; i++) {
		const char *s = t->cells[i * t->ncols + (size_t)l->source_col].s;

		while (s && *s) {
			size_t n = strcspn(s, "\n");

			longest = n > longest ? n : longest;
			s += n + (s[n] == '\n');
		}
	}
	l->src_w = (int)(longest + 4 < SRC_MAX_WIDTH ? longest + 4 : SRC_MAX_WIDTH);
}

static int column(const struct table *t, const char *json_key)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (!strcmp(t->cols[c].json_key, json_key))
			return (int)c;
	return -1;
}

static void print_text(const struct trace_model *m, const struct table *t, FILE *out)
{
	const char *fields[NCOLS];
	struct layout l = {.shapes_col = column(t, cols[C_SHAPES].json_key),
			   .source_col = column(t, cols[C_SOURCE].json_key)};
	char total[64];
	size_t n = 0;

	if (!t->nrows)
		return; /* torch prints nothing for no events */
	l.source = l.source_col >= 0;
	totals(&m->ops, &l.self_total, &l.cuda_total);
	l.cuda = l.cuda_total > 0;
	measure(m, t, &l);
	for (int c = 0; c <= C_CALLS; c++)
		if (l.cuda || c < C_SELF_CUDA || c > C_CUDA_AVG)
			fields[n++] = cols[c].title;
	if (l.shapes)
		fields[n++] = cols[C_SHAPES].title;
	if (l.source)
		fields[n++] = cols[C_SOURCE].title;
	print_rule(&l, out);
	print_line(&l, fields, out);
	print_rule(&l, out);
	for (size_t r = 0; r < t->nrows; r++)
		print_row(&l, &t->cells[r * t->ncols], out);
	print_rule(&l, out);
	format_time(total, sizeof(total), (double)l.self_total);
	fprintf(out, "Self CPU time total: %s\n", total);
	if (l.cuda) {
		format_time(total, sizeof(total), (double)l.cuda_total);
		fprintf(out, "Self CUDA time total: %s\n", total);
	}
}

const struct report_def report_ops = {
    .name = "ops",
    .summary = "PyTorch operators (at::_ops::<op>::call probes, or every RecordFunction from "
	       "the in-process observer), as torch.profiler's key_averages().table()",
    .cols = cols,
    .ncols = NCOLS,
    .default_sort = "cpu_total_ns",
    .build_params = build_params,
    .print_text = print_text,
};
