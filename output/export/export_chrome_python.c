// SPDX-License-Identifier: MIT
/*
 * Python on the Chrome timeline. Two things:
 *
 * - The stack a thread was under, as args.python_stack (frames "qualname (file:line)", leaf
 *   first) on its syscall, off-CPU and CUDA API spans and operators, once per outermost span
 *   (what nests inside one ran under the same stack). A training step repeats the same few
 *   stacks millions of times, so each frame's JSON text is made once and kept (interned by
 *   code object and line); deep stacks keep their leafmost frames (--python-depth) so one
 *   event cannot grow without bound.
 *
 * - The CPU samples as a flame chart: per sampled thread, a track of its own in the thread's
 *   process, "python samples (tid N)", whose tid is the thread's plus SAMPLE_TID_BASE (above
 *   every Linux tid, so it cannot be a real thread's). Consecutive samples that share a
 *   prefix of functions (root first) make one slice per function, as a profiler's flame chart
 *   shows them; a gap in the samples (the thread off CPU) ends every slice. Slices are cut at
 *   sample boundaries that only move forward, so they nest by construction, and are written
 *   caller first (close_from says why).
 *
 * The operators' `cpu_op` slices, which get these stacks too, are export_chrome_ops.c's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "lib/json_writer.h"
#include "output/export/chrome_events.h"
#include "output/export/export_chrome_python.h"
#include "output/model/py_names.h"
#include "output/model/trace_model.h"

#define SAMPLE_TID_BASE (1u << 23) /* above PID_MAX_LIMIT (2^22): no real tid is this high */
#define MAX_OPEN	(GS_PY_MAX_FRAMES + 1) /* a cut stack has a "[truncated]" root */

struct open_frame {
	struct py_func_key key;
	const struct py_frame *frame; /* NULL: the "[truncated]" root */
	uint64_t start, samples;
};

/* A closed slice waiting for its run of samples to end (see close_from). */
struct done_slice {
	struct open_frame o;
	uint64_t end;
	size_t depth;
};

struct chrome_python {
	struct string_pool labels;  /* frames' JSON strings, quotes included */
	struct key_index ix_labels; /* (code record or PY_NONE, line) -> labels id */
	uint64_t *sampled;	    /* (pid << 32 | tid) of each thread with samples */
	size_t nsampled, sampled_cap;
	/* the flame chart of the thread being written */
	struct open_frame open[MAX_OPEN];
	size_t nopen;
	uint64_t last_end;	 /* where the last sample ended; slices close there */
	struct done_slice *done; /* the current run's closed slices */
	size_t ndone, done_cap;
	uint32_t pid, track;
	bool named; /* the track is in sampled[] */
};

static struct chrome_python *state(struct chrome_ctx *c)
{
	if (!c->python)
		c->python = calloc(1, sizeof(*c->python));
	return c->python;
}

/* A frame's label as a JSON string, made once per (code object, line). NULL: out of memory. */
static const char *frame_json(struct chrome_python *py, const struct py_model *pm,
			      const struct py_frame *f)
{
	uint64_t k1 = f->code == PY_NONE ? UINT64_MAX : f->code;
	char label[512], *json = NULL;
	size_t i, len = 0;
	uint32_t id;
	FILE *mem;

	if (key_index_find(&py->ix_labels, k1, (uint64_t)(uint32_t)f->line, &i))
		return string_pool_get(&py->labels, (uint32_t)i);
	mem = open_memstream(&json, &len);
	if (!mem)
		return NULL;
	json_print_string(mem, py_frame_label(pm, f, label, sizeof(label)));
	if (fclose(mem) || string_pool_intern(&py->labels, json, &id) ||
	    key_index_put(&py->ix_labels, k1, (uint64_t)(uint32_t)f->line, id)) {
		free(json);
		return NULL;
	}
	free(json);
	return string_pool_get(&py->labels, id);
}

static int print_frames(struct chrome_ctx *c, const struct py_stack *s)
{
	const struct py_model *pm = &c->names->py;
	size_t n = s->nframes < c->python_depth ? s->nframes : c->python_depth;

	fputs(", \"python_stack\": [", c->out);
	for (size_t j = 0; j < n; j++) {
		const char *json = frame_json(c->python, pm, py_stack_frame(pm, s, j));

		if (!json)
			return -1;
		fprintf(c->out, "%s%s", j ? ", " : "", json);
	}
	/* the outermost callers are the ones cut: say how many, as a last entry */
	if (n < s->nframes)
		fprintf(c->out, "%s\"[%zu outer frames not shown]\"", n ? ", " : "",
			(size_t)(s->nframes - n));
	else if (s->flags & GS_PY_TRUNCATED)
		fputs(n ? ", \"[truncated]\"" : "\"[truncated]\"", c->out);
	fputc(']', c->out);
	return 0;
}

