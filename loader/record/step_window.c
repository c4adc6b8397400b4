// SPDX-License-Identifier: MIT
/* A window of training steps (step_window.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "lib/clocks.h"
#include "lib/messages.h"
#include "loader/record/record_buf.h"
#include "loader/record/record_trace.h"
#include "loader/record/step_watch.h"
#include "loader/record/step_window.h"
#include "loader/session/bpf_session.h"
#include "output/trace/trace_writer.h"

/* How often the steps are looked for: a step is seen this long after it began, at most (a
 * Python iteration; an NVTX range once the bridge delivers it, 0.1 s after it ended) */
#define WATCH_PERIOD_NS 250000000ull
/* An update may take at most this share of the time between two (1/8): the finder reads every
 * stack kept, and a process with no steps yet keeps a minute of them */
#define WATCH_COST_SHARE 8
/* How often the statistics maps are taken (between updates too): the window's statistics start
 * and end within this of its bounds */
#define TAKE_PERIOD_NS 100000000ull
/* Events held before the window's bounds say which side they fall on; beyond this the oldest
 * go first: let go before the window opened (they most likely precede it), written after */
#define HELD_MAX (256ull << 20)

/* A take of the statistics maps (bpf_session_take_stats): what they counted since the take
 * before, up to `ts`, and the loss counters then. */
struct take {
	uint64_t ts;
	struct loss_counts losses;
};

enum window_state {
	WINDOW_WAITING, /* for step K */
	WINDOW_OPEN,	/* S known, E not yet */
	WINDOW_CLOSED,	/* S and E known */
};

struct step_window {
	struct recorder *r;
	struct step_watch *watch;
	uint64_t first, last; /* the window's steps: K and K+N-1 */
	enum window_state state;
	uint32_t pid;  /* the window's process */
	char how[192]; /* how its steps were found */
	uint64_t start, end;
	uint64_t horizon; /* events before it are outside the window (before S) */
	uint64_t release; /* OPEN: events from S to here are in it */
	uint64_t at;	  /* the latest step seen of the process furthest on */
	uint64_t done;	  /* the window's steps that have ended */
	bool some_steps;  /* steps were found in some process */
	uint32_t at_pid;
	struct record_buf held;
	uint64_t before, after;	   /* events outside the window, not written */
	uint64_t cut, cut_last_ts; /* events let go for HELD_MAX before S was known */
	/* statistics: the maps are taken every TAKE_PERIOD_NS, the takes held like events; the
	 * window's are those after the last take before S, up to the first take after E */
	struct trace_writer *taker; /* a sink: the takes' records go to `stats` */
	struct record_buf stats;    /* takes, and threads' final totals (at their exit) */
	struct take *takes;
	size_t ntakes, takes_cap;
	uint64_t stats_from, stats_to;
	uint64_t next_update;
	bool final; /* the last look, with every record in: steps need not be settled */
	char status[256];
};

enum rec_class { REC_META, REC_EVENT, REC_STATS };

/* What the window does with a record type. Unknown types are metadata: a record that names
 * something must never go missing; an event type added later belongs in this list. */
static enum rec_class classify(uint16_t type)
{
	switch (type) {
	case GS_REC_SYSCALL:
	case GS_REC_OFFCPU:
	case GS_REC_CUDA_CALL:
	case GS_REC_PY_STACK:
	case GS_REC_OP_CALL:
	case GS_REC_GPU_KERNEL:
	case GS_REC_GPU_MEMCPY:
	case GS_REC_GPU_MEMSET:
	case GS_REC_GPU_API:
	case GS_REC_GPU_SYNC:
	case GS_REC_GPU_OVERHEAD:
	case GS_REC_NVTX:
	case GS_REC_TORCH_OP:
		return REC_EVENT;
	case GS_REC_SYSCALL_STATS:
	case GS_REC_OFFCPU_STATS:
	case GS_REC_LOSS:
	case GS_REC_LOSS_MORE:
	case GS_REC_GPU_LOSS:
		return REC_STATS;
	case GS_REC_GPU_DEVICE: /* a GPU's properties: sent once per CUPTI session, not an event */
		return REC_META;
	default:
		return REC_META;
	}
}

/*
 * Statistics and loss counters: the window's only. The checkpoints of the maps are not written:
 * the window writes its own takes. A thread's final totals (GS_STATS_FINAL, at its exit) count
 * what it did since the take before, so they are held and written as the takes are. Loss
 * records count from the base the window's start set, and the window writes the last one.
 */
