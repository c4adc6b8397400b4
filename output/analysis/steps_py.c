// SPDX-License-Identifier: MIT
/*
 * Steps from the Python stacks (steps_py.h). Every stack of a thread shows, at each depth from
 * the outermost frame, one code object and the line it was at. A frame that stays at one depth
 * over consecutive stacks is one "segment": one call of that function, seen at every event its
 * thread had meanwhile (syscalls, CUDA calls, operators, CPU samples). A loop's frame is a
 * segment whose lines come back: each line of the loop body is reached once an iteration, so the
 * most separate visits of one of its lines is the number of iterations (a line without an event
 * in some iteration, or under an `if`, is visited less often; an inner loop's line is reached
 * many times in a row and counts once). CPU samples land anywhere, and one between two calls
 * of an inner loop would make its line count twice in an iteration: visits are counted on the
 * events each iteration has (syscalls, CUDA calls, operators), on samples only for a loop
 * without any (pure Python computing).
 *
 * The step loop is the innermost such segment among those that last at least half as long as
 * the longest (a training script's outer frames do not loop; a helper called every step loops
 * only briefly). Python's standard library is never a step loop: its loops are the import
 * machinery's (<frozen importlib...>), queue feeders, selectors and the like, while a training
 * loop is the script's own or a framework's (site-packages, dist-packages). Every call of the
 * chosen function at that depth gives its iterations (a warm-up run, one call per epoch).
 *
 * A stack names each frame's code object, not the call: calls of one function that follow each
 * other with nothing between are one segment. So a loop whose body is a single call is found in
 * the callee, whose lines come back once a call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "output/analysis/steps_py.h"

#define MAX_LOOP_LINES 256 /* a frame visiting more distinct lines is no loop body we can read */

struct line_visits {
	int32_t line;
	uint32_t visits; /* separate runs of consecutive stacks at this line */
	uint64_t last;	 /* when the latest run began */
};

/* The lines one frame was seen at, over some of its stacks. */
struct line_table {
	int32_t prev_line;
	bool full; /* more lines than MAX_LOOP_LINES */
	struct line_visits lines[MAX_LOOP_LINES];
	size_t nlines;
};

/* One frame at one depth over consecutive stacks of a thread. */
struct segment {
	uint64_t addr;
	uint32_t stamp;
	bool open, excluded;
	bool importing;		  /* the frame is Python's import machinery */
	size_t first, last;	  /* by_thread positions */
	struct line_table events; /* at syscalls, CUDA calls and operators */
	struct line_table all;	  /* ... and CPU samples */
};

struct candidate {
	uint32_t pid, tid, depth;
	size_t first, last;
	uint64_t span;
	uint32_t steps;
	int32_t anchor;	 /* the loop's line visited once per step, reached first (most_visits) */
	bool by_samples; /* counted with the CPU samples (a loop without other events) */
	const struct py_frame *frame;
};

struct finder {
	const struct py_model *pm;
	const char *function; /* py:FUNCTION: each call of it is a step; NULL: find the loop */
	struct segment *depths;
	uint32_t nopen; /* depths[nopen..] are all closed */
	struct candidate *cands;
	size_t ncands, cands_cap;
};

static const struct py_stack *stack_at(const struct py_model *pm, size_t pos)
{
	return &pm->stacks[pm->by_thread[pos]];
}

static bool usable(const struct py_stack *s)
{
	return s->nframes && !(s->flags & (GS_PY_TRUNCATED | GS_PY_NO_THREAD));
}

/* Frame at `depth` counted from the outermost one. */
static const struct py_frame *frame_at_depth(const struct py_model *pm, const struct py_stack *s,
					     uint32_t depth)
{
	return py_stack_frame(pm, s, s->nframes - 1 - depth);
}

/* "<frozen importlib._bootstrap>", "/usr/lib/python3.11/queue.py"; not ".../dist-packages/..." */
static bool standard_library(const char *filename)
{
	const char *lib = strstr(filename, "/lib/python3.");

	if (!strncmp(filename, "<frozen ", 8))
		return true;
	return lib && !strstr(lib, "-packages/");
}

static bool import_machinery(const struct finder *f, const struct py_frame *fr)
{
	const char *filename;

	py_frame_symbol(f->pm, fr, NULL, &filename, NULL);
	return !strncmp(filename, "<frozen importlib", 17);
}

