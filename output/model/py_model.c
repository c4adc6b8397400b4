// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "output/model/py_lines.h"
#include "output/model/py_model.h"

static uint64_t pid_key(uint32_t pid, uint32_t low)
{
	return (uint64_t)pid << 32 | low;
}

bool py_model_takes(uint16_t type)
{
	return type == GS_REC_PY_STACK || type == GS_REC_PY_CODE || type == GS_REC_PY_PROC;
}

static uint64_t frames_hash(const struct gs_py_stack *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (uint32_t i = 0; i < s->nframes; i++) {
		h = (h ^ s->frames[i].code) * 0x100000001b3ULL;
		h = (h ^ ((uint64_t)s->frames[i].stamp << 32 | (uint32_t)s->frames[i].lasti)) *
		    0x100000001b3ULL;
	}
	return h;
}

static bool same_frames(const struct py_frame *f, const struct gs_py_stack *s)
{
	for (uint32_t i = 0; i < s->nframes; i++)
		if (f[i].addr != s->frames[i].code || f[i].stamp != s->frames[i].stamp ||
		    f[i].lasti != s->frames[i].lasti)
			return false;
	return true;
}

/* The stack's frames: those of an earlier stack of the process that had the same ones (most
 * do: a loop repeats its stacks), else appended; 0, or -1 out of memory. */
static int stack_frames(struct py_model *pm, const struct gs_py_stack *s, uint32_t *first)
{
	uint64_t h = frames_hash(s), k2 = (uint64_t)s->hdr.pid << 32 | s->nframes;
	size_t at;

	if (!s->nframes) {
		*first = 0;
		return 0;
	}
	if (key_index_find(&pm->ix_runs, h, k2, &at) && same_frames(&pm->frames[at], s)) {
		*first = (uint32_t)at;
		return 0;
	}
	if (pm->nframes + s->nframes > UINT32_MAX)
		return -1;
	at = pm->nframes;
	for (uint32_t i = 0; i < s->nframes; i++) {
		struct py_frame *f =
		    array_grow((void **)&pm->frames, &pm->nframes, &pm->frames_cap, sizeof(*f));

		if (!f)
			return -1;
		f->addr = s->frames[i].code;
		f->stamp = s->frames[i].stamp;
		f->lasti = s->frames[i].lasti;
		f->code = PY_NONE;
	}
	*first = (uint32_t)at;
	return key_index_put(&pm->ix_runs, h, k2, at);
}

void py_model_count_stack(struct py_model *pm, const struct gs_py_stack *s)
{
	if (s->kind < sizeof(pm->counts) / sizeof(pm->counts[0]))
		pm->counts[s->kind]++;
}

static int on_stack(struct py_model *pm, const struct gs_py_stack *s)
{
	struct py_stack *e =
	    array_grow((void **)&pm->stacks, &pm->nstacks, &pm->stacks_cap, sizeof(*e));

	if (!e)
		return -1;
	e->ts = s->hdr.ts;
	e->end_ts = s->end_ts;
	e->pid = s->hdr.pid;
	e->tid = s->hdr.tid;
	e->kind = s->kind;
	e->flags = s->hdr.flags;
	e->nframes = s->nframes;
	if (stack_frames(pm, s, &e->first))
		return -1;
	py_model_count_stack(pm, s);
	return 0;
}

static int on_code(struct py_model *pm, const struct gs_py_code *c)
{
	const char *qualname = c->data, *filename = c->data + c->qualname_len + 1;
	const uint8_t *table = (const uint8_t *)filename + c->filename_len + 1;
	struct py_code *e;

	e = array_grow((void **)&pm->codes, &pm->ncodes, &pm->codes_cap, sizeof(*e));
	if (!e)
		return -1;
	e->code = c->code;
	e->pid = c->hdr.pid;
	e->stamp = c->stamp;
	e->firstlineno = c->firstlineno;
	e->minor = c->minor;
	e->flags = c->hdr.flags;
	if (string_pool_intern(&pm->names, qualname, &e->qualname) ||
	    string_pool_intern(&pm->names, filename, &e->filename))
		return -1;
	if (c->linetable_len) {
		e->linetable = malloc(c->linetable_len);
		if (!e->linetable)
			return -1;
		memcpy(e->linetable, table, c->linetable_len);
		e->linetable_len = c->linetable_len;
	}
	/* a later record for the same object replaces an earlier one */
	return key_index_put(&pm->ix_codes, pid_key(c->hdr.pid, c->stamp), c->code, pm->ncodes - 1);
}