static int gate_stats(struct step_window *w, const struct gs_hdr *rec)
{
	int err;

	if (rec->type == GS_REC_LOSS || rec->type == GS_REC_LOSS_MORE ||
	    rec->type == GS_REC_GPU_LOSS)
		return w->state != WINDOW_OPEN;
	if (!(rec->flags & GS_STATS_FINAL) || rec->ts <= w->stats_from)
		return 1;
	if (w->state == WINDOW_CLOSED)
		return rec->ts > w->stats_to;
	if (w->state == WINDOW_OPEN && rec->ts <= w->release)
		return 0;
	err = record_buf_add(&w->stats, rec);
	return err ? err : 1;
}

static int gate(void *ctx, const struct gs_hdr *rec)
{
	struct step_window *w = ctx;
	int err = step_watch_takes(rec->type) ? step_watch_take(w->watch, rec) : 0;

	if (err)
		return err;
	switch (classify(rec->type)) {
	case REC_META:
		return 0;
	case REC_STATS:
		return gate_stats(w, rec);
	default:
		break;
	}
	if (rec->ts < w->horizon) {
		w->before++;
		return 1;
	}
	if (w->state == WINDOW_CLOSED) {
		if (rec->ts < w->end)
			return 0;
		w->after++;
		return 1;
	}
	if (w->state == WINDOW_OPEN && rec->ts < w->release)
		return 0;
	err = record_buf_add(&w->held, rec);
	return err ? err : 1;
}

/* One pass over the held events: those before the horizon or from `drop_from` on go, those
 * before `write_below` are written, and the oldest `budget` bytes of the rest go too (HELD_MAX):
 * let go while the window's start is unknown, written after. */
struct sweep {
	struct step_window *w;
	uint64_t write_below, drop_from;
	uint64_t budget;
};

static int sweep_one(void *ctx, const struct gs_hdr *rec)
{
	struct sweep *s = ctx;
	struct step_window *w = s->w;
	bool over = s->budget > 0;

	if (rec->ts < w->horizon) {
		w->before++;
		return 0;
	}
	if (rec->ts >= s->drop_from) {
		w->after++;
		return 0;
	}
	if (over)
		s->budget = s->budget > rec->size ? s->budget - rec->size : 0;
	if (over && w->state == WINDOW_WAITING) {
		w->cut++;
		if (rec->ts > w->cut_last_ts)
			w->cut_last_ts = rec->ts;
		return 0;
	}
	if (over || rec->ts < s->write_below) {
		int err = trace_writer_append(w->r->writer, rec);

		return err < 0 ? err : 0;
	}
	return 1;
}

/* What the gate kept goes in past it. */
static int past_gate(struct step_window *w, struct record_buf *b, record_buf_keep_fn keep,
		     void *ctx)
{
	int err;

	if (!b->len)
		return 0;
	trace_writer_set_gate(w->r->writer, NULL, NULL);
	err = record_buf_filter(b, keep, ctx);
	trace_writer_set_gate(w->r->writer, gate, w);
	return err;
}

static int sweep(struct step_window *w, uint64_t write_below, uint64_t drop_from)
{
	struct sweep s = {w, write_below, drop_from, 0};

	if (w->held.len > HELD_MAX)
		s.budget = w->held.len - HELD_MAX / 4 * 3;
	return past_gate(w, &w->held, sweep_one, &s);
}

/* The statistics held: those up to `drop_to` go, then those up to `write_to` are written. */
struct stats_sweep {
	struct step_window *w;
	uint64_t drop_to, write_to;
};

static int sweep_stats_one(void *ctx, const struct gs_hdr *rec)
{
	struct stats_sweep *s = ctx;

	if (rec->ts <= s->drop_to)
		return 0;
	if (rec->ts <= s->write_to) {
		int err = trace_writer_append(s->w->r->writer, rec);

		return err < 0 ? err : 0;
	}
	return 1;
}

static int sweep_stats(struct step_window *w, uint64_t drop_to, uint64_t write_to)
{
	struct stats_sweep s = {w, drop_to, write_to};

	return past_gate(w, &w->stats, sweep_stats_one, &s);
}

/* A take's records are written, when in the window, as sums to add up (trace_model.h says how
 * a reader adds them), as a thread's final totals are: the maps counted from zero again after
 * each. */