static bool wanted(const struct finder *f, const struct py_frame *fr)
{
	const char *qualname, *filename;

	if (py_frame_symbol(f->pm, fr, &qualname, &filename, NULL))
		return false;
	if (f->function)
		return !strcmp(qualname, f->function);
	return !standard_library(filename);
}

static void note_line(struct line_table *t, int32_t line, uint64_t ts)
{
	if (line == t->prev_line)
		return;
	t->prev_line = line;
	for (size_t i = 0; i < t->nlines; i++) {
		if (t->lines[i].line == line) {
			t->lines[i].visits++;
			t->lines[i].last = ts;
			return;
		}
	}
	if (t->nlines == MAX_LOOP_LINES) {
		t->full = true;
		return;
	}
	t->lines[t->nlines++] = (struct line_visits){line, 1, ts};
}

static void note_stack(struct segment *g, const struct py_stack *s, int32_t line)
{
	if (s->kind != GS_PY_SAMPLE)
		note_line(&g->events, line, s->ts);
	note_line(&g->all, line, s->ts);
}

/*
 * The most visits of one line, and among the lines with that many the one whose latest visit
 * began first (the anchor): of a loop's last iteration, the line reached first. A trace that
 * ends inside an iteration (a recording stopped, or `record --steps` reading the run so far)
 * has one visit more of the lines that iteration reached; one of them that missed a visit
 * elsewhere (no event at it in that iteration) then ties with a line reached every time, and
 * its visits would number the steps one short. Its latest visit, in the unfinished iteration,
 * is the later one.
 */
static uint32_t most_visits(const struct line_table *t, int32_t *anchor)
{
	uint64_t last = UINT64_MAX;
	uint32_t most = 0;

	for (size_t i = 0; i < t->nlines; i++) {
		const struct line_visits *l = &t->lines[i];

		if (l->visits > most ||
		    (l->visits == most &&
		     (l->last < last || (l->last == last && l->line < *anchor)))) {
			most = l->visits;
			last = l->last;
			*anchor = l->line;
		}
	}
	return most;
}

/* The number of iterations of a loop frame: 0 when it is none (one line, or no line visited
 * twice). */
static uint32_t loop_steps(const struct segment *g, int32_t *anchor, bool *by_samples)
{
	uint32_t n;

	*anchor = INT32_MAX;
	*by_samples = false;
	if (g->events.full || g->all.full || g->all.nlines < 2)
		return 0;
	n = most_visits(&g->events, anchor);
	if (n >= 2 && g->events.nlines >= 2)
		return n;
	*anchor = INT32_MAX;
	*by_samples = true;
	return most_visits(&g->all, anchor);
}

static int close_segment(struct finder *f, struct segment *g, uint32_t depth)
{
	const struct py_stack *first, *last;
	struct candidate *c;
	uint32_t steps = 1;
	int32_t anchor = 0;
	bool by_samples = false;

	if (!g->open)
		return 0;
	g->open = false;
	if (g->excluded)
		return 0;
	/* a call that ran its loop body once is kept too: when something between two calls of the
	 * loop's function split them, it is one of the loop's iterations */
	if (!f->function && !(steps = loop_steps(g, &anchor, &by_samples)))
		return 0;
	first = stack_at(f->pm, g->first);
	last = stack_at(f->pm, g->last);
	c = array_grow((void **)&f->cands, &f->ncands, &f->cands_cap, sizeof(*c));
	if (!c)
		return -1;
	*c = (struct candidate){
	    .pid = first->pid,
	    .tid = first->tid,
	    .depth = depth,
	    .first = g->first,
	    .last = g->last,
	    .span = last->end_ts > first->ts ? last->end_ts - first->ts : 0,
	    .steps = steps,
	    .anchor = anchor,
	    .by_samples = by_samples,
	    .frame = frame_at_depth(f->pm, first, depth),
	};
	return 0;
}

/* `importing`: a frame below it imports a module, so it is a module's top-level code (or what
 * that calls) running once at import, never a training loop (torch's import runs loops for
 * longer than a short training run). */
static void open_segment(struct finder *f, struct segment *g, const struct py_frame *fr, size_t pos,
			 bool importing)
{
	g->open = true;
	g->importing = import_machinery(f, fr);
	g->excluded = importing || !wanted(f, fr);
	g->addr = fr->addr;
	g->stamp = fr->stamp;
	g->first = g->last = pos;
	g->events.nlines = g->all.nlines = 0;
	g->events.full = g->all.full = false;
	g->events.prev_line = g->all.prev_line = INT32_MIN;
}

