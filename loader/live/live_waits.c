// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "lib/key_index.h"
#include "loader/live/live_waits.h"
#include "output/trace/cuda_api.h"

/*
 * Spans nest: an off-CPU interval inside a syscall, both inside a CUDA call. Each is recorded
 * when it ends, so the inner ones come first and wait as pieces until the span around them
 * says what they were in, or until no span can hold them any more (a syscall's pieces, in a
 * thread that makes no CUDA call; anything, once an outermost CUDA call has ended). Pieces are
 * in the order their spans ended, so the ones a span holds are the newest, those that began
 * after it. A thread rarely has more than a few waiting: beyond WAIT_PIECES the oldest is
 * sorted as if nothing held it, and a span that holds it does not count its time again.
 */
#define WAIT_PIECES 16
#define ON_CPU	    0xff /* wait_piece.reason of time on CPU inside a syscall or CUDA call */

struct wait_piece {
	uint64_t start; /* the span's start: a span that holds it began before */
	uint64_t ns;	/* its time in the interval, less the pieces it holds */
	uint32_t nr;	/* the syscall it is in, when in_syscall */
	uint8_t reason; /* enum gs_offcpu_reason, or ON_CPU */
	bool in_syscall, in_sync;
};

struct wait_thread {
	uint32_t pid, tid;
	uint64_t born;	     /* started in the interval, at this time; else 0 */
	bool exited;	     /* in the interval: forgotten at the tick */
	bool cuda;	     /* has made CUDA calls: its pieces wait for the call around them */
	uint64_t cuda_calls; /* outermost CUDA calls in the interval */
	uint64_t ns[STALL_NKINDS];
	uint64_t early_ns, early_start; /* pieces sorted for want of room; the newest's start */
	/* a wait begun before the attach and under way at the last tick: BPF saw it begin, so its
	 * end has no record; the thread's next span, which began after it, ends it */
	bool pre_syscall, pre_off;
	uint32_t pre_nr;
	uint8_t pre_reason;
	unsigned npieces;
	struct wait_piece pieces[WAIT_PIECES];
};

struct wait_proc {
	uint32_t pid;
	uint32_t cuda_tid; /* the CUDA thread shown last; 0: none yet */
	uint32_t best_tid; /* the interval's thread with most CUDA calls */
	uint64_t best_calls;
	bool listed;
	struct live_wait_result result;
};

struct live_waits {
	struct wait_thread *threads;
	size_t nthreads, threads_cap;
	struct key_index ix_threads; /* (pid, tid) */
	struct wait_proc *procs;
	size_t nprocs, procs_cap;
	struct key_index ix_procs; /* pid */
	uint64_t from;		   /* the interval's start: the last tick */
	bool started;
};

struct live_waits *live_waits_new(void)
{
	return calloc(1, sizeof(struct live_waits));
}

void live_waits_free(struct live_waits *w)
{
	if (!w)
		return;
	free(w->threads);
	free(w->procs);
	key_index_free(&w->ix_threads);
	key_index_free(&w->ix_procs);
	free(w);
}

static struct wait_thread *find_thread(const struct live_waits *w, uint32_t pid, uint32_t tid)
{
	size_t i;

	return key_index_find(&w->ix_threads, pid, tid, &i) ? &w->threads[i] : NULL;
}

static struct wait_thread *get_thread(struct live_waits *w, uint32_t pid, uint32_t tid)
{
	struct wait_thread *t = find_thread(w, pid, tid);

	if (t)
		return t;
	t = array_grow((void **)&w->threads, &w->nthreads, &w->threads_cap, sizeof(*t));
	if (!t || key_index_put(&w->ix_threads, pid, tid, w->nthreads - 1))
		return NULL;
	t->pid = pid;
	t->tid = tid;
	return t;
}

static struct wait_proc *find_proc(const struct live_waits *w, uint32_t pid)
{
	size_t i;

	return key_index_find(&w->ix_procs, pid, 0, &i) ? &w->procs[i] : NULL;
}

static struct wait_proc *get_proc(struct live_waits *w, uint32_t pid)
{
	struct wait_proc *p = find_proc(w, pid);

	if (p)
		return p;
	p = array_grow((void **)&w->procs, &w->nprocs, &w->procs_cap, sizeof(*p));
	if (!p || key_index_put(&w->ix_procs, pid, 0, w->nprocs - 1))
		return NULL;
	p->pid = pid;
	return p;
}

