// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "lib/syscall_names.h"
#include "loader/live/gpu_sample.h"
#include "loader/live/live_waits.h"
#include "loader/live/top_rows.h"

/* What one row shows: rates over the last interval and totals since gpuspy saw it. */
struct top_row {
	uint32_t pid;
	unsigned processes;
	const char *name, *user, *container, *mode;
	char wait[24];		/* "input 78%": the kind that took most of the interval */
	const char *wait_kind;	/* "input", or "-" */
	uint32_t wait_tid;	/* the thread it is of; 0: none */
	const char *gpu_sample; /* "always", "off", or the --gpu-sample duty of its GPU figures */
	char syscall[40];	/* the main thread's syscall with most time, or off-CPU reason */
	bool exited;
	double v[32]; /* by enum field */
	uint64_t gpu_mem;
	const struct live_counters *c;
};

enum field {
	F_GPU_PCT,
	F_KERNELS_S,
	F_LAUNCHES_S,
	F_API_PCT,
	F_API_CALLS_S,
	F_HTOD_S,
	F_DTOH_S,
	F_CPU_PCT,
	F_WAIT_PCT,
	F_SYSCALL_PCT,
	F_NFIELDS,
};

enum col_src {
	SRC_FIELD,
	SRC_PID,
	SRC_PROCS,
	SRC_NAME,
	SRC_USER,
	SRC_CONTAINER,
	SRC_MODE,
	SRC_WAIT,
	SRC_WAIT_KIND,
	SRC_WAIT_TID,
	SRC_SYSCALL,
	SRC_GPU_MEM,
	SRC_EXITED,
	SRC_GPU_SAMPLE,
	SRC_TOTAL
};

/* Totals since gpuspy saw the process, by offset in struct live_counters. */
#define TOTAL(member) offsetof(struct live_counters, member)

enum col_show {
	SHOW_DATA, /* CSV and JSON only */
	SHOW_ALL,  /* also in the text and terminal views, which have room for few */
	SHOW_TEXT, /* only there: CSV and JSON have its parts in columns of their own */
};

struct top_col {
	struct table_col col;
	enum col_src src;
	size_t arg; /* field, or counter offset */
	enum col_show show;
};