/* Every segment of one thread's stacks [begin, end) becomes a candidate. */
static int scan_thread(struct finder *f, size_t begin, size_t end)
{
	for (size_t pos = begin; pos < end; pos++) {
		const struct py_stack *s = stack_at(f->pm, pos);
		uint32_t depths = s->nframes > f->nopen ? s->nframes : f->nopen;
		bool importing = false;

		if (!usable(s))
			continue;
		for (uint32_t d = 0; d < depths; d++) {
			struct segment *g = &f->depths[d];
			const struct py_frame *fr =
			    d < s->nframes ? frame_at_depth(f->pm, s, d) : NULL;

			if (g->open && fr && fr->addr == g->addr && fr->stamp == g->stamp) {
				g->last = pos;
				note_stack(g, s, fr->line);
				importing |= g->importing;
				continue;
			}
			if (close_segment(f, g, d))
				return -1;
			if (fr) {
				open_segment(f, g, fr, pos, importing);
				note_stack(g, s, fr->line);
				importing |= g->importing;
			}
		}
		f->nopen = s->nframes;
	}
	for (uint32_t d = 0; d < f->nopen; d++)
		if (close_segment(f, &f->depths[d], d))
			return -1;
	f->nopen = 0;
	return 0;
}

/* The loop of one process: on its main thread when that one loops (a training script's loop
 * runs there; the other threads are helpers such as a queue's feeder), the innermost candidate
 * lasting at least half the longest. A line seen twice is a weak loop (a `with` statement's
 * line is reached on entry and on exit): when some candidate cycles three times or more, the
 * two-visit ones neither set the longest span nor win. */
static const struct candidate *choose_loop(const struct candidate *c, size_t n)
{
	const struct candidate *best = NULL;
	uint64_t longest = 0;
	bool main_loops = false;
	uint32_t least = 2;

	for (size_t i = 0; i < n; i++)
		main_loops |= c[i].tid == c[i].pid && c[i].steps >= 2;
	for (size_t i = 0; i < n; i++)
		if (c[i].steps >= 3 && (!main_loops || c[i].tid == c[i].pid))
			least = 3;
	for (size_t i = 0; i < n; i++)
		if (c[i].steps >= least && c[i].span > longest &&
		    (!main_loops || c[i].tid == c[i].pid))
			longest = c[i].span;
	for (size_t i = 0; i < n; i++) {
		if (c[i].steps < least)
			continue;
		/* span < longest / 2, rounded up: a span doubled could overflow */
		if (c[i].span < longest - longest / 2 || (main_loops && c[i].tid != c[i].pid))
			continue;
		if (!best || c[i].depth > best->depth ||
		    (c[i].depth == best->depth && c[i].span > best->span))
			best = &c[i];
	}
	return best;
}

static void describe(const struct finder *f, const struct candidate *c, char *buf, size_t len)
{
	const char *qualname, *filename, *base;

	py_frame_symbol(f->pm, c->frame, &qualname, &filename, NULL);
	base = strrchr(filename, '/');
	base = base ? base + 1 : filename;
	if (f->function)
		snprintf(buf, len, "py:%s (each call)", qualname);
	else
		snprintf(buf, len, "python loop in %s (%s:%d)", qualname, base, c->anchor);
}

/* Steps of a loop: each starts where a visit of the anchor line starts; the last ends with the
 * loop frame's last stack. */
/* The last moment a stack shows its thread under its frames: a CPU sample's end_ts is its
 * period's end, up to a sampling interval after the sample, when the loop may be long over
 * (a step ending there would run into the calls that follow the loop). */
static uint64_t seen_until(const struct py_stack *s)
{
	return s->kind == GS_PY_SAMPLE ? s->ts : s->end_ts;
}

static int emit_loop(struct finder *f, const struct candidate *c, struct step_list *out)
{
	uint64_t start = 0, end = 0;
	int32_t prev = INT32_MIN;
	bool started = false;

	for (size_t pos = c->first; pos <= c->last; pos++) {
		const struct py_stack *s = stack_at(f->pm, pos);
		int32_t line;

		if (!usable(s))
			continue;
		if (seen_until(s) > end)
			end = seen_until(s);
		if (s->kind == GS_PY_SAMPLE && !c->by_samples)
			continue;
		line = frame_at_depth(f->pm, s, c->depth)->line;
		if (line == c->anchor && prev != c->anchor) {
			if (started && step_list_add(out, start, s->ts))
				return -1;
			start = s->ts;
			started = true;
		}
		prev = line;
	}
	return started ? step_list_add(out, start, end) : 0;
}