/* A span's time within the interval (and the thread's life). */
static uint64_t clip(const struct live_waits *w, const struct wait_thread *t, uint64_t start,
		     uint64_t dur)
{
	uint64_t from = start, end = start + dur;

	if (from < w->from)
		from = w->from;
	if (from < t->born)
		from = t->born;
	return end > from ? end - from : 0;
}

static void settle(struct wait_thread *t, const struct wait_piece *p)
{
	const struct wait_context c = {
	    .in_cuda_sync = p->in_sync,
	    .in_syscall = p->in_syscall,
	    .syscall_nr = p->nr,
	    .off_cpu = p->reason != ON_CPU,
	    .reason = p->reason,
	};

	t->ns[wait_kind_of(&c)] += p->ns;
}

static void settle_all(struct wait_thread *t)
{
	for (unsigned i = 0; i < t->npieces; i++)
		settle(t, &t->pieces[i]);
	t->npieces = 0;
	t->early_ns = 0;
}

static void push(struct wait_thread *t, const struct wait_piece *p)
{
	if (t->npieces == WAIT_PIECES) {
		settle(t, &t->pieces[0]);
		t->early_ns += t->pieces[0].ns;
		t->early_start = t->pieces[0].start;
		memmove(&t->pieces[0], &t->pieces[1], (WAIT_PIECES - 1) * sizeof(t->pieces[0]));
		t->npieces--;
	}
	t->pieces[t->npieces++] = *p;
}

/* Marks the pieces a span that began at `start` holds (a syscall's, or a blocking CUDA call's);
 * their time, which is not the span's own. */
static uint64_t claim(struct wait_thread *t, uint64_t start, bool syscall, uint32_t nr)
{
	uint64_t ns = 0;
	unsigned i;

	for (i = t->npieces; i > 0 && t->pieces[i - 1].start >= start; i--) {
		struct wait_piece *p = &t->pieces[i - 1];

		if (syscall && p->in_syscall) /* one syscall never holds another */
			continue;
		if (syscall) {
			p->in_syscall = true;
			p->nr = nr;
		} else {
			p->in_sync = true;
		}
		ns += p->ns;
	}
	/* it holds every piece kept, and the ones sorted early too */
	if (!i && t->early_ns && t->early_start >= start) {
		ns += t->early_ns;
		t->early_ns = 0;
	}
	return ns;
}

static void span_offcpu(const struct live_waits *w, struct wait_thread *t, uint64_t start,
			uint64_t dur, uint32_t reason)
{
	const struct wait_piece p = {
	    .start = start,
	    .ns = clip(w, t, start, dur),
	    .reason = (uint8_t)(reason < ON_CPU ? reason : ON_CPU - 1),
	};

	push(t, &p);
}

static void span_syscall(const struct live_waits *w, struct wait_thread *t, uint64_t start,
			 uint64_t dur, uint32_t nr)
{
	uint64_t inner = claim(t, start, true, nr), ns = clip(w, t, start, dur);
	const struct wait_piece p = {
	    .start = start,
	    .ns = ns > inner ? ns - inner : 0,
	    .nr = nr,
	    .reason = ON_CPU,
	    .in_syscall = true,
	};

	push(t, &p);
	/* nothing but a CUDA call can hold a syscall */
	if (!t->cuda)
		settle_all(t);
}

/* An outermost CUDA call: only one that blocks until the GPU is done changes what its pieces
 * were in; after any, nothing recorded so far can be held by a later span. */
static void span_cuda(const struct live_waits *w, struct wait_thread *t, uint64_t start,
		      uint64_t dur, unsigned probe)
{
	uint64_t inner, ns;

	if (wait_cuda_blocks(cuda_probe(probe))) {
		inner = claim(t, start, false, 0);
		ns = clip(w, t, start, dur);
		push(t, &(struct wait_piece){.start = start,
					     .ns = ns > inner ? ns - inner : 0,
					     .reason = ON_CPU,
					     .in_sync = true});
	}
	settle_all(t);
}

/* The thread of a span record, after what it was in since before the attach, which ended
 * before the span began. Every thread is followed, not only main threads: the one a CUDA
 * process is shown by is only known at the tick, and its time before its first CUDA call of
 * the interval counts too. */
static struct wait_thread *thread_of(struct live_waits *w, const struct gs_hdr *h)
{
	struct wait_thread *t = get_thread(w, h->pid, h->tid);

	if (t && t->pre_off)
		span_offcpu(w, t, 0, h->ts, t->pre_reason);
	if (t && t->pre_syscall)
		span_syscall(w, t, 0, h->ts, t->pre_nr);
	if (t)
		t->pre_off = t->pre_syscall = false;
	return t;
}

