// SPDX-License-Identifier: MIT
/* Where each step's time went (step_time.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "lib/exact_stats.h"
#include "lib/syscall_names.h"
#include "output/analysis/py_where.h"
#include "output/analysis/step_gpu.h"
#include "output/analysis/step_time.h"
#include "output/analysis/steps.h"
#include "output/analysis/thread_spans.h"

#define TEXT_LEN 320

/* A loop thread's step, for finding the spans that overlap one. */
struct window {
	uint32_t pid, tid;
	uint64_t start, end;
};

/* A step's time of one kind, place and cause, before the step's own verdict moves it. */
struct local_piece {
	uint32_t kind, where, what;
	uint64_t ns;
};

/* How often a place launched kernels in a step. */
struct site_count {
	uint32_t where, launches;
};

struct measuring {
	const struct trace_model *m;
	struct step_times *st;
	struct window *windows; /* by (pid, tid, start) */
	size_t nwindows;
	struct tspan_set spans;
	struct step_gpu gpu;
	struct local_piece *local;
	size_t nlocal, local_cap;
	struct site_count *sites;
	size_t nsites, sites_cap;
	size_t cursor[TSPAN_NTYPES], range_end[TSPAN_NTYPES]; /* the thread's spans of each type */
	uint32_t last_where;				      /* of the step: "" at its start */
};