static int on_proc(struct py_model *pm, const struct gs_py_proc *p)
{
	struct py_proc *e =
	    array_grow((void **)&pm->procs, &pm->nprocs, &pm->procs_cap, sizeof(*e));

	if (!e)
		return -1;
	e->pid = p->hdr.pid;
	e->state = p->state;
	e->version_hex = p->version_hex;
	e->ts = p->hdr.ts;
	e->message = strdup(p->message);
	if (!e->message)
		return -1;
	return key_index_put(&pm->ix_procs, p->hdr.pid, 0, pm->nprocs - 1);
}

int py_model_apply(struct py_model *pm, const struct gs_hdr *h)
{
	switch (h->type) {
	case GS_REC_PY_STACK:
		return on_stack(pm, (const void *)h);
	case GS_REC_PY_CODE:
		return on_code(pm, (const void *)h);
	case GS_REC_PY_PROC:
		return on_proc(pm, (const void *)h);
	default:
		return 0;
	}
}

static int by_ts(const void *a, const void *b)
{
	const struct py_stack *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	/* the longer (enclosing) interval first, so nested stacks come after it */
	if (x->end_ts != y->end_ts)
		return x->end_ts > y->end_ts ? -1 : 1;
	return 0;
}

/* qsort_r is not C11: by_thread is sorted through this file-scope pointer. */
static const struct py_stack *sort_stacks;