static int emit_calls(const struct candidate *c, size_t n, const struct py_model *pm,
		      struct step_list *out)
{
	for (size_t i = 0; i < n; i++)
		if (step_list_add(out, stack_at(pm, c[i].first)->ts,
				  seen_until(stack_at(pm, c[i].last))))
			return -1;
	return 0;
}

static int cmp_call(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/* py:FUNCTION: its calls where it is outermost, in the thread of the first such call (a step
 * function is called from one loop). */
static int emit_function(struct finder *f, uint32_t pid, struct step_list *out)
{
	const struct candidate *outer = &f->cands[0];
	size_t kept = 0;
	char how[192];

	for (size_t i = 1; i < f->ncands; i++)
		if (f->cands[i].depth < outer->depth)
			outer = &f->cands[i];
	describe(f, outer, how, sizeof(how));
	if (step_list_begin(out, pid, outer->tid, how))
		return -1;
	for (size_t i = 0, depth = outer->depth, tid = outer->tid; i < f->ncands; i++)
		if (f->cands[i].depth == depth && f->cands[i].tid == tid)
			f->cands[kept++] = f->cands[i];
	qsort(f->cands, kept, sizeof(*f->cands), cmp_call);
	return emit_calls(f->cands, kept, f->pm, out);
}

/* torch's DataLoader worker processes loop over batches to fetch: their time belongs to the
 * steps of the process they feed, not to steps of their own. */
static bool dataloader_worker(const struct finder *f)
{
	for (size_t i = 0; i < f->ncands; i++) {
		const char *qualname, *filename;
		size_t n;

		py_frame_symbol(f->pm, f->cands[i].frame, &qualname, &filename, NULL);
		n = strlen(filename);
		if (!strcmp(qualname, "_worker_loop") && n >= 27 &&
		    !strcmp(filename + n - 27, "utils/data/_utils/worker.py"))
			return true;
	}
	return false;
}

static bool same_loop(const struct candidate *a, const struct candidate *b)
{
	return a->tid == b->tid && a->depth == b->depth && a->frame->addr == b->frame->addr &&
	       a->frame->stamp == b->frame->stamp;
}

static int emit_process(struct finder *f, uint32_t pid, struct step_list *out)
{
	const struct candidate *loop;
	char how[192];

	if (!f->ncands || (!f->function && dataloader_worker(f)))
		return 0;
	if (f->function)
		return emit_function(f, pid, out);
	loop = choose_loop(f->cands, f->ncands);
	if (!loop)
		return 0;
	describe(f, loop, how, sizeof(how));
	if (step_list_begin(out, pid, loop->tid, how))
		return -1;
	/* every call of the loop's function at that depth: a warm-up run and the measured one, or
	 * one call per epoch, are all the loop's iterations (candidates of one depth were closed
	 * in time order) */
	for (size_t i = 0; i < f->ncands; i++)
		if (same_loop(&f->cands[i], loop) && emit_loop(f, &f->cands[i], out))
			return -1;
	return 0;
}

int steps_py_find(const struct py_model *pm, const char *function, const uint32_t *skip_pids,
		  size_t nskip, struct step_list *out)
{
	struct finder f = {.pm = pm, .function = function};
	size_t pos = 0;
	int err = 0;

	f.depths = calloc(GS_PY_MAX_FRAMES, sizeof(*f.depths));
	if (!f.depths)
		return -1;
	while (!err && pos < pm->nstacks) {
		uint32_t pid = stack_at(pm, pos)->pid;
		bool skip = false;

		for (size_t i = 0; i < nskip; i++)
			skip |= skip_pids[i] == pid;
		f.ncands = 0;
		while (!err && pos < pm->nstacks && stack_at(pm, pos)->pid == pid) {
			size_t end = pos;
			uint32_t tid = stack_at(pm, pos)->tid;

			while (end < pm->nstacks && stack_at(pm, end)->pid == pid &&
			       stack_at(pm, end)->tid == tid)
				end++;
			if (!skip)
				err = scan_thread(&f, pos, end);
			pos = end;
		}
		if (!err && !skip)
			err = emit_process(&f, pid, out);
	}
	free(f.cands);
	free(f.depths);
	return err;
}