static int on_offcpu(struct live_waits *w, const struct gs_offcpu *o)
{
	struct wait_thread *t = thread_of(w, &o->hdr);

	if (!t)
		return -ENOMEM;
	span_offcpu(w, t, o->hdr.ts, o->dur_ns, o->reason);
	return 0;
}

static int on_syscall(struct live_waits *w, const struct gs_syscall *s)
{
	struct wait_thread *t = thread_of(w, &s->hdr);

	if (!t)
		return -ENOMEM;
	span_syscall(w, t, s->hdr.ts, s->dur_ns, s->nr);
	return 0;
}

static int on_cuda_call(struct live_waits *w, const struct gs_cuda_call *c)
{
	struct wait_thread *t = thread_of(w, &c->hdr);

	if (!t)
		return -ENOMEM;
	/* a runtime call's driver calls are inside it: the outermost one says it all */
	if (c->hdr.flags & GS_CUDA_NESTED)
		return 0;
	t->cuda = true;
	t->cuda_calls++;
	span_cuda(w, t, c->hdr.ts, c->dur_ns, c->probe);
	return 0;
}

/* A new process: its main thread's time starts here, not at the interval's start. */
static int on_fork(struct live_waits *w, const struct gs_fork *f)
{
	struct wait_thread *t;

	if (f->hdr.flags & GS_FORK_THREAD)
		return 0;
	t = get_thread(w, f->child_pid, f->child_pid);
	if (!t)
		return -ENOMEM;
	/* a pid used again: nothing of the thread that had it */
	memset(t, 0, sizeof(*t));
	t->pid = t->tid = f->child_pid;
	t->born = f->hdr.ts;
	return 0;
}

int live_waits_take(struct live_waits *w, const struct gs_hdr *h)
{
	struct wait_thread *t;

	switch (h->type) {
	case GS_REC_OFFCPU:
		return on_offcpu(w, (const void *)h);
	case GS_REC_SYSCALL:
		return on_syscall(w, (const void *)h);
	case GS_REC_CUDA_CALL:
		return on_cuda_call(w, (const void *)h);
	case GS_REC_FORK:
		return on_fork(w, (const void *)h);
	case GS_REC_EXIT:
		t = find_thread(w, h->pid, h->tid);
		if (t)
			t->exited = true;
		return 0;
	default:
		return 0;
	}
}

/* The thread a process is shown by: the interval's busiest CUDA thread, else the last one
 * shown while it lives, else the main thread. */
static uint32_t shown_tid(const struct live_waits *w, struct wait_proc *p)
{
	const struct wait_thread *t;

	if (p->best_calls)
		return p->cuda_tid = p->best_tid;
	t = p->cuda_tid ? find_thread(w, p->pid, p->cuda_tid) : NULL;
	return t && !t->exited ? p->cuda_tid : p->pid;
}

/* A wait the thread was in at the tick that began before the attach: /proc's word for it. */
static void note_pre(struct wait_thread *t, const struct thread_now *n)
{
	t->pre_off = n->off_cpu && !n->off_since;
	t->pre_reason = (uint8_t)n->reason;
	t->pre_syscall = n->in_syscall && !n->syscall_start;
	t->pre_nr = n->nr;
}

/* What the thread is in at the tick, as spans that end now, innermost first as records come. */
static void spans_now(const struct live_waits *w, struct wait_thread *t, const struct thread_now *n,
		      uint64_t now)
{
	if (n->in_cuda)
		t->cuda = true; /* its first call may be the one under way */
	if (n->off_cpu && n->off_since <= now)
		span_offcpu(w, t, n->off_since, now - n->off_since, n->reason);
	if (n->in_syscall && n->syscall_start <= now)
		span_syscall(w, t, n->syscall_start, now - n->syscall_start, n->nr);
	if (n->in_cuda && n->cuda_start <= now)
		span_cuda(w, t, n->cuda_start, now - n->cuda_start, n->cuda_probe);
	note_pre(t, n);
}