static int keep_take(void *ctx, const struct gs_hdr *rec)
{
	struct step_window *w = ctx;
	int err = record_buf_add(&w->stats, rec);

	if (!err)
		((struct gs_hdr *)(w->stats.data + w->stats.len - rec->size))->flags |=
		    GS_STATS_FINAL;
	return err;
}

static int take_stats(struct step_window *w, uint64_t now)
{
	struct take *t = array_grow((void **)&w->takes, &w->ntakes, &w->takes_cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->ts = now;
	recorder_read_losses(w->r, &t->losses);
	return bpf_session_take_stats(w->r->session, w->taker, now);
}

/* The last take at or before `ts` (NULL: none), or the first at or after it. */
static const struct take *take_before(const struct step_window *w, uint64_t ts)
{
	const struct take *t = NULL;

	for (size_t i = 0; i < w->ntakes && w->takes[i].ts <= ts; i++)
		t = &w->takes[i];
	return t;
}

static const struct take *take_after(const struct step_window *w, uint64_t ts)
{
	for (size_t i = 0; i < w->ntakes; i++)
		if (w->takes[i].ts >= ts)
			return &w->takes[i];
	return w->ntakes ? &w->takes[w->ntakes - 1] : NULL;
}

/* The takes before `t` are no longer needed; nor are the statistics up to it. */
static int forget_takes(struct step_window *w, const struct take *t)
{
	size_t k = (size_t)(t - w->takes);

	memmove(w->takes, t, (w->ntakes - k) * sizeof(*t));
	w->ntakes -= k;
	return sweep_stats(w, w->takes[0].ts, 0);
}

int step_window_new(struct recorder *r, struct step_window **out)
{
	const struct record_opts *o = &r->opts;
	struct step_window *w = calloc(1, sizeof(*w));

	if (!w || step_watch_new(o->steps_by, o->cupti, o->python, &w->watch) ||
	    trace_writer_open_sink(keep_take, w, &w->taker)) {
		if (w)
			step_watch_free(w->watch);
		free(w);
		return -ENOMEM;
	}
	w->r = r;
	w->first = o->skip_steps;
	w->last = o->skip_steps + o->steps - 1;
	step_watch_keep_from(w->watch, w->first);
	trace_writer_set_gate(r->writer, gate, w);
	*out = w;
	return 0;
}

/* The latest of a process's steps known to lie before step `index`: it ends (or, while it
 * lasts, starts) before step `index` starts. 0 when none is listed. */
static uint64_t known_before(const struct watch_proc *s, uint64_t index)
{
	size_t i;

	if (s->first >= index)
		return 0;
	i = index - s->first - 1 < s->n - 1 ? index - s->first - 1 : s->n - 1;
	return i < s->n - 1 || s->last_ended ? s->v[i].end : s->v[i].start;
}

static bool step_ended(const struct watch_proc *s, uint64_t index)
{
	return index < s->first + s->n - 1 || (index == s->first + s->n - 1 && s->last_ended);
}

/* The statistics up to the first take after E (the update that saw E took the maps), and the
 * loss counters then. */
static int close_window(struct step_window *w, uint64_t end)
{
	const struct take *t = take_after(w, end);
	int err;

	w->state = WINDOW_CLOSED;
	w->end = end;
	w->done = w->last - w->first + 1;
	w->stats_to = t ? t->ts : 0;
	err = sweep_stats(w, w->stats_from, w->stats_to);
	if (!err && t) {
		trace_writer_set_gate(w->r->writer, NULL, NULL);
		err = recorder_write_loss_counts(w->r, &t->losses, t->ts, false);
		trace_writer_set_gate(w->r->writer, gate, w);
	}
	err = err ?: sweep_stats(w, UINT64_MAX, 0);
	return err ?: sweep(w, end, end);
}

/* The window's process: its steps so far say where the window ends, and which held events
 * are in it. */
static int follow_window(struct step_window *w)
{
	const struct watch_proc *s = NULL;
	uint64_t latest;

	for (size_t i = 0; i < step_watch_nprocs(w->watch); i++)
		if (step_watch_proc(w->watch, i)->pid == w->pid)
			s = step_watch_proc(w->watch, i);
	if (!s || (!s->settled && !w->final))
		return sweep(w, w->release, UINT64_MAX)
			   ?: sweep_stats(w, w->stats_from, w->release);
	latest = s->first + s->n - 1;
	w->at = latest > w->at ? latest : w->at;
	if (latest >= w->last && s->first <= w->last && step_ended(s, w->last))
		return close_window(w, s->v[w->last - s->first].end);
	for (uint64_t i = w->first; i <= latest && i <= w->last; i++)
		if (i >= s->first && step_ended(s, i) && i - w->first + 1 > w->done)
			w->done = i - w->first + 1;
	/* the window ends after the latest step seen of it started (or, when it ended before
	 * the last one, after that end) */
	if (latest >= w->first && latest >= s->first) {
		const struct step *v = &s->v[latest - s->first];
		uint64_t known = step_ended(s, latest) ? v->end : v->start;

		if (known > w->release)
			w->release = known;
	}
	return sweep(w, w->release, UINT64_MAX) ?: sweep_stats(w, w->stats_from, w->release);
}

static int open_window(struct step_window *w, const struct watch_proc *s)
{
	struct recorder *r = w->r;
	const struct take *t;
	int err;

	w->state = WINDOW_OPEN;
	w->pid = s->pid;
	snprintf(w->how, sizeof(w->how), "%s", s->how);
	w->start = w->horizon = w->release = s->v[w->first - s->first].start;
	step_watch_follow(w->watch, s->pid);
	step_watch_keep_from(w->watch, w->last);
	if (w->cut && w->cut_last_ts >= w->start)
		gs_warn(
		    "the window's first %.3f s may miss events: more than %llu MiB of them came "
		    "before its start was seen",
		    (double)(w->cut_last_ts - w->start) / 1e9, HELD_MAX >> 20);
	/* counts from the last take before S: the window's, not the warm-up's (with no take
	 * yet, from the recording's start) */
	t = take_before(w, w->start);
	if (t) {
		w->stats_from = t->ts;
		r->loss_base = t->losses;
		err = forget_takes(w, t);
		if (err)
			return err;
	}
	/* readers take the last TRACE_INFO: durations are measured from the window's start */
	err = recorder_write_trace_info(r, w->start);
	return err ?: follow_window(w);
}

/* Before the window: its process is the first to reach step K. Until then, events that
 * precede every process's next steps are let go. Steps count once settled (step_watch.h). */
static int look_for_start(struct step_window *w)
{
	const struct take *t;
	const struct watch_proc *best = NULL;
	uint64_t horizon = UINT64_MAX;

	for (size_t i = 0; i < step_watch_nprocs(w->watch); i++) {
		const struct watch_proc *s = step_watch_proc(w->watch, i);
		uint64_t latest = s->first + s->n - 1;

		w->some_steps = true;
		if (latest >= w->at || !w->at_pid) {
			w->at = latest;
			w->at_pid = s->pid;
		}
		if (!s->settled && !w->final)
			continue;
		if (latest >= w->first && s->first <= w->first) {
			if (!best ||
			    s->v[w->first - s->first].start < best->v[w->first - best->first].start)
				best = s;
		} else if (known_before(s, w->first) < horizon) {
			horizon = known_before(s, w->first);
		}
	}
	if (best)
		return open_window(w, best);
	if (horizon != UINT64_MAX && horizon > w->horizon)
		w->horizon = horizon;
	t = take_before(w, w->horizon);
	return sweep(w, 0, UINT64_MAX) ?: (t ? forget_takes(w, t) : 0);
}

static int update(struct step_window *w, uint64_t now)
{
	int err = step_watch_update(w->watch, now) ?: take_stats(w, now);

	for (size_t i = 0; !err && i < step_watch_nprocs(w->watch); i++) {
		const struct watch_proc *s = step_watch_proc(w->watch, i);

		gs_debug("steps of pid %u: %llu..%llu%s (%s), from %llu", s->pid,
			 (unsigned long long)s->first, (unsigned long long)(s->first + s->n - 1),
			 s->last_ended ? "" : " (last under way)", s->how,
			 (unsigned long long)s->v[0].start);
	}

	if (!err && w->state == WINDOW_WAITING)
		err = look_for_start(w);
	else if (!err && w->state == WINDOW_OPEN)
		err = follow_window(w);
	return err;
}

int step_window_tick(struct step_window *w, uint64_t now)
{
	int err = 0;

	if (w->state == WINDOW_CLOSED)
		return 1;
	if (now >= w->next_update) {
		uint64_t cost;

		err = update(w, now);
		cost = gs_monotonic_ns() - now;
		w->next_update =
		    now + (cost * WATCH_COST_SHARE > WATCH_PERIOD_NS ? cost * WATCH_COST_SHARE
								     : WATCH_PERIOD_NS);
	} else {
		if (w->ntakes && now - w->takes[w->ntakes - 1].ts >= TAKE_PERIOD_NS)
			err = take_stats(w, now);
		if (!err && w->held.len > HELD_MAX)
			err = sweep(w, w->state == WINDOW_OPEN ? w->release : 0, UINT64_MAX);
	}
	if (err)
		return err;
	return w->state == WINDOW_CLOSED;
}

int step_window_finish(struct step_window *w, uint64_t now, uint64_t *end_ts)
{
	int err;

	w->final = true;
	err = w->state == WINDOW_CLOSED ? 0 : update(w, now);

	if (!err && w->state == WINDOW_WAITING) {
		w->horizon = UINT64_MAX; /* no window: nothing held is in it */
		err = sweep(w, 0, UINT64_MAX);
	} else if (!err && w->state == WINDOW_OPEN) {
		w->release = UINT64_MAX; /* cut short: all it got */
		err = sweep(w, UINT64_MAX, UINT64_MAX) ?: sweep_stats(w, w->stats_from, UINT64_MAX);
	}
	*end_ts = w->state == WINDOW_CLOSED ? w->end : now;
	return err;
}

bool step_window_complete(const struct step_window *w)
{
	return w->state == WINDOW_CLOSED;
}

const char *step_window_status(struct step_window *w)
{
	switch (w->state) {
	case WINDOW_WAITING:
		if (!w->some_steps)
			snprintf(w->status, sizeof(w->status),
				 "window: waiting for step %llu, no "
				 "steps found yet",
				 (unsigned long long)w->first);
		else
			snprintf(w->status, sizeof(w->status),
				 "window: waiting for step %llu (pid %u at step %llu)",
				 (unsigned long long)w->first, w->at_pid,
				 (unsigned long long)w->at);
		break;
	case WINDOW_OPEN:
		snprintf(w->status, sizeof(w->status),
			 "window: steps %llu..%llu of pid %u, at step %llu",
			 (unsigned long long)w->first, (unsigned long long)w->last, w->pid,
			 (unsigned long long)w->at);
		break;
	case WINDOW_CLOSED:
		snprintf(w->status, sizeof(w->status),
			 "window: steps %llu..%llu of pid %u complete",
			 (unsigned long long)w->first, (unsigned long long)w->last, w->pid);
		break;
	}
	return w->status;
}

void step_window_report(const struct step_window *w, const char *why, bool quiet)
{
	unsigned long long first = w->first, last = w->last, n = w->last - w->first + 1;

	switch (w->state) {
	case WINDOW_CLOSED:
		if (!quiet)
			fprintf(
			    stderr,
			    "gpuspy: window: steps %llu..%llu of pid %u (%s), %.3f s; %llu events "
			    "outside it not written (%llu before, %llu after)\n",
			    first, last, w->pid, w->how, (double)(w->end - w->start) / 1e9,
			    (unsigned long long)(w->before + w->after + w->cut),
			    (unsigned long long)(w->before + w->cut), (unsigned long long)w->after);
		return;
	case WINDOW_OPEN:
		gs_warn(
		    "window cut short (%s): %llu of %llu steps ended (steps %llu..%llu of pid %u, "
		    "%s); the trace holds what was recorded",
		    why, (unsigned long long)w->done, n, first, last, w->pid, w->how);
		return;
	case WINDOW_WAITING:
		if (w->some_steps)
			gs_warn(
			    "window never opened (%s): pid %u reached step %llu, the window starts "
			    "at step %llu; the trace holds no events",
			    why, w->at_pid, (unsigned long long)w->at, first);
		else
			gs_warn("window never opened (%s): no training steps found in the traced "
				"processes (see --steps-by); the trace holds no events",
				why);
		return;
	}
}

void step_window_free(struct step_window *w)
{
	if (!w)
		return;
	if (w->r->writer)
		trace_writer_set_gate(w->r->writer, NULL, NULL);
	step_watch_free(w->watch);
	trace_writer_abandon(w->taker);
	record_buf_free(&w->held);
	record_buf_free(&w->stats);
	free(w->takes);
	free(w);
}
