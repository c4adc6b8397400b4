// SPDX-License-Identifier: MIT
/*
 * python: a profile per Python function, as cProfile's tottime/cumtime but sampled: CPU time
 * from the CPU samples (self: the function was the leaf frame; total: it was anywhere on the
 * stack, once per sample however often it recursed), then what ran under the function on the
 * same thread, found through the stack the thread was under at the time: CUDA kernel
 * launches, syscall span time and off-CPU span time, each self (the leaf Python frame) and
 * total. Functions are (qualname, file, first line): lines of one function are one row, and
 * the same function in several processes (forked workers) is one row.
 */
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "output/model/py_names.h"
#include "output/report/base/report.h"
#include "output/report/host/host_reports.h"
#include "output/trace/cuda_api.h"
#include "output/trace/trace_reader.h"

enum value { V_SAMPLES, V_CPU_NS, V_LAUNCHES, V_SYSCALL_NS, V_OFFCPU_NS, V_NVALUES };

enum {
	C_SELF_PCT,
	C_SELF_NS,
	C_TOTAL_PCT,
	C_TOTAL_NS,
	C_SELF_SAMPLES,
	C_SAMPLES,
	C_SELF_LAUNCHES,
	C_LAUNCHES,
	C_SELF_SYSCALL,
	C_SYSCALL,
	C_SELF_OFFCPU,
	C_OFFCPU,
	C_FUNCTION,
	C_FILE,
	C_LINE,
	C_NCOLS
};

static const struct table_col cols[] = {
    [C_SELF_PCT] = {"Self (%)", "self_pct", COL_PCT},
    [C_SELF_NS] = {"Self CPU (ns)", "self_ns", COL_INT},
    [C_TOTAL_PCT] = {"Total (%)", "total_pct", COL_PCT},
    [C_TOTAL_NS] = {"Total CPU (ns)", "total_ns", COL_INT},
    [C_SELF_SAMPLES] = {"Self Samples", "self_samples", COL_INT},
    [C_SAMPLES] = {"Samples", "samples", COL_INT},
    [C_SELF_LAUNCHES] = {"Self Launches", "self_launches", COL_INT},
    [C_LAUNCHES] = {"Launches", "launches", COL_INT},
    [C_SELF_SYSCALL] = {"Self Syscall (ns)", "self_syscall_ns", COL_INT},
    [C_SYSCALL] = {"Syscall (ns)", "syscall_ns", COL_INT},
    [C_SELF_OFFCPU] = {"Self Off-CPU (ns)", "self_offcpu_ns", COL_INT},
    [C_OFFCPU] = {"Off-CPU (ns)", "offcpu_ns", COL_INT},
    [C_FUNCTION] = {"Function", "function", COL_STR},
    [C_FILE] = {"File", "file", COL_STR},
    [C_LINE] = {"Line", "line", COL_ID},
};

struct func_stat {
	const struct py_frame *frame; /* one frame of the function, for its names */
	uint64_t mark;		      /* the last event counted in total[] */
	uint64_t self[V_NVALUES], total[V_NVALUES];
};

struct py_profile {
	const struct py_model *pm;
	struct func_stat *funcs;
	size_t n, cap;
	struct key_index ix; /* py_func_key -> funcs[] */
	uint64_t mark;
	uint64_t sampled_ns; /* all samples' periods: the percentages' base */
};

static struct func_stat *func_of(struct py_profile *p, const struct py_frame *f)
{
	struct py_func_key k = py_frame_func(p->pm, f);
	struct func_stat *s;
	size_t i;

	if (key_index_find(&p->ix, k.k1, k.k2, &i))
		return &p->funcs[i];
	s = array_grow((void **)&p->funcs, &p->n, &p->cap, sizeof(*s));
	if (!s || key_index_put(&p->ix, k.k1, k.k2, p->n - 1))
		return NULL;
	s->frame = f;
	return s;
}

/* `amount` of value `v` to the stack's leaf function (self) and once to every function on it
 * (total): a recursive function is not counted twice for one event. */
static int attribute(struct py_profile *p, const struct py_stack *s, enum value v, uint64_t amount)
{
	p->mark++;
	for (size_t j = 0; j < s->nframes; j++) {
		struct func_stat *f = func_of(p, py_stack_frame(p->pm, s, j));

		if (!f)
			return -1;
		if (!j)
			f->self[v] += amount;
		if (f->mark != p->mark) {
			f->mark = p->mark;
			f->total[v] += amount;
		}
	}
	return 0;
}

static uint64_t period_of(const struct py_stack *s)
{
	return s->end_ts > s->ts ? s->end_ts - s->ts : 0;
}