static const struct py_stack *stack_at(const struct chrome_ctx *c, uint32_t pid, uint32_t tid,
				       uint64_t ts)
{
	if (!c->python_depth || !py_model_stack_count(&c->names->py))
		return NULL;
	return py_model_stack_at(&c->names->py, pid, tid, ts);
}

static int stack_args(struct chrome_ctx *c, const struct py_stack *s)
{
	if (!s || !s->nframes)
		return 0;
	if (!state(c) || print_frames(c, s))
		return -1;
	/* a stack captured at the event itself is exact; a sample's is the thread's stack
	 * somewhen within one sampling period of it */
	if (s->kind == GS_PY_SAMPLE)
		fputs(", \"python_stack_sampled\": true", c->out);
	return 0;
}

int chrome_python_stack_args(struct chrome_ctx *c, uint32_t pid, uint32_t tid, uint64_t ts)
{
	return stack_args(c, stack_at(c, pid, tid, ts));
}

/* The stack is written once, on the outermost span that ran under it: an off-CPU span inside
 * a syscall span with the stack captured for that syscall, or a CUDA call inside an operator,
 * has it in that span's args. This halves the Python part of a file. */
int chrome_python_offcpu_args(struct chrome_ctx *c, const struct gs_offcpu *o)
{
	const struct py_stack *s = stack_at(c, o->hdr.pid, o->hdr.tid, o->hdr.ts);

	/* a syscall at least the span threshold long was written as a span */
	if (s && s->kind == GS_PY_AT_SYSCALL && s->end_ts - s->ts >= c->names->osrt_threshold_ns)
		return 0;
	return stack_args(c, s);
}

int chrome_python_cuda_args(struct chrome_ctx *c, const struct gs_cuda_call *call)
{
	if (op_model_call_at(&c->names->ops, call->hdr.pid, call->hdr.tid, call->hdr.ts))
		return 0;
	return chrome_python_stack_args(c, call->hdr.pid, call->hdr.tid, call->hdr.ts);
}

/* --- the flame chart of CPU samples --- */

static void emit_slice(struct chrome_ctx *c, const struct open_frame *o, uint64_t end)
{
	struct chrome_python *py = c->python;
	const struct py_model *pm = &c->names->py;
	const char *qualname = "[truncated]", *filename = "";
	const struct py_code *code = o->frame ? py_frame_code(pm, o->frame) : NULL;

	if (o->frame)
		py_frame_symbol(pm, o->frame, &qualname, &filename, NULL);
	chrome_begin_event(c);
	fputs("{\"ph\": \"X\", \"cat\": \"python_sample\", \"name\": ", c->out);
	json_print_string(c->out, qualname);
	fprintf(c->out, ", \"pid\": %u, \"tid\": %u, ", py->pid, py->track);
	chrome_print_us(c->out, "ts", chrome_rel(c, o->start));
	fputs(", ", c->out);
	chrome_print_us(c->out, "dur", end - o->start);
	fputs(", \"args\": {\"file\": ", c->out);
	json_print_string(c->out, filename);
	if (code)
		fprintf(c->out, ", \"line\": %d", code->firstlineno);
	fprintf(c->out, ", \"samples\": %" PRIu64 "}}", o->samples);
}

static int cmp_done(const void *a, const void *b)
{
	const struct done_slice *x = a, *y = b;

	if (x->o.start != y->o.start)
		return x->o.start < y->o.start ? -1 : 1;
	return (x->depth > y->depth) - (x->depth < y->depth);
}

/* Closes the open slices from depth `keep` up. A callee closes before its caller, but both
 * often start at the same sample, and viewers (Perfetto, Catapult, speedscope) nest slices of
 * equal ts (and dur) in file order, so a callee written first would draw above its caller.
 * The slices of a run of samples are kept until the run ends (its root closes) and written
 * by start, then depth: every caller before the callees that start with it. 0, or -1 when out
 * of memory. */