static int close_proc(struct live_waits *w, struct wait_proc *p, uint64_t now, live_now_fn now_fn,
		      void *ctx)
{
	const enum stall_kind on_cpu = wait_kind_of(&(struct wait_context){0});
	struct live_wait_result *r = &p->result;
	uint32_t tid = shown_tid(w, p);
	struct wait_thread *t = get_thread(w, p->pid, tid);
	struct thread_now n;
	uint64_t from, sum = 0;
	int err;

	memset(r, 0, sizeof(*r));
	if (!t)
		return -ENOMEM;
	err = now_fn(ctx, p->pid, tid, &n);
	if (err == -ESRCH)
		return 0;
	/* without what it is in now (an old kernel: no pidfd for a thread), the records alone */
	if (!err)
		spans_now(w, t, &n, now);
	settle_all(t);
	from = w->from > t->born ? w->from : t->born;
	r->known = true;
	r->tid = tid;
	r->wall_ns = now > from ? now - from : 0;
	for (int k = 0; k < STALL_NKINDS; k++) {
		r->ns[k] = t->ns[k];
		sum += t->ns[k];
	}
	r->ns[on_cpu] += r->wall_ns > sum ? r->wall_ns - sum : 0;
	return 0;
}

static int results(struct live_waits *w, uint64_t now, const uint32_t *pids, size_t npids,
		   live_now_fn now_fn, void *ctx)
{
	int err = 0;

	for (size_t i = 0; i < w->nprocs; i++) {
		w->procs[i].listed = false;
		w->procs[i].best_calls = 0;
	}
	for (size_t i = 0; i < npids; i++) {
		struct wait_proc *p = get_proc(w, pids[i]);

		if (!p)
			return -ENOMEM;
		p->listed = true;
	}
	for (size_t i = 0; i < w->nthreads; i++) {
		const struct wait_thread *t = &w->threads[i];
		struct wait_proc *p = t->exited ? NULL : find_proc(w, t->pid);

		if (p && t->cuda_calls > p->best_calls) {
			p->best_calls = t->cuda_calls;
			p->best_tid = t->tid;
		}
	}
	for (size_t i = 0; i < w->nprocs && !err; i++)
		if (w->procs[i].listed)
			err = close_proc(w, &w->procs[i], now, now_fn, ctx);
	return err;
}

/* Keeps the processes listed and their live threads, each thread's interval emptied. */
static int forget(struct live_waits *w)
{
	size_t kept = 0;

	key_index_free(&w->ix_procs);
	for (size_t i = 0; i < w->nprocs; i++) {
		if (!w->procs[i].listed)
			continue;
		w->procs[kept] = w->procs[i];
		if (key_index_put(&w->ix_procs, w->procs[kept].pid, 0, kept))
			return -ENOMEM;
		kept++;
	}
	w->nprocs = kept;
	kept = 0;
	key_index_free(&w->ix_threads);
	for (size_t i = 0; i < w->nthreads; i++) {
		struct wait_thread *t = &w->threads[i];

		if (t->exited || !find_proc(w, t->pid))
			continue;
		t->born = 0;
		t->cuda_calls = 0;
		t->npieces = 0;
		t->early_ns = 0;
		memset(t->ns, 0, sizeof(t->ns));
		w->threads[kept] = *t;
		if (key_index_put(&w->ix_threads, t->pid, t->tid, kept))
			return -ENOMEM;
		kept++;
	}
	w->nthreads = kept;
	return 0;
}

static int baseline(struct live_waits *w, uint32_t pid, live_now_fn now_fn, void *ctx)
{
	struct wait_proc *p = get_proc(w, pid);
	struct wait_thread *t;
	struct thread_now n;

	if (!p)
		return -ENOMEM;
	p->listed = true;
	t = get_thread(w, pid, pid);
	if (!t)
		return -ENOMEM;
	if (!now_fn(ctx, pid, pid, &n))
		note_pre(t, &n);
	return 0;
}

int live_waits_tick(struct live_waits *w, uint64_t now, const uint32_t *pids, size_t npids,
		    live_now_fn now_fn, void *ctx)
{
	int err = 0;

	if (w->started) {
		err = results(w, now, pids, npids, now_fn, ctx);
	} else {
		/* the baseline: what came before it is not the first interval's, but a main thread
		 * may be in a wait that began before the attach, whose end will have no record */
		for (size_t i = 0; i < npids && !err; i++)
			err = baseline(w, pids[i], now_fn, ctx);
	}
	w->from = now;
	w->started = true;
	return err ?: forget(w);
}

const struct live_wait_result *live_waits_result(const struct live_waits *w, uint32_t pid)
{
	const struct wait_proc *p = find_proc(w, pid);

	return p ? &p->result : NULL;
}

enum stall_kind live_wait_dominant(const struct live_wait_result *r, double *pct)
{
	enum stall_kind best = 0;

	for (int k = 1; k < STALL_NKINDS; k++)
		if (r->ns[k] > r->ns[best])
			best = (enum stall_kind)k;
	*pct = r->wall_ns ? 100.0 * (double)r->ns[best] / (double)r->wall_ns : 0.0;
	return best;
}