static const struct top_col cols[] = {
    {{"PID", "pid", COL_ID}, SRC_PID, 0, SHOW_ALL},
    {{"Procs", "processes", COL_INT}, SRC_PROCS, 0, SHOW_DATA},
    {{"User", "user", COL_STR}, SRC_USER, 0, SHOW_ALL},
    {{"Container", "container", COL_STR}, SRC_CONTAINER, 0, SHOW_ALL},
    {{"Mode", "mode", COL_STR}, SRC_MODE, 0, SHOW_ALL},
    {{"GPU%", "gpu_busy_pct", COL_PCT}, SRC_FIELD, F_GPU_PCT, SHOW_ALL},
    {{"Kern/s", "kernels_per_s", COL_FLOAT1}, SRC_FIELD, F_KERNELS_S, SHOW_ALL},
    {{"GPU Sample", "gpu_sample", COL_STR}, SRC_GPU_SAMPLE, 0, SHOW_DATA},
    {{"Launch/s", "launches_per_s", COL_FLOAT1}, SRC_FIELD, F_LAUNCHES_S, SHOW_ALL},
    {{"API%", "api_pct", COL_PCT}, SRC_FIELD, F_API_PCT, SHOW_ALL},
    {{"API calls/s", "api_calls_per_s", COL_FLOAT1}, SRC_FIELD, F_API_CALLS_S, SHOW_DATA},
    {{"GPU Mem (B)", "gpu_mem_bytes", COL_INT}, SRC_GPU_MEM, 0, SHOW_ALL},
    {{"H2D B/s", "htod_bytes_per_s", COL_FLOAT1}, SRC_FIELD, F_HTOD_S, SHOW_ALL},
    {{"D2H B/s", "dtoh_bytes_per_s", COL_FLOAT1}, SRC_FIELD, F_DTOH_S, SHOW_ALL},
    {{"CPU%", "cpu_pct", COL_PCT}, SRC_FIELD, F_CPU_PCT, SHOW_ALL},
    {{"Wait", "wait", COL_STR}, SRC_WAIT, 0, SHOW_TEXT},
    {{"Wait", "wait", COL_STR}, SRC_WAIT_KIND, 0, SHOW_DATA},
    {{"Wait%", "wait_pct", COL_PCT}, SRC_FIELD, F_WAIT_PCT, SHOW_DATA},
    {{"Wait TID", "wait_tid", COL_ID}, SRC_WAIT_TID, 0, SHOW_DATA},
    {{"Syscall", "syscall", COL_STR}, SRC_SYSCALL, 0, SHOW_DATA},
    {{"Syscall%", "syscall_pct", COL_PCT}, SRC_FIELD, F_SYSCALL_PCT, SHOW_DATA},
    {{"Command", "name", COL_STR}, SRC_NAME, 0, SHOW_ALL},
    {{"Exited", "exited", COL_INT}, SRC_EXITED, 0, SHOW_DATA},
    {{"Launches", "launches", COL_INT}, SRC_TOTAL, TOTAL(launches), SHOW_DATA},
    {{"Kernels", "kernels", COL_INT}, SRC_TOTAL, TOTAL(kernels), SHOW_DATA},
    {{"API Calls", "api_calls", COL_INT}, SRC_TOTAL, TOTAL(api_calls), SHOW_DATA},
    {{"API Errors", "api_errors", COL_INT}, SRC_TOTAL, TOTAL(api_errors), SHOW_DATA},
    {{"API (ns)", "api_ns", COL_INT}, SRC_TOTAL, TOTAL(api_ns), SHOW_DATA},
    {{"GPU Busy (ns)", "gpu_busy_ns", COL_INT}, SRC_TOTAL, TOTAL(gpu_busy_ns), SHOW_DATA},
    {{"H2D (B)", "htod_bytes", COL_INT}, SRC_TOTAL, TOTAL(copy_bytes[GS_COPY_HTOD]), SHOW_DATA},
    {{"D2H (B)", "dtoh_bytes", COL_INT}, SRC_TOTAL, TOTAL(copy_bytes[GS_COPY_DTOH]), SHOW_DATA},
    {{"D2D (B)", "dtod_bytes", COL_INT}, SRC_TOTAL, TOTAL(copy_bytes[GS_COPY_DTOD]), SHOW_DATA},
    {{"Memset (B)", "memset_bytes", COL_INT}, SRC_TOTAL, TOTAL(memset_bytes), SHOW_DATA},
    {{"CPU (ns)", "cpu_ns", COL_INT}, SRC_TOTAL, TOTAL(cpu_ns), SHOW_DATA},
};

#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static const struct top_col *find_col(const char *key)
{
	for (size_t i = 0; i < NCOLS; i++)
		if (!strcmp(cols[i].col.json_key, key))
			return &cols[i];
	return NULL;
}

bool top_sort_key_valid(const char *key)
{
	return find_col(key) != NULL;
}

/* The keys the interactive view cycles through: the terminal's columns. */
const char *top_next_sort_key(const char *key)
{
	size_t at = 0;

	for (size_t i = 0; key && i < NCOLS; i++)
		if (!strcmp(cols[i].col.json_key, key))
			at = i + 1;
	for (size_t n = 0; n < NCOLS; n++, at++)
		if (cols[at % NCOLS].show != SHOW_DATA)
			return cols[at % NCOLS].col.json_key;
	return NULL;
}

static uint64_t total_of(const struct live_counters *c, size_t offset)
{
	uint64_t v;

	memcpy(&v, (const char *)c + offset, sizeof(v));
	return v;
}

static double per_s(uint64_t now, uint64_t before, double secs)
{
	return now >= before && secs > 0 ? (double)(now - before) / secs : 0.0;
}

static void fill_rates(struct top_row *row, const struct live_counters *c,
		       const struct live_counters *prev, double secs)
{
	row->v[F_GPU_PCT] = 100.0 * per_s(c->gpu_busy_ns, prev->gpu_busy_ns, secs) / 1e9;
	row->v[F_KERNELS_S] = per_s(c->kernels, prev->kernels, secs);
	row->v[F_LAUNCHES_S] = per_s(c->launches, prev->launches, secs);
	row->v[F_API_PCT] = 100.0 * per_s(c->api_ns, prev->api_ns, secs) / 1e9;
	row->v[F_API_CALLS_S] = per_s(c->api_calls, prev->api_calls, secs);
	row->v[F_HTOD_S] = per_s(c->copy_bytes[GS_COPY_HTOD], prev->copy_bytes[GS_COPY_HTOD], secs);
	row->v[F_DTOH_S] = per_s(c->copy_bytes[GS_COPY_DTOH], prev->copy_bytes[GS_COPY_DTOH], secs);
	row->v[F_CPU_PCT] = 100.0 * per_s(c->cpu_ns, prev->cpu_ns, secs) / 1e9;
	row->c = c;
}

