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

/* A step being measured: what its parts so far found. A thread's step may go on into the next
 * slice of time, so each loop thread keeps its own. */
struct step_state {
	struct local_piece *local;
	size_t nlocal, local_cap;
	struct site_count *sites;
	size_t nsites, sites_cap;
	uint32_t last_where; /* "" at the step's start */
	uint64_t resume;     /* where its next part begins */
};

struct measuring {
	const struct trace_model *m;
	struct step_times *st;
	struct window *windows; /* by (pid, tid, start) */
	size_t nwindows;
	struct tspan_slice slice; /* the part of time whose spans are read */
	struct tspan_set spans;
	struct step_gpu gpu;
	struct step_state cur;				      /* the loop thread's being measured */
	struct step_state *saved;			      /* each origin's, between slices */
	size_t cursor[TSPAN_NTYPES], range_end[TSPAN_NTYPES]; /* the thread's spans of each type */
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

/* thread_spans_read(): a span of a loop thread that overlaps one of its steps and the slice */
static bool in_a_step(void *ctx, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end)
{
	const struct measuring *ms = ctx;
	size_t lo = 0, hi = ms->nwindows;

	if (end <= start)
		end = start + 1;
	if (end <= ms->slice.from || start >= ms->slice.to)
		return false;
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
	       ms->windows[lo].start < end;
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

	for (size_t i = ms->cur.nlocal; i-- > 0;) {
		p = &ms->cur.local[i];
		if (p->kind == kind && p->where == where && p->what == what) {
			p->ns += ns;
			return 0;
		}
	}
	p = array_grow((void **)&ms->cur.local, &ms->cur.nlocal, &ms->cur.local_cap, sizeof(*p));
	if (!p)
		return -1;
	*p = (struct local_piece){kind, where, what, ns};
	return 0;
}

/* Waits of one kind this close are kept as one: a thread reading a pipe or a device in small
 * pieces waits millions of times, and the causes only ask what other threads did meanwhile
 * (so the list stays within one entry per this much of each loop thread's time). */
#define WAIT_JOIN_GAP_NS 100000ull

static int add_wait(struct step_times *st, uint32_t pid, uint32_t tid, uint32_t kind,
		    uint64_t start, uint64_t end)
{
	struct wait_span *w = st->nwaits ? &st->waits[st->nwaits - 1] : NULL;

	if (kind != STALL_INPUT_WAIT && kind != STALL_LOCK_WAIT && kind != STALL_CPU_CONTENTION)
		return 0; /* the kinds whose cause runs elsewhere */
	if (w && w->pid == pid && w->tid == tid && w->kind == kind && w->end <= start &&
	    start - w->end <= WAIT_JOIN_GAP_NS) {
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

	for (size_t i = 0; i < ms->cur.nsites; i++)
		if (ms->cur.sites[i].where == where) {
			ms->cur.sites[i].launches++;
			return 0;
		}
	s = array_grow((void **)&ms->cur.sites, &ms->cur.nsites, &ms->cur.sites_cap, sizeof(*s));
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
		ms->cur.last_where = where_id;
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
	uint32_t where_id = ms->cur.last_where;
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
	ms->cur.last_where = where_id;
	if (add_local(ms, kind, where_id, what_id, y - x))
		return -1;
	return add_wait(ms->st, s->pid, s->tid, kind, x, y);
}

static int cmp_wait(const void *a, const void *b)
{
	const struct wait_span *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* The boundaries of a step's part [from, to): its ends and every span end inside it, sorted,
 * each once. */
static uint64_t *boundaries(struct measuring *ms, uint64_t from, uint64_t to, size_t *n)
{
	size_t cap = 2, k = 0;
	uint64_t *b;

	for (int t = 0; t < TSPAN_NTYPES; t++)
		for (size_t i = ms->cursor[t]; i < ms->range_end[t] && ms->spans.v[i].start < to;
		     i++)
			cap += 2;
	if (!(b = malloc(cap * sizeof(*b))))
		return NULL;
	b[k++] = from;
	b[k++] = to;
	for (int t = 0; t < TSPAN_NTYPES; t++)
		for (size_t i = ms->cursor[t]; i < ms->range_end[t] && ms->spans.v[i].start < to;
		     i++) {
			const struct tspan *sp = &ms->spans.v[i];

			if (sp->start > from)
				b[k++] = sp->start;
			if (sp->end > from && sp->end < to)
				b[k++] = sp->end;
		}
	sort_u64(b, k);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (!*n || b[i] != b[*n - 1])
			b[(*n)++] = b[i];
	return b;
}

/* The launches that start in [from, to), a part of step s. */
static int count_launches(struct measuring *ms, const struct step *s, uint64_t from, uint64_t to,
			  struct step_time *t)
{
	char where[TEXT_LEN];
	uint32_t id;

	for (size_t i = ms->cursor[TSPAN_CUDA];
	     i < ms->range_end[TSPAN_CUDA] && ms->spans.v[i].start < to; i++) {
		const struct tspan *c = &ms->spans.v[i];

		if (!c->launch || c->start < from)
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

	for (size_t i = 1; i < ms->cur.nsites; i++)
		if (ms->cur.sites[i].launches > ms->cur.sites[best].launches)
			best = i;
	return ms->cur.nsites ? ms->cur.sites[best].where : 0;
}

/* A read that both slept in D state and ran is one disk read: its CPU part (the kernel issuing
 * it) is I/O too, not a wait for input. */
static void reads_to_io(struct measuring *ms, struct step_time *t)
{
	for (size_t i = 0; i < ms->cur.nlocal; i++) {
		struct local_piece *in = &ms->cur.local[i];

		if (in->kind != STALL_INPUT_WAIT)
			continue;
		for (size_t j = 0; j < ms->cur.nlocal; j++) {
			struct local_piece *io = &ms->cur.local[j];

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
	for (size_t i = 0; i < ms->cur.nlocal; i++)
		if (ms->cur.local[i].kind == from) {
			ms->cur.local[i].kind = to;
			ms->cur.local[i].what = what_id;
			ms->cur.local[i].where =
			    launch_site(ms) ? launch_site(ms) : ms->cur.local[i].where;
		}
	t->ns[to] += t->ns[from];
	t->ns[from] = 0;
	return 0;
}

/* Keeps the step's largest pieces in its row. */
static void keep_top(const struct measuring *ms, struct step_time *t)
{
	for (size_t i = 0; i < ms->cur.nlocal; i++) {
		const struct local_piece *lp = &ms->cur.local[i];
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

	for (size_t i = 0; i < ms->cur.nlocal; i++) {
		const struct local_piece *lp = &ms->cur.local[i];
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

/* The step's figures that need no spans, and a fresh state, as its first part begins. */
static void begin_step(struct measuring *ms, const struct step *s, struct step_time *t)
{
	t->wall_ns = s->end > s->start ? s->end - s->start : 0;
	t->has_gpu = step_gpu_has(&ms->gpu, s->pid);
	t->gpu_busy_ns = step_gpu_busy(&ms->gpu, s->pid, s->start, s->end);
	t->gpu_idle_ns = t->has_gpu ? t->wall_ns - t->gpu_busy_ns : 0;
	ms->cur.nlocal = 0;
	ms->cur.nsites = 0;
	ms->cur.last_where = 0;
	ms->cur.resume = s->start;
}

/* The part [resume, to) of a step, whose spans are those read. A part that ends at the slice's
 * end, not the step's, leaves its last interval to the next: that end is no boundary of the
 * thread's, and an interval cut there would share its time among other CPU samples. */
static int measure_part(struct measuring *ms, const struct step *s, uint64_t to, bool last)
{
	uint64_t from = ms->cur.resume;
	struct step_time *t = &ms->st->t[s - ms->st->steps.v];
	size_t p[TSPAN_NTYPES], nb;
	uint64_t *b;
	int ret = 0;

	for (int ty = 0; ty < TSPAN_NTYPES; ty++) {
		while (ms->cursor[ty] < ms->range_end[ty] &&
		       ms->spans.v[ms->cursor[ty]].end <= from)
			ms->cursor[ty]++;
		p[ty] = ms->cursor[ty];
	}
	if (!(b = boundaries(ms, from, to, &nb)))
		return -1;
	if (!last && nb > 1)
		ms->cur.resume = b[--nb - 1];
	for (size_t i = 0; !ret && i + 1 < nb; i++)
		ret = classify(ms, s, p, b[i], b[i + 1]);
	free(b);
	return ret ? ret : count_launches(ms, s, from, last ? to : ms->cur.resume, t);
}

/* The step's verdicts, once its last part is measured. */
static int finish_step(struct measuring *ms, const struct step *s)
{
	struct step_time *t = &ms->st->t[s - ms->st->steps.v];

	reads_to_io(ms, t);
	if (judge_step(ms, s, t))
		return -1;
	keep_top(ms, t);
	return keep_pieces(ms, s->pid);
}

/* The parts of an origin's steps in the slice: a step begins in the slice that holds its
 * start and is finished in the one that holds its end. */
static int measure_process(struct measuring *ms, const struct step_origin *o)
{
	const struct tspan_slice *sl = &ms->slice;

	for (int ty = 0; ty < TSPAN_NTYPES; ty++) {
		size_t i = thread_spans_first(&ms->spans, o->pid, o->tid, (uint8_t)ty);

		ms->cursor[ty] = i;
		while (i < ms->spans.n && ms->spans.v[i].pid == o->pid &&
		       ms->spans.v[i].tid == o->tid && ms->spans.v[i].type == ty)
			i++;
		ms->range_end[ty] = i;
	}
	for (size_t i = o->first; i < o->first + o->n; i++) {
		const struct step *s = &ms->st->steps.v[i];
		uint64_t end = s->end > s->start ? s->end : s->start + 1;

		if (end <= sl->from)
			continue;
		if (s->start >= sl->to)
			break;
		if (s->start >= sl->from)
			begin_step(ms, s, &ms->st->t[i]);
		if (measure_part(ms, s, end <= sl->to ? s->end : sl->to, end <= sl->to) ||
		    (end <= sl->to && finish_step(ms, s)))
			return -1;
	}
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

/* Spans held at once: a slice of time at a time beyond this (2 Mi spans, 96 MiB).
 * GPUSPY_SPAN_BUDGET lowers it, so that the tests measure small traces in many slices. */
#define SPAN_BUDGET ((size_t)1 << 21)

static size_t span_budget(void)
{
	const char *env = getenv("GPUSPY_SPAN_BUDGET");
	long v = env ? strtol(env, NULL, 10) : 0;

	return v > 0 && (size_t)v < SPAN_BUDGET ? (size_t)v : SPAN_BUDGET;
}

/* Each slice's spans read, then each origin's steps measured over it, its state kept between
 * slices. 0; 1 when the file became unreadable; -1 out of memory. */
static int measure_slices(struct measuring *ms, const struct tspan_slice *slices, size_t n)
{
	const struct step_list *l = &ms->st->steps;

	for (size_t k = 0; k < n; k++) {
		ms->slice = slices[k];
		thread_spans_free(&ms->spans);
		if (thread_spans_read(ms->m, in_a_step, ms, &ms->spans))
			return 1;
		for (size_t i = 0; i < l->norigins; i++) {
			int err;

			ms->cur = ms->saved[i];
			err = measure_process(ms, &l->origins[i]);
			ms->saved[i] = ms->cur; /* freed from there, whatever happened */
			if (err)
				return -1;
		}
	}
	return 0;
}

int step_times_measure_list(const struct trace_model *m, struct step_list *list,
			    struct step_times *out, char *err, size_t errlen)
{
	struct measuring ms = {.m = m, .st = out, .slice = {0, UINT64_MAX}};
	struct tspan_slice *slices = NULL;
	size_t nslices = 0;
	int ret = -1, read = 0;

	memset(out, 0, sizeof(*out));
	out->steps = *list;
	memset(list, 0, sizeof(*list));
	out->t = calloc(out->steps.n + 1, sizeof(*out->t));
	ms.saved = calloc(out->steps.norigins + 1, sizeof(*ms.saved));
	if (!out->t || !ms.saved || make_windows(&ms) || step_gpu_init(&ms.gpu, m) ||
	    intern(&ms, "", &(uint32_t){0}))
		goto oom;
	if (thread_spans_slices(m, in_a_step, &ms, span_budget(), &slices, &nslices) ||
	    (read = measure_slices(&ms, slices, nslices)) > 0) {
		snprintf(err, errlen, "%s: became unreadable, or out of memory", m->path);
		goto out;
	}
	if (read < 0)
		goto oom;
	if (out->nwaits > 1) /* qsort(NULL, 0, ...) is undefined */
		qsort(out->waits, out->nwaits, sizeof(*out->waits), cmp_wait);
	ret = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	free(slices);
	free(ms.windows);
	for (size_t i = 0; ms.saved && i < out->steps.norigins; i++) {
		free(ms.saved[i].local);
		free(ms.saved[i].sites);
	}
	free(ms.saved);
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