static int close_from(struct chrome_ctx *c, size_t keep)
{
	struct chrome_python *py = c->python;

	for (size_t d = keep; d < py->nopen; d++) {
		struct done_slice *e =
		    array_grow((void **)&py->done, &py->ndone, &py->done_cap, sizeof(*e));

		if (!e)
			return -1;
		*e = (struct done_slice){.o = py->open[d], .end = py->last_end, .depth = d};
	}
	if (py->nopen > keep)
		py->nopen = keep;
	if (py->nopen || !py->ndone)
		return 0;
	qsort(py->done, py->ndone, sizeof(*py->done), cmp_done);
	for (size_t i = 0; i < py->ndone; i++)
		emit_slice(c, &py->done[i].o, py->done[i].end);
	py->ndone = 0;
	return 0;
}

/* The sample's functions root first into `out`; returns how many. */
static size_t sample_path(const struct py_model *pm, const struct py_stack *s,
			  struct open_frame *out)
{
	size_t n = 0;

	if (s->flags & GS_PY_TRUNCATED)
		out[n++] = (struct open_frame){.key = {UINT64_MAX, UINT64_MAX}};
	for (size_t j = s->nframes; j-- > 0 && n < MAX_OPEN;) {
		const struct py_frame *f = py_stack_frame(pm, s, j);

		out[n++] = (struct open_frame){.key = py_frame_func(pm, f), .frame = f};
	}
	return n;
}

static int add_sample(struct chrome_ctx *c, const struct py_stack *s)
{
	struct chrome_python *py = c->python;
	struct open_frame path[MAX_OPEN];
	uint64_t period = s->end_ts > s->ts ? s->end_ts - s->ts : 0;
	uint64_t start = s->ts > py->last_end ? s->ts : py->last_end;
	size_t n = sample_path(&c->names->py, s, path), same = 0;

	/* samples more than half a period apart: the thread was not running in between */
	if (py->nopen && s->ts > py->last_end + period / 2 && close_from(c, 0))
		return -1;
	while (same < py->nopen && same < n && path[same].key.k1 == py->open[same].key.k1 &&
	       path[same].key.k2 == py->open[same].key.k2)
		same++;
	if (close_from(c, same))
		return -1;
	for (size_t d = same; d < n; d++) {
		py->open[d] = path[d];
		py->open[d].start = start;
	}
	py->nopen = n;
	for (size_t d = 0; d < n; d++)
		py->open[d].samples++;
	py->last_end = s->end_ts > start ? s->end_ts : start;
	return 0;
}

static int note_thread(struct chrome_python *py, uint32_t pid, uint32_t tid)
{
	uint64_t *e =
	    array_grow((void **)&py->sampled, &py->nsampled, &py->sampled_cap, sizeof(*e));

	if (!e)
		return -1;
	*e = (uint64_t)pid << 32 | tid;
	return 0;
}

int chrome_python_samples(struct chrome_ctx *c)
{
	const struct py_model *pm = &c->names->py;
	const struct py_stack *prev = NULL;

	if (!pm->counts[GS_PY_SAMPLE])
		return 0;
	if (!state(c))
		return -1;
	/* by_thread: every stack by (pid, tid, ts) */
	for (size_t i = 0; i < py_model_stack_count(pm); i++) {
		const struct py_stack *s = py_model_stack(pm, pm->by_thread[i]);

		if (s->kind != GS_PY_SAMPLE)
			continue;
		if (!prev || prev->pid != s->pid || prev->tid != s->tid) {
			if (close_from(c, 0))
				return -1;
			c->python->pid = s->pid;
			c->python->track = SAMPLE_TID_BASE + s->tid;
			c->python->last_end = 0;
			c->python->named = false;
		}
		/* a thread sampled only outside Python (no frames) gets no empty track */
		if (!c->python->named && (s->nframes || s->flags & GS_PY_TRUNCATED)) {
			if (note_thread(c->python, s->pid, s->tid))
				return -1;
			c->python->named = true;
		}
		if (add_sample(c, s))
			return -1;
		prev = s;
	}
	return close_from(c, 0);
}

void chrome_python_names(struct chrome_ctx *c)
{
	char label[64];

	if (!c->python)
		return;
	for (size_t i = 0; i < c->python->nsampled; i++) {
		uint32_t pid = (uint32_t)(c->python->sampled[i] >> 32);
		uint32_t tid = (uint32_t)c->python->sampled[i];

		snprintf(label, sizeof(label), "python samples (tid %u)", tid);
		chrome_metadata(c, "thread_name", pid, SAMPLE_TID_BASE + (uint64_t)tid, label);
	}
}

void chrome_python_free(struct chrome_ctx *c)
{
	if (!c->python)
		return;
	string_pool_free(&c->python->labels);
	key_index_free(&c->python->ix_labels);
	free(c->python->sampled);
	free(c->python->done);
	free(c->python);
	c->python = NULL;
}