/* Under --gpu-sample the interval's GPU rates would be 0 outside the windows and the window's
 * share at most once per period: the row shows the last period's estimate instead. */
static void fill_gpu_estimate(struct top_row *row, const struct live_model *lm,
			      const struct live_counters *c, const struct gpu_sample_cycle *cycle)
{
	double share, kernels_s;

	row->gpu_sample = lm->sample.label;
	if (!gpu_sample_estimate(&lm->sample, cycle, c->kernels, c->gpu_busy_ns, &share,
				 &kernels_s))
		return;
	row->v[F_GPU_PCT] = 100.0 * share;
	row->v[F_KERNELS_S] = kernels_s;
}

/* The kinds in the words top prints: the input, sync, I/O and CPU, and the others. */
static const char *wait_word(enum stall_kind k)
{
	static const char *const words[STALL_NKINDS] = {
	    [STALL_INPUT_WAIT] = "input",    [STALL_IO_WAIT] = "io",
	    [STALL_HOST_COMPUTE] = "cpu",    [STALL_SYNC_WAIT] = "sync",
	    [STALL_LAUNCH_BOUND] = "launch", [STALL_CPU_CONTENTION] = "runq",
	    [STALL_LOCK_WAIT] = "lock",	     [STALL_GPU_BOUND] = "gpu",
	    [STALL_OTHER_WAIT] = "other",
	};

	return k < STALL_NKINDS ? words[k] : "?";
}

/* What the shown thread spent most of the interval on (live_waits.h). */
static void describe_wait(struct top_row *row, const struct live_proc *p,
			  const struct live_waits *w)
{
	const struct live_wait_result *r = w && !p->exited ? live_waits_result(w, p->pid) : NULL;
	enum stall_kind k;
	double pct;

	row->wait_kind = "-";
	snprintf(row->wait, sizeof(row->wait), "-");
	if (!r || !r->known || !r->wall_ns)
		return;
	k = live_wait_dominant(r, &pct);
	row->wait_kind = wait_word(k);
	row->wait_tid = r->tid;
	row->v[F_WAIT_PCT] = pct;
	snprintf(row->wait, sizeof(row->wait), "%s %.0f%%", row->wait_kind, pct);
}

/* The main thread's syscall with most time, else its main off-CPU reason, from statistics. */
static void describe_syscall(struct top_row *row, const struct live_proc *p, double secs)
{
	char buf[32];
	uint64_t ns = 0;

	if (p->exited) {
		snprintf(row->syscall, sizeof(row->syscall), "exited");
	} else if (p->wait_ns) {
		snprintf(row->syscall, sizeof(row->syscall), "%s",
			 gs_syscall_name(p->wait_nr, buf, sizeof(buf)));
		ns = p->wait_ns;
	} else if (p->wait_offcpu >= 0 && p->wait_offcpu_ns) {
		snprintf(row->syscall, sizeof(row->syscall), "%s",
			 gs_offcpu_reason_name((unsigned)p->wait_offcpu));
		ns = p->wait_offcpu_ns;
	} else {
		snprintf(row->syscall, sizeof(row->syscall), "-");
	}
	row->v[F_SYSCALL_PCT] = secs > 0 ? 100.0 * (double)ns / 1e9 / secs : 0.0;
}

static bool active(const struct top_row *r)
{
	/* waiting is what idle processes do: it does not make a row active */
	for (int f = 0; f < F_NFIELDS; f++)
		if (f != F_WAIT_PCT && f != F_SYSCALL_PCT && r->v[f] > 0)
			return true;
	return r->gpu_mem > 0 || strcmp(r->mode, "-");
}

struct rows {
	struct top_row *v;
	size_t n, cap;
};