static int add_samples(struct py_profile *p)
{
	for (size_t i = 0; i < py_model_stack_count(p->pm); i++) {
		const struct py_stack *s = py_model_stack(p->pm, i);
		uint64_t period = period_of(s);

		if (s->kind != GS_PY_SAMPLE)
			continue;
		p->sampled_ns += period;
		if (attribute(p, s, V_SAMPLES, 1) || attribute(p, s, V_CPU_NS, period))
			return -1;
	}
	return 0;
}

/* Successful outermost launches count, as in cuda_launches: a runtime launch and the driver
 * launch inside it are one. */
static bool is_launch(const struct gs_cuda_call *c)
{
	struct cuda_call_info info;

	if (c->hdr.flags & GS_CUDA_NESTED || !cuda_call_decode(c, &info))
		return false;
	return (info.op == GS_CUDA_OP_LAUNCH || info.op == GS_CUDA_OP_GRAPH) &&
	       !cuda_call_failed(c, &info);
}

static int add_record(struct py_profile *p, const struct gs_hdr *h)
{
	const struct py_stack *s;
	enum value v;
	uint64_t amount;

	switch (h->type) {
	case GS_REC_SYSCALL:
		v = V_SYSCALL_NS;
		amount = ((const struct gs_syscall *)h)->dur_ns;
		break;
	case GS_REC_OFFCPU:
		v = V_OFFCPU_NS;
		amount = ((const struct gs_offcpu *)h)->dur_ns;
		break;
	case GS_REC_CUDA_CALL:
		if (!is_launch((const void *)h))
			return 0;
		v = V_LAUNCHES;
		amount = 1;
		break;
	default:
		return 0;
	}
	s = py_model_stack_at(p->pm, h->pid, h->tid, h->ts);
	return s ? attribute(p, s, v, amount) : 0;
}