static int by_thread_ts(const void *a, const void *b)
{
	const struct py_stack *x = &sort_stacks[*(const uint32_t *)a];
	const struct py_stack *y = &sort_stacks[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int line_of(const struct py_code *c, int32_t lasti)
{
	return py_line_at(c->minor, c->linetable, c->linetable_len, c->flags & GS_PY_CODE_CUT,
			  c->firstlineno, lasti);
}

int py_code_line(const struct py_code *c, int32_t lasti)
{
	return line_of(c, lasti);
}

/* Frames to their code records and lines; a (code, lasti) pair repeats across stacks, so its
 * line is computed once (and frames shared by stacks of a process are resolved once). */
static int resolve_frames(struct py_model *pm)
{
	struct key_index lines = {0};
	int err = 0;

	for (size_t i = 0; i < pm->nstacks && !err; i++) {
		const struct py_stack *s = &pm->stacks[i];

		for (size_t j = 0; j < s->nframes; j++) {
			struct py_frame *f = &pm->frames[s->first + j];
			size_t ci, line;

			if (f->code != PY_NONE)
				continue; /* shared with a stack resolved before */
			if (!key_index_find(&pm->ix_codes, pid_key(s->pid, f->stamp), f->addr, &ci))
				continue;
			f->code = (uint32_t)ci;
			if (key_index_find(&lines, ci, (uint64_t)(uint32_t)f->lasti, &line)) {
				f->line = (int32_t)line;
				continue;
			}
			f->line = line_of(&pm->codes[ci], f->lasti);
			if (key_index_put(&lines, ci, (uint64_t)(uint32_t)f->lasti,
					  (size_t)(uint32_t)f->line)) {
				err = -1;
				break;
			}
		}
	}
	key_index_free(&lines);
	return err;
}

/* Per thread, by start: the index of each thread's first stack and the running maximum of
 * end_ts, which bounds how far back py_model_stack_at() must look. */
static int index_threads(struct py_model *pm)
{
	pm->by_thread = malloc((pm->nstacks ? pm->nstacks : 1) * sizeof(*pm->by_thread));
	pm->max_end = malloc((pm->nstacks ? pm->nstacks : 1) * sizeof(*pm->max_end));
	if (!pm->by_thread || !pm->max_end)
		return -1;
	for (size_t i = 0; i < pm->nstacks; i++)
		pm->by_thread[i] = (uint32_t)i;
	sort_stacks = pm->stacks;
	if (pm->nstacks)
		qsort(pm->by_thread, pm->nstacks, sizeof(*pm->by_thread), by_thread_ts);
	for (size_t i = 0; i < pm->nstacks; i++) {
		const struct py_stack *s = &pm->stacks[pm->by_thread[i]];
		const struct py_stack *prev = i ? &pm->stacks[pm->by_thread[i - 1]] : NULL;
		bool first = !prev || prev->pid != s->pid || prev->tid != s->tid;

		pm->max_end[i] =
		    first || pm->max_end[i - 1] < s->end_ts ? s->end_ts : pm->max_end[i - 1];
		if (first && key_index_put(&pm->ix_threads, s->pid, s->tid, i))
			return -1;
	}
	return 0;
}

int py_model_finish(struct py_model *pm)
{
	key_index_free(&pm->ix_runs);
	if (pm->nstacks > UINT32_MAX)
		return -1;
	if (pm->nstacks) /* qsort(NULL, 0, ...) is undefined */
		qsort(pm->stacks, pm->nstacks, sizeof(*pm->stacks), by_ts);
	if (resolve_frames(pm))
		return -1;
	return index_threads(pm);
}

void py_model_free(struct py_model *pm)
{
	for (size_t i = 0; i < pm->ncodes; i++)
		free(pm->codes[i].linetable);
	for (size_t i = 0; i < pm->nprocs; i++)
		free(pm->procs[i].message);
	free(pm->codes);
	free(pm->stacks);
	free(pm->frames);
	free(pm->procs);
	free(pm->by_thread);
	free(pm->max_end);
	string_pool_free(&pm->names);
	key_index_free(&pm->ix_runs);
	key_index_free(&pm->ix_codes);
	key_index_free(&pm->ix_threads);
	key_index_free(&pm->ix_procs);
	memset(pm, 0, sizeof(*pm));
}

const struct py_code *py_frame_code(const struct py_model *pm, const struct py_frame *f)
{
	if (f->code == PY_NONE || f->code >= pm->ncodes)
		return NULL;
	if (pm->codes[f->code].flags & GS_PY_CODE_STALE)
		return NULL;
	return &pm->codes[f->code];
}

int py_frame_symbol(const struct py_model *pm, const struct py_frame *f, const char **qualname,
		    const char **filename, int *line)
{
	const struct py_code *c = py_frame_code(pm, f);

	if (qualname) {
		*qualname = c ? string_pool_get(&pm->names, c->qualname) : "<unknown>";
		/* a name the loader could not decode (seen rarely for code objects read during a
		 * module's import) is still a frame of that file and line */
		if (!**qualname)
			*qualname = "<unknown>";
	}
	if (filename)
		*filename = c ? string_pool_get(&pm->names, c->filename) : "?";
	if (line)
		*line = c ? f->line : 0;
	return c ? 0 : -1;
}

static bool covers(const struct py_stack *s, uint64_t ts)
{
	return s->ts <= ts && ts <= s->end_ts;
}

const struct py_stack *py_model_stack_at(const struct py_model *pm, uint32_t pid, uint32_t tid,
					 uint64_t ts)
{
	const struct py_stack *sample = NULL;
	size_t first, lo, hi;

	if (!key_index_find(&pm->ix_threads, pid, tid, &first))
		return NULL;
	/* the thread's run ends where (pid, tid) changes: binary search for the last start <= ts */
	lo = first;
	hi = pm->nstacks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct py_stack *s = &pm->stacks[pm->by_thread[mid]];

		if (s->pid != pid || s->tid != tid || s->ts > ts)
			hi = mid;
		else
			lo = mid + 1;
	}
	/* lo - 1 is the last stack starting at or before ts; walk back while one may cover it */
	for (size_t i = lo; i-- > first && pm->max_end[i] >= ts;) {
		const struct py_stack *s = &pm->stacks[pm->by_thread[i]];

		if (!covers(s, ts))
			continue;
		if (s->kind != GS_PY_SAMPLE)
			return s;
		if (!sample)
			sample = s;
	}
	return sample;
}

const struct py_proc *py_model_proc(const struct py_model *pm, uint32_t pid)
{
	size_t i;

	return key_index_find(&pm->ix_procs, pid, 0, &i) ? &pm->procs[i] : NULL;
}

const char *py_stack_kind_name(uint32_t kind)
{
	switch (kind) {
	case GS_PY_AT_SYSCALL:
		return "syscall";
	case GS_PY_AT_CUDA:
		return "cuda";
	case GS_PY_AT_OP:
		return "op";
	case GS_PY_SAMPLE:
		return "sample";
	default:
		return "unknown";
	}
}