static int process_rows(const struct live_model *lm, const struct top_view *view, double secs,
			struct rows *rows)
{
	for (size_t i = 0; i < lm->nprocs; i++) {
		const struct live_proc *p = &lm->procs[i];
		struct top_row r = {.pid = p->pid,
				    .processes = 1,
				    .name = p->comm,
				    .user = p->user,
				    .container = p->container,
				    .mode = live_mode_name(p->mode),
				    .exited = p->exited,
				    .gpu_mem = p->exited ? 0 : p->gpu_mem_bytes};
		struct top_row *slot;

		fill_rates(&r, &p->c, &p->prev, secs);
		fill_gpu_estimate(&r, lm, &p->c, &p->cycle);
		describe_wait(&r, p, lm->waits);
		describe_syscall(&r, p, secs);
		if (!view->all && !active(&r))
			continue;
		slot = array_grow((void **)&rows->v, &rows->n, &rows->cap, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		*slot = r;
	}
	return 0;
}

static int group_rows(const struct live_model *lm, const struct live_group *g, size_t n, bool users,
		      double secs, struct rows *rows)
{
	for (size_t i = 0; i < n; i++) {
		struct top_row *r = array_grow((void **)&rows->v, &rows->n, &rows->cap, sizeof(*r));

		if (!r)
			return -ENOMEM;
		memset(r, 0, sizeof(*r));
		r->processes = g[i].members;
		r->name = "";
		r->user = users ? g[i].label : "";
		r->container = users ? "" : g[i].label;
		r->mode = "";
		r->gpu_mem = g[i].gpu_mem_bytes;
		r->wait_kind = "-";
		snprintf(r->wait, sizeof(r->wait), "-");
		snprintf(r->syscall, sizeof(r->syscall), "-");
		fill_rates(r, &g[i].sum, &g[i].prev_sum, secs);
		fill_gpu_estimate(r, lm, &g[i].sum, &g[i].cycle);
	}
	return 0;
}

static const char *sort_key;

/* Numbers descending, text ascending; the default order puts GPU work first. */
static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	static const enum field order[] = {F_GPU_PCT, F_LAUNCHES_S, F_API_PCT, F_CPU_PCT};
	const struct top_col *c = sort_key ? find_col(sort_key) : NULL;