/* Spans are not in the model: the file is read again for them. */
static int add_spans(struct py_profile *p, const struct trace_model *m)
{
	struct trace_reader *r;
	const struct gs_hdr *h;
	char err[256];
	int ret;

	if (!py_model_stack_count(p->pm))
		return 0;
	if (trace_reader_open(m->path, &r, err, sizeof(err)))
		return -1;
	trace_reader_set_filter(r, m->filter);
	while ((ret = trace_reader_next(r, &h)) > 0)
		if (add_record(p, h)) {
			ret = -1;
			break;
		}
	trace_reader_close(r);
	/* a truncated tail was already accepted when the model was loaded */
	return ret < 0 && m->complete ? -1 : 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int add_row(const struct py_profile *p, const struct func_stat *f, struct table *t)
{
	struct table_cell *row = table_add_row(t);
	const char *qualname, *filename;
	const struct py_code *c;

	if (!row)
		return -1;
	py_frame_symbol(p->pm, f->frame, &qualname, &filename, NULL);
	c = py_frame_code(p->pm, f->frame);
	row[C_SELF_PCT].d = pct(f->self[V_CPU_NS], p->sampled_ns);
	row[C_SELF_NS].u = f->self[V_CPU_NS];
	row[C_TOTAL_PCT].d = pct(f->total[V_CPU_NS], p->sampled_ns);
	row[C_TOTAL_NS].u = f->total[V_CPU_NS];
	row[C_SELF_SAMPLES].u = f->self[V_SAMPLES];
	row[C_SAMPLES].u = f->total[V_SAMPLES];
	row[C_SELF_LAUNCHES].u = f->self[V_LAUNCHES];
	row[C_LAUNCHES].u = f->total[V_LAUNCHES];
	row[C_SELF_SYSCALL].u = f->self[V_SYSCALL_NS];
	row[C_SYSCALL].u = f->total[V_SYSCALL_NS];
	row[C_SELF_OFFCPU].u = f->self[V_OFFCPU_NS];
	row[C_OFFCPU].u = f->total[V_OFFCPU_NS];
	row[C_LINE].u = c && c->firstlineno > 0 ? (uint64_t)c->firstlineno : 0;
	row[C_LINE].empty = !c;
	return table_set_str(&row[C_FUNCTION], qualname) || table_set_str(&row[C_FILE], filename)
		   ? -1
		   : 0;
}

static void profile_free(struct py_profile *p)
{
	free(p->funcs);
	key_index_free(&p->ix);
}

static int build(const struct trace_model *m, struct table *t)
{
	struct py_profile p = {.pm = &m->py};
	int err = add_samples(&p) || add_spans(&p, m);

	for (size_t i = 0; i < p.n && !err; i++)
		err = add_row(&p, &p.funcs[i], t);
	profile_free(&p);
	return err ? -1 : 0;
}

/*
 * --format collapsed: Brendan Gregg's folded stacks, which flamegraph.pl, inferno and
 * speedscope read: one line per distinct stack, root first, frames joined by ';', then a
 * space and the weight. Frames are labelled as py-spy labels them, "qualname (file:line)"
 * with the line each frame was at, so the graphs look like the ones Python users know.
 */
struct folded {
	struct string_pool stacks;
	uint64_t *weight; /* by stacks id */
	size_t cap;
	char *buf;
	size_t len, buf_cap;
};

static int folded_append(struct folded *fo, const char *s)
{
	size_t n = strlen(s);

	if (fo->len + n + 1 > fo->buf_cap) {
		size_t cap = (fo->len + n + 1) * 2;
		char *b = realloc(fo->buf, cap);

		if (!b)
			return -1;
		fo->buf = b;
		fo->buf_cap = cap;
	}
	memcpy(fo->buf + fo->len, s, n + 1);
	fo->len += n;
	return 0;
}

/* ';' separates frames and the last space the weight: a name with ';' or a newline (a file
 * path can have them) must not break the line apart. */
static void folded_clean(char *label)
{
	for (char *c = label; *c; c++)
		if (*c == ';' || *c == '\n' || *c == '\r')
			*c = '_';
}

static int folded_line(struct folded *fo, const struct py_model *pm, const struct py_stack *s)
{
	char label[512];

	fo->len = 0;
	if (folded_append(fo, ""))
		return -1;
	/* a cut stack's outermost frames are missing: do not let it pose as a root */
	if (s->flags & GS_PY_TRUNCATED && folded_append(fo, "[truncated];"))
		return -1;
	if (!s->nframes)
		return folded_append(fo, "[no Python frame]");
	for (size_t j = s->nframes; j-- > 0;) {
		py_frame_label(pm, py_stack_frame(pm, s, j), label, sizeof(label));
		folded_clean(label);
		if (folded_append(fo, label) || (j && folded_append(fo, ";")))
			return -1;
	}
	return 0;
}

static int folded_add(struct folded *fo, uint64_t w)
{
	uint32_t id;

	if (string_pool_intern(&fo->stacks, fo->buf, &id))
		return -1;
	if (id >= fo->cap) {
		size_t cap = fo->cap ? fo->cap * 2 : 256;
		uint64_t *g = realloc(fo->weight, cap * sizeof(*g));

		if (!g)
			return -1;
		memset(g + fo->cap, 0, (cap - fo->cap) * sizeof(*g));
		fo->weight = g;
		fo->cap = cap;
	}
	fo->weight[id] += w;
	return 0;
}

static const struct string_pool *sort_pool;

static int by_stack(const void *a, const void *b)
{
	return strcmp(string_pool_get(sort_pool, *(const uint32_t *)a),
		      string_pool_get(sort_pool, *(const uint32_t *)b));
}

/* Sorted, so the same trace always gives the same file. */
static int folded_print(struct folded *fo, FILE *out)
{
	size_t n = fo->stacks.n;
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));

	if (!order)
		return -1;
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	sort_pool = &fo->stacks;
	qsort(order, n, sizeof(*order), by_stack);
	for (size_t i = 0; i < n; i++)
		if (fo->weight[order[i]])
			fprintf(out, "%s %llu\n", string_pool_get(&fo->stacks, order[i]),
				(unsigned long long)fo->weight[order[i]]);
	free(order);
	return 0;
}

static int collapsed(const struct trace_model *m, bool weight_ns, FILE *out)
{
	const struct py_model *pm = &m->py;
	struct folded fo = {0};
	int err = 0;

	for (size_t i = 0; i < py_model_stack_count(pm) && !err; i++) {
		const struct py_stack *s = py_model_stack(pm, i);

		if (s->kind != GS_PY_SAMPLE)
			continue;
		err = folded_line(&fo, pm, s) || folded_add(&fo, weight_ns ? period_of(s) : 1);
	}
	if (!err)
		err = folded_print(&fo, out);
	string_pool_free(&fo.stacks);
	free(fo.weight);
	free(fo.buf);
	return err ? -1 : 0;
}

const struct report_def report_python = {
    .name = "python",
    .summary = "per Python function: sampled self and total CPU time, and the CUDA launches, "
	       "syscall and off-CPU time under it",
    .cols = cols,
    .ncols = C_NCOLS,
    .default_sort = "total_ns",
    .build = build,
    .collapsed = collapsed,
    .needs = TRACE_MODEL_PY_STACKS,
};