static int cmp_window(const void *a, const void *b)
{
	const struct window *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* thread_spans_read(): a span of a loop thread that overlaps one of its steps */
static bool in_a_step(void *ctx, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end)
{
	const struct measuring *ms = ctx;
	size_t lo = 0, hi = ms->nwindows;

	while (lo < hi) { /* the first window of the thread that ends after the span starts */
		size_t mid = lo + (hi - lo) / 2;
		const struct window *w = &ms->windows[mid];

		if (w->pid < pid ||
		    (w->pid == pid && (w->tid < tid || (w->tid == tid && w->end <= start))))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ms->nwindows && ms->windows[lo].pid == pid && ms->windows[lo].tid == tid &&
	       ms->windows[lo].start < (end > start ? end : start + 1);
}

static int make_windows(struct measuring *ms)
{
	const struct step_list *l = &ms->st->steps;

	ms->windows = malloc((l->n + 1) * sizeof(*ms->windows));
	if (!ms->windows)
		return -1;
	for (size_t i = 0; i < l->n; i++)
		ms->windows[i] =
		    (struct window){l->v[i].pid, l->v[i].tid, l->v[i].start, l->v[i].end};
	ms->nwindows = l->n;
	qsort(ms->windows, ms->nwindows, sizeof(*ms->windows), cmp_window);
	return 0;
}

static int intern(struct measuring *ms, const char *s, uint32_t *id)
{
	return string_pool_intern(&ms->st->strings, s, id);
}

static int add_local(struct measuring *ms, uint32_t kind, uint32_t where, uint32_t what,
		     uint64_t ns)
{
	struct local_piece *p;

	for (size_t i = ms->nlocal; i-- > 0;) {
		p = &ms->local[i];
		if (p->kind == kind && p->where == where && p->what == what) {
			p->ns += ns;
			return 0;
		}
	}
	p = array_grow((void **)&ms->local, &ms->nlocal, &ms->local_cap, sizeof(*p));
	if (!p)
		return -1;
	*p = (struct local_piece){kind, where, what, ns};
	return 0;
}

static int add_wait(struct step_times *st, uint32_t pid, uint32_t tid, uint32_t kind,
		    uint64_t start, uint64_t end)
{
	struct wait_span *w = st->nwaits ? &st->waits[st->nwaits - 1] : NULL;

	if (kind != STALL_INPUT_WAIT && kind != STALL_LOCK_WAIT && kind != STALL_CPU_CONTENTION)
		return 0; /* the kinds whose cause runs elsewhere */
	if (w && w->pid == pid && w->tid == tid && w->kind == kind && w->end == start) {
		w->end = end;
		return 0;
	}
	w = array_grow((void **)&st->waits, &st->nwaits, &st->waits_cap, sizeof(*w));
	if (!w)
		return -1;
	*w = (struct wait_span){pid, tid, kind, start, end};
	return 0;
}

/* The span of `type` covering [x, ...) of the thread, advancing its pointer; NULL none. */
static const struct tspan *covering(const struct measuring *ms, size_t *p, uint8_t type, uint64_t x)
{
	while (*p < ms->range_end[type] && ms->spans.v[*p].end <= x)
		(*p)++;
	if (*p < ms->range_end[type] && ms->spans.v[*p].start <= x)
		return &ms->spans.v[*p];
	return NULL;
}

static const char *file_of(const struct measuring *ms, const struct tspan *sys)
{
	const char *name = trace_model_fd_name(ms->m, sys->pid, sys->fd, sys->ino);

	return name ? name : "";
}

/* The cause of a piece in words. */
static void describe(const struct measuring *ms, enum stall_kind kind, const struct tspan *cuda,
		     const struct tspan *sys, const struct tspan *off, char *buf, size_t len)
{
	char name[32];
	const char *file = sys ? file_of(ms, sys) : "";
	const char *sysname = sys ? gs_syscall_name(sys->key, name, sizeof(name)) : "";

	switch (kind) {
	case STALL_SYNC_WAIT:
		snprintf(buf, len, "%s", cuda_probe(cuda->key)->name);
		break;
	case STALL_INPUT_WAIT:
	case STALL_IO_WAIT:
		if (sys && wait_syscall_reads(sys->key))
			snprintf(buf, len, "%s%s%s", sysname, *file ? " on " : "", file);
		else if (kind == STALL_INPUT_WAIT)
			snprintf(buf, len, "DataLoader: waiting for a batch (%s)",
				 sys ? sysname : "off-cpu");
		else
			snprintf(buf, len, "uninterruptible sleep%s%s", sys ? " in " : "", sysname);
		break;
	case STALL_LOCK_WAIT:
		snprintf(buf, len, "%s (a lock, condition or join)", sysname);
		break;
	case STALL_CPU_CONTENTION:
		snprintf(buf, len, "runnable, waiting for a CPU");
		break;
	case STALL_OTHER_WAIT:
		snprintf(buf, len, "%s", sys ? sysname : "off-cpu (sleeping)");
		break;
	default:
		if (cuda)
			snprintf(buf, len, "on CPU in %s", cuda_probe(cuda->key)->name);
		else if (sys)
			snprintf(buf, len, "on CPU in %s", sysname);
		else
			snprintf(buf, len, "on CPU");
		(void)off;
	}
}

static int count_launch(struct measuring *ms, uint32_t where)
{
	struct site_count *s;

	for (size_t i = 0; i < ms->nsites; i++)
		if (ms->sites[i].where == where) {
			ms->sites[i].launches++;
			return 0;
		}
	s = array_grow((void **)&ms->sites, &ms->nsites, &ms->sites_cap, sizeof(*s));
	if (!s)
		return -1;
	*s = (struct site_count){where, 1};
	return 0;
}

/* The first position in the Python model's by_thread order of (pid, tid) at or after ts, or
 * nstacks when the thread has none. */
static size_t first_stack_from(const struct py_model *pm, uint32_t pid, uint32_t tid, uint64_t ts)
{
	size_t lo, hi = pm->nstacks;

	if (!key_index_find(&pm->ix_threads, pid, tid, &lo))
		return pm->nstacks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct py_stack *st = &pm->stacks[pm->by_thread[mid]];

		if (st->pid == pid && st->tid == tid && st->ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* On-CPU time [x, y) outside any call, shared among the CPU samples taken in it (a long run
 * of pure Python is where the samples are, not where the last call was). Returns how many
 * samples it used: 0 leaves the interval to the caller. */
static int host_by_samples(struct measuring *ms, const struct step *s, uint64_t x, uint64_t y,
			   uint32_t what_id, size_t *used)
{
	const struct py_model *pm = &ms->m->py;
	size_t first = first_stack_from(pm, s->pid, s->tid, x), k = 0;
	char where[TEXT_LEN];
	uint64_t given = 0;

	*used = 0;
	for (size_t i = first; i < pm->nstacks; i++) {
		const struct py_stack *st = &pm->stacks[pm->by_thread[i]];

		if (st->pid != s->pid || st->tid != s->tid || st->ts >= y)
			break;
		k += st->kind == GS_PY_SAMPLE;
	}
	for (size_t i = first, n = 0; n < k; i++) {
		const struct py_stack *st = &pm->stacks[pm->by_thread[i]];
		uint64_t ns = ++n == k ? (y - x) - given : (y - x) / k;
		uint32_t where_id;

		if (st->kind != GS_PY_SAMPLE)
			continue;
		py_where_label(pm, st, where, sizeof(where));
		if (intern(ms, where, &where_id) ||
		    add_local(ms, STALL_HOST_COMPUTE, where_id, what_id, ns))
			return -1;
		ms->last_where = where_id;
		given += ns;
	}
	*used = k;
	return 0;
}

/* The thread's first stack at or after x inside the step, if it is a CPU sample: a thread that
 * ran no call since x (preempted, or in pure Python) is still in the code that sample shows. */
static const struct py_stack *sample_after(const struct measuring *ms, const struct step *s,
					   uint64_t x)
{
	const struct py_model *pm = &ms->m->py;
	size_t i = first_stack_from(pm, s->pid, s->tid, x);
	const struct py_stack *st = i < pm->nstacks ? &pm->stacks[pm->by_thread[i]] : NULL;

	if (!st || st->pid != s->pid || st->tid != s->tid || st->ts >= s->end)
		return NULL;
	return st->kind == GS_PY_SAMPLE ? st : NULL;
}

/* An interval no stack covers. Its place is the next CPU sample when the thread makes no call
 * before it: the last call's place would take the time of the pure Python that ran after it
 * (a loop preempted before its step's first sample was charged to the step's opening call).
 * Without such a sample, the thread is still where it last ran. */
static int add_stackless(struct measuring *ms, const struct step *s, uint32_t kind,
			 uint32_t what_id, uint64_t x, uint64_t y)
{
	const struct py_stack *next = sample_after(ms, s, x);
	uint32_t where_id = ms->last_where;
	char where[TEXT_LEN];

	if (next || !where_id) {
		py_where_label(&ms->m->py, next, where, sizeof(where));
		if (intern(ms, where, &where_id))
			return -1;
	}
	if (add_local(ms, kind, where_id, what_id, y - x))
		return -1;
	return add_wait(ms->st, s->pid, s->tid, kind, x, y);
}

/* One elementary interval [x, y) of a step: nothing starts or ends inside it. */
static int classify(struct measuring *ms, const struct step *s, size_t p[TSPAN_NTYPES], uint64_t x,
		    uint64_t y)
{
	const struct py_model *pm = &ms->m->py;
	const struct tspan *cuda = covering(ms, &p[TSPAN_CUDA], TSPAN_CUDA, x);
	const struct tspan *sys = covering(ms, &p[TSPAN_SYSCALL], TSPAN_SYSCALL, x);
	const struct tspan *off = covering(ms, &p[TSPAN_OFFCPU], TSPAN_OFFCPU, x);
	const struct py_stack *stack = py_model_stack_at(pm, s->pid, s->tid, x);
	struct wait_context c = {
	    .in_cuda_sync = cuda && wait_cuda_blocks(cuda_probe(cuda->key)),
	    .in_syscall = sys != NULL,
	    .syscall_nr = sys ? sys->key : 0,
	    .off_cpu = off != NULL,
	    .reason = off ? off->key : 0,
	};
	char where[TEXT_LEN], what[TEXT_LEN];
	uint32_t where_id, what_id;
	enum stall_kind kind;

	c.in_data_loader = (c.off_cpu || c.in_syscall) && py_where_in_data_loader(pm, stack);
	kind = wait_kind_of(&c);
	describe(ms, kind, cuda, sys, off, what, sizeof(what));
	if (intern(ms, what, &what_id))
		return -1;
	ms->st->t[s - ms->st->steps.v].ns[kind] += y - x;
	if (kind == STALL_HOST_COMPUTE && !cuda && !sys) {
		size_t used;

		if (host_by_samples(ms, s, x, y, what_id, &used))
			return -1;
		if (used)
			return 0;
	}
	if (!stack)
		return add_stackless(ms, s, kind, what_id, x, y);
	py_where_label(pm, stack, where, sizeof(where));
	if (intern(ms, where, &where_id))
		return -1;
	ms->last_where = where_id;
	if (add_local(ms, kind, where_id, what_id, y - x))
		return -1;
	return add_wait(ms->st, s->pid, s->tid, kind, x, y);
}

static int cmp_wait(const void *a, const void *b)
{
	const struct wait_span *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* The step's boundaries: its ends and every span end inside it, sorted, each once. */
static uint64_t *boundaries(struct measuring *ms, const struct step *s, size_t *n)
{
	size_t cap = 2, k = 0;
	uint64_t *b;

	for (int t = 0; t < TSPAN_NTYPES; t++)
		for (size_t i = ms->cursor[t];
		     i < ms->range_end[t] && ms->spans.v[i].start < s->end; i++)
			cap += 2;
	if (!(b = malloc(cap * sizeof(*b))))
		return NULL;
	b[k++] = s->start;
	b[k++] = s->end;
	for (int t = 0; t < TSPAN_NTYPES; t++)
		for (size_t i = ms->cursor[t];
		     i < ms->range_end[t] && ms->spans.v[i].start < s->end; i++) {
			const struct tspan *sp = &ms->spans.v[i];

			if (sp->start > s->start)
				b[k++] = sp->start;
			if (sp->end > s->start && sp->end < s->end)
				b[k++] = sp->end;
		}
	sort_u64(b, k);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (!*n || b[i] != b[*n - 1])
			b[(*n)++] = b[i];
	return b;
}

static int count_launches(struct measuring *ms, const struct step *s, struct step_time *t)
{
	char where[TEXT_LEN];
	uint32_t id;

	ms->nsites = 0;
	for (size_t i = ms->cursor[TSPAN_CUDA];
	     i < ms->range_end[TSPAN_CUDA] && ms->spans.v[i].start < s->end; i++) {
		const struct tspan *c = &ms->spans.v[i];

		if (!c->launch || c->start < s->start)
			continue;
		t->launches++;
		py_where_label(&ms->m->py, py_model_stack_at(&ms->m->py, s->pid, s->tid, c->start),
			       where, sizeof(where));
		if (intern(ms, where, &id) || count_launch(ms, id))
			return -1;
	}
	return 0;
}

/* The place that launched most of the step's kernels. */
static uint32_t launch_site(const struct measuring *ms)
{
	size_t best = 0;

	for (size_t i = 1; i < ms->nsites; i++)
		if (ms->sites[i].launches > ms->sites[best].launches)
			best = i;
	return ms->nsites ? ms->sites[best].where : 0;
}

/* A read that both slept in D state and ran is one disk read: its CPU part (the kernel issuing
 * it) is I/O too, not a wait for input. */
static void reads_to_io(struct measuring *ms, struct step_time *t)
{
	for (size_t i = 0; i < ms->nlocal; i++) {
		struct local_piece *in = &ms->local[i];

		if (in->kind != STALL_INPUT_WAIT)
			continue;
		for (size_t j = 0; j < ms->nlocal; j++) {
			struct local_piece *io = &ms->local[j];

			if (io->kind != STALL_IO_WAIT || io->what != in->what ||
			    io->where != in->where)
				continue;
			io->ns += in->ns;
			t->ns[STALL_IO_WAIT] += in->ns;
			t->ns[STALL_INPUT_WAIT] -= in->ns;
			in->ns = 0;
			break;
		}
	}
}

/* The step's verdict from the GPU's side: moves its sync waits to gpu_bound, or its on-CPU
 * time to launch_bound, at the place that launched its kernels. */
static int judge_step(struct measuring *ms, const struct step *s, struct step_time *t)
{
	char what[TEXT_LEN], kernel[256];
	uint32_t from, to, what_id;

	if (!t->has_gpu || !t->wall_ns)
		return 0;
	kernel[0] = '\0';
	if (t->gpu_busy_ns * 100 >= t->wall_ns * GPU_BOUND_BUSY_PCT) {
		from = STALL_SYNC_WAIT;
		to = STALL_GPU_BOUND;
		snprintf(what, sizeof(what), "the GPU, busy in %s",
			 step_gpu_top_kernel(&ms->gpu, s->pid, s->start, s->end, kernel,
					     sizeof(kernel)));
	} else if (t->launches >= LAUNCH_BOUND_MIN &&
		   t->gpu_busy_ns * 100 < t->wall_ns * LAUNCH_BOUND_BUSY_PCT) {
		from = STALL_HOST_COMPUTE;
		to = STALL_LAUNCH_BOUND;
		snprintf(what, sizeof(what), "many short kernel launches: %s",
			 step_gpu_top_kernel(&ms->gpu, s->pid, s->start, s->end, kernel,
					     sizeof(kernel)));
	} else {
		return 0;
	}
	if (intern(ms, what, &what_id))
		return -1;
	for (size_t i = 0; i < ms->nlocal; i++)
		if (ms->local[i].kind == from) {
			ms->local[i].kind = to;
			ms->local[i].what = what_id;
			ms->local[i].where = launch_site(ms) ? launch_site(ms) : ms->local[i].where;
		}
	t->ns[to] += t->ns[from];
	t->ns[from] = 0;
	return 0;
}

/* Keeps the step's largest pieces in its row. */
static void keep_top(const struct measuring *ms, struct step_time *t)
{
	for (size_t i = 0; i < ms->nlocal; i++) {
		const struct local_piece *lp = &ms->local[i];
		struct step_piece p = {lp->kind, lp->where, lp->what, lp->ns};

		for (int k = 0; k < STEP_TOP_PIECES; k++)
			if (p.ns > t->top[k].ns) {
				struct step_piece out = t->top[k];

				t->top[k] = p;
				p = out;
			}
	}
}

/* Adds the step's pieces to the process's, merging pieces with the same key. */
static int keep_pieces(struct measuring *ms, uint32_t pid)
{
	struct step_times *st = ms->st;

	for (size_t i = 0; i < ms->nlocal; i++) {
		const struct local_piece *lp = &ms->local[i];
		uint64_t k1 = (uint64_t)pid << 32 | lp->kind,
			 k2 = (uint64_t)lp->where << 32 | lp->what;
		struct stall_piece *p;
		size_t at;

		if (!lp->ns)
			continue;
		if (key_index_find(&st->ix_pieces, k1, k2, &at)) {
			st->pieces[at].ns += lp->ns;
			st->pieces[at].steps++;
			continue;
		}
		p = array_grow((void **)&st->pieces, &st->npieces, &st->pieces_cap, sizeof(*p));
		if (!p || key_index_put(&st->ix_pieces, k1, k2, st->npieces - 1))
			return -1;
		*p = (struct stall_piece){pid, lp->kind, lp->where, lp->what, lp->ns, 1};
	}
	return 0;
}

static int measure_step(struct measuring *ms, const struct step *s)
{
	struct step_time *t = &ms->st->t[s - ms->st->steps.v];
	size_t p[TSPAN_NTYPES], nb;
	uint64_t *b;
	int ret = 0;

	for (int ty = 0; ty < TSPAN_NTYPES; ty++) {
		while (ms->cursor[ty] < ms->range_end[ty] &&
		       ms->spans.v[ms->cursor[ty]].end <= s->start)
			ms->cursor[ty]++;
		p[ty] = ms->cursor[ty];
	}
	t->wall_ns = s->end > s->start ? s->end - s->start : 0;
	t->has_gpu = step_gpu_has(&ms->gpu, s->pid);
	t->gpu_busy_ns = step_gpu_busy(&ms->gpu, s->pid, s->start, s->end);
	t->gpu_idle_ns = t->has_gpu ? t->wall_ns - t->gpu_busy_ns : 0;
	ms->nlocal = 0;
	ms->last_where = 0;
	if (!(b = boundaries(ms, s, &nb)))
		return -1;
	for (size_t i = 0; !ret && i + 1 < nb; i++)
		ret = classify(ms, s, p, b[i], b[i + 1]);
	free(b);
	if (!ret)
		ret = count_launches(ms, s, t);
	if (!ret) {
		reads_to_io(ms, t);
		ret = judge_step(ms, s, t);
		keep_top(ms, t);
	}
	return ret ? ret : keep_pieces(ms, s->pid);
}

static int measure_process(struct measuring *ms, const struct step_origin *o)
{
	for (int ty = 0; ty < TSPAN_NTYPES; ty++) {
		size_t i = thread_spans_first(&ms->spans, o->pid, o->tid, (uint8_t)ty);

		ms->cursor[ty] = i;
		while (i < ms->spans.n && ms->spans.v[i].pid == o->pid &&
		       ms->spans.v[i].tid == o->tid && ms->spans.v[i].type == ty)
			i++;
		ms->range_end[ty] = i;
	}
	for (size_t i = o->first; i < o->first + o->n; i++)
		if (measure_step(ms, &ms->st->steps.v[i]))
			return -1;
	return 0;
}

/* Whether a process is worth a window over the whole recording: it had CUDA libraries probed
 * or a Python interpreter traced. */
static bool worth_a_window(const struct trace_model *m, const struct model_process *p)
{
	for (size_t i = 0; i < m->cuda.nlibs; i++)
		if (m->cuda.libs[i].pid == p->pid)
			return true;
	return py_model_proc(&m->py, p->pid) != NULL;
}

/* No steps: each process that ran CUDA or Python, else each process, is one window, its main
 * thread over the part of the recording it lived in. */
static int whole_recording(const struct trace_model *m, struct step_list *l)
{
	bool any = false;

	for (size_t pass = 0; pass < 2 && !any; pass++)
		for (size_t i = 0; i < m->nprocs; i++) {
			const struct model_process *p = &m->procs[i];
			uint64_t start = p->start_ts > m->start_ts ? p->start_ts : m->start_ts;
			uint64_t end =
			    p->exited && p->end_ts && p->end_ts < m->end_ts ? p->end_ts : m->end_ts;

			if ((!pass && !worth_a_window(m, p)) || end <= start)
				continue;
			if (step_list_begin(l, p->pid, p->pid,
					    "the whole recording (no steps found)") ||
			    step_list_add(l, start, end))
				return -1;
			any = true;
		}
	return 0;
}

int step_times_measure_list(const struct trace_model *m, struct step_list *list,
			    struct step_times *out, char *err, size_t errlen)
{
	struct measuring ms = {.m = m, .st = out};
	int ret = -1;

	memset(out, 0, sizeof(*out));
	out->steps = *list;
	memset(list, 0, sizeof(*list));
	out->t = calloc(out->steps.n + 1, sizeof(*out->t));
	if (!out->t || make_windows(&ms) || step_gpu_init(&ms.gpu, m) ||
	    intern(&ms, "", &(uint32_t){0}))
		goto oom;
	if (thread_spans_read(m, in_a_step, &ms, &ms.spans)) {
		snprintf(err, errlen, "%s: became unreadable, or out of memory", m->path);
		goto out;
	}
	for (size_t i = 0; i < out->steps.norigins; i++)
		if (measure_process(&ms, &out->steps.origins[i]))
			goto oom;
	if (out->nwaits > 1) /* qsort(NULL, 0, ...) is undefined */
		qsort(out->waits, out->nwaits, sizeof(*out->waits), cmp_wait);
	ret = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	free(ms.windows);
	free(ms.local);
	free(ms.sites);
	thread_spans_free(&ms.spans);
	step_gpu_free(&ms.gpu);
	if (ret)
		step_times_free(out);
	return ret;
}

int step_times_measure(const struct trace_model *m, const char *by, struct step_times *out,
		       char *err, size_t errlen)
{
	struct step_list list = {0};
	bool whole = false;

	memset(out, 0, sizeof(*out));
	if (steps_find(m, by, &list, err, errlen))
		return -1;
	if (!list.n && !by) {
		whole = true;
		if (whole_recording(m, &list)) {
			step_list_free(&list);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	if (step_times_measure_list(m, &list, out, err, errlen))
		return -1;
	out->whole_recording = whole;
	return 0;
}

void step_times_free(struct step_times *st)
{
	step_list_free(&st->steps);
	free(st->t);
	free(st->pieces);
	free(st->waits);
	key_index_free(&st->ix_pieces);
	string_pool_free(&st->strings);
	memset(st, 0, sizeof(*st));
}