	if (c && c->src == SRC_FIELD && x->v[c->arg] != y->v[c->arg])
		return x->v[c->arg] < y->v[c->arg] ? 1 : -1;
	if (c && c->src == SRC_TOTAL && total_of(x->c, c->arg) != total_of(y->c, c->arg))
		return total_of(x->c, c->arg) < total_of(y->c, c->arg) ? 1 : -1;
	if (c && c->src == SRC_GPU_MEM && x->gpu_mem != y->gpu_mem)
		return x->gpu_mem < y->gpu_mem ? 1 : -1;
	if (c && c->src == SRC_PID && x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (c && c->src == SRC_PROCS && x->processes != y->processes)
		return x->processes < y->processes ? 1 : -1;
	if (c && c->src == SRC_NAME)
		return strcmp(x->name, y->name);
	if (c && c->src == SRC_USER)
		return strcmp(x->user, y->user);
	if (c && c->src == SRC_CONTAINER)
		return strcmp(x->container, y->container);
	if (c && c->src == SRC_MODE)
		return strcmp(x->mode, y->mode);
	if (c && (c->src == SRC_WAIT || c->src == SRC_WAIT_KIND) &&
	    strcmp(x->wait_kind, y->wait_kind))
		return strcmp(x->wait_kind, y->wait_kind);
	if (c && (c->src == SRC_WAIT || c->src == SRC_WAIT_KIND) &&
	    x->v[F_WAIT_PCT] != y->v[F_WAIT_PCT])
		return x->v[F_WAIT_PCT] < y->v[F_WAIT_PCT] ? 1 : -1;
	if (c && c->src == SRC_WAIT_TID && x->wait_tid != y->wait_tid)
		return x->wait_tid < y->wait_tid ? -1 : 1;
	if (c && c->src == SRC_SYSCALL)
		return strcmp(x->syscall, y->syscall);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (x->v[order[i]] != y->v[order[i]])
			return x->v[order[i]] < y->v[order[i]] ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int set_cell(struct table_cell *cell, const struct top_col *c, const struct top_row *r)
{
	switch (c->src) {
	case SRC_FIELD:
		cell->d = r->v[c->arg];
		return 0;
	case SRC_PID:
		cell->u = r->pid;
		cell->empty = !r->pid;
		return 0;
	case SRC_PROCS:
		cell->u = r->processes;
		return 0;
	case SRC_GPU_MEM:
		cell->u = r->gpu_mem;
		return 0;
	case SRC_EXITED:
		cell->u = r->exited;
		return 0;
	case SRC_TOTAL:
		cell->u = total_of(r->c, c->arg);
		return 0;
	case SRC_NAME:
		return table_set_str(cell, r->name);
	case SRC_USER:
		return table_set_str(cell, r->user);
	case SRC_CONTAINER:
		return table_set_str(cell, r->container);
	case SRC_MODE:
		return table_set_str(cell, r->mode);
	case SRC_WAIT_KIND:
		return table_set_str(cell, r->wait_kind);
	case SRC_WAIT_TID:
		cell->u = r->wait_tid;
		cell->empty = !r->wait_tid;
		return 0;
	case SRC_SYSCALL:
		return table_set_str(cell, r->syscall);
	case SRC_GPU_SAMPLE:
		return table_set_str(cell, r->gpu_sample);
	default:
		return table_set_str(cell, r->wait);
	}
}

/* The columns shown: the terminal's few, or all of them for scripts; a group view has no
 * per-process columns, a process view no process count. Sampled GPU figures are marked '~'
 * (estimated) in their titles. */
static size_t shown_cols(const struct top_view *v, bool sampled, const struct top_col **out,
			 struct table_col *tcols)
{
	size_t n = 0;

	for (size_t i = 0; i < NCOLS; i++) {
		const struct top_col *c = &cols[i];
		bool group = v->group_by != GROUP_PROCESS;

		if (v->compact && c->show == SHOW_DATA && !(group && c->src == SRC_PROCS))
			continue;
		if (!v->compact && c->show == SHOW_TEXT)
			continue;
		if (group &&
		    (c->src == SRC_PID || c->src == SRC_MODE || c->src == SRC_WAIT ||
		     c->src == SRC_WAIT_KIND || c->src == SRC_WAIT_TID || c->src == SRC_SYSCALL ||
		     c->src == SRC_NAME || c->src == SRC_EXITED ||
		     (c->src == SRC_FIELD && (c->arg == F_WAIT_PCT || c->arg == F_SYSCALL_PCT))))
			continue;
		if (group && c->src == (v->group_by == GROUP_USER ? SRC_CONTAINER : SRC_USER))
			continue;
		if (!group && c->src == SRC_PROCS)
			continue;
		out[n] = c;
		tcols[n] = c->col;
		if (sampled && c->src == SRC_FIELD && c->arg == F_GPU_PCT)
			tcols[n].title = "~GPU%";
		if (sampled && c->src == SRC_FIELD && c->arg == F_KERNELS_S)
			tcols[n].title = "~Kern/s";
		n++;
	}
	return n;
}

static int print_rows(const struct rows *rows, const struct top_view *v, bool sampled, FILE *out)
{
	const struct top_col *shown[NCOLS];
	struct table_col tcols[NCOLS];
	size_t ncols = shown_cols(v, sampled, shown, tcols);
	size_t n = v->limit && v->limit < rows->n ? v->limit : rows->n;
	struct table t;
	int err = 0;

	table_init(&t, tcols, ncols);
	for (size_t i = 0; i < n && !err; i++) {
		struct table_cell *cell = table_add_row(&t);

		for (size_t c = 0; cell && c < ncols && !err; c++)
			err = set_cell(&cell[c], shown[c], &rows->v[i]);
		err = err ?: !cell;
	}
	if (!err)
		table_print(&t, v->format, out);
	if (!err && !n && v->format == TABLE_TEXT && !v->all)
		fputs("(no process was active in the interval; --all lists idle ones too)\n", out);
	table_free(&t);
	return err ? -ENOMEM : 0;
}

int top_rows_print(const struct live_model *lm, const struct top_view *v, FILE *out)
{
	double secs =
	    lm->tick_ns > lm->prev_tick_ns ? (double)(lm->tick_ns - lm->prev_tick_ns) / 1e9 : 0.0;
	struct rows rows = {0};
	int err;

	if (v->group_by == GROUP_CONTAINER)
		err = group_rows(lm, lm->containers, lm->ncontainers, false, secs, &rows);
	else if (v->group_by == GROUP_USER)
		err = group_rows(lm, lm->users, lm->nusers, true, secs, &rows);
	else
		err = process_rows(lm, v, secs, &rows);
	if (!err && rows.n) { /* qsort(NULL, 0, ...) is undefined: an idle host has no rows */
		sort_key = v->sort;
		qsort(rows.v, rows.n, sizeof(*rows.v), cmp_rows);
	}
	if (!err)
		err = print_rows(&rows, v, gpu_sample_is_sampled(&lm->sample), out);
	free(rows.v);
	return err;
}
