// SPDX-License-Identifier: MIT
/* Steps found live (step_watch.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "loader/record/record_buf.h"
#include "loader/record/step_watch.h"
#include "output/analysis/steps_py.h"
#include "output/model/py_model.h"

/* torch.profiler's step ranges, as output/analysis/steps.c prefers them */
#define PROFILER_STEP "ProfilerStep#"
/* A process without steps keeps this much of its stacks: a loop is found once it has run two
 * iterations within it */
#define STEPLESS_KEEP_NS (60 * 1000000000ull)
/* Updates in a row that must find the same steps for them to be settled: at least 0.75 s */
#define SETTLE_UPDATES 4

struct range {
	uint32_t pid, tid;
	uint64_t start, end;
};

struct watch_pid {
	uint32_t pid;
	uint32_t ppid; /* from the fork record that made it; 0 unknown (started before gpuspy) */
	bool exited;
	bool nvtx;	  /* it has step ranges: its steps are those */
	uint64_t dropped; /* its steps before the stacks kept */
	uint64_t keep_ts; /* its stacks before this were let go */
	/* the previous update's steps, and how many updates in a row found the same */
	char how[192];
	uint64_t first;
	uint64_t *starts;
	size_t n, starts_cap;
	unsigned agreed;
};

struct step_watch {
	char *prefix;	      /* of the NVTX ranges that are steps; NULL: none */
	const char *function; /* py:FUNCTION; NULL: the step loop */
	bool python;	      /* steps from the Python stacks */
	bool preferred;	      /* no --steps-by: a process with step ranges has those */
	uint64_t keep_from;
	uint32_t follow; /* 0: every process */
	struct range *ranges;
	size_t nranges, ranges_cap;
	struct watch_pid *pids;
	size_t npids, pids_cap;
	size_t last_pid;	 /* pids[] index found last: stacks come in runs of one process */
	struct record_buf codes; /* every GS_REC_PY_CODE and GS_REC_PY_PROC: the names */
	struct record_buf stacks;
	struct step_list list; /* the last update's steps */
	struct watch_proc *procs;
	size_t nprocs, procs_cap;
};

int step_watch_new(const char *by, bool nvtx, bool python, struct step_watch **out)
{
	struct step_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->preferred = !by;
	if (by && !strncmp(by, "nvtx:", 5))
		w->prefix = strdup(by + 5);
	else if (!by && nvtx)
		w->prefix = strdup(PROFILER_STEP);
	if ((by && !strncmp(by, "nvtx:", 5)) || (!by && nvtx)) {
		if (!w->prefix) {
			free(w);
			return -ENOMEM;
		}
	}
	w->python = python && (!by || !strncmp(by, "py:", 3));
	w->function = by && !strncmp(by, "py:", 3) ? by + 3 : NULL;
	w->keep_from = UINT64_MAX;
	*out = w;
	return 0;
}

bool step_watch_takes(uint16_t type)
{
	return type == GS_REC_NVTX || type == GS_REC_PY_STACK || type == GS_REC_PY_CODE ||
	       type == GS_REC_PY_PROC || type == GS_REC_EXIT || type == GS_REC_FORK;
}

static struct watch_pid *get_pid(struct step_watch *w, uint32_t pid)
{
	struct watch_pid *p;

	if (w->last_pid < w->npids && w->pids[w->last_pid].pid == pid)
		return &w->pids[w->last_pid];
	for (size_t i = 0; i < w->npids; i++) {
		if (w->pids[i].pid == pid) {
			w->last_pid = i;
			return &w->pids[i];
		}
	}
	p = array_grow((void **)&w->pids, &w->npids, &w->pids_cap, sizeof(*p));
	if (p) {
		p->pid = pid;
		w->last_pid = w->npids - 1;
	}
	return p;
}

static bool wanted_pid(const struct step_watch *w, uint32_t pid)
{
	return !w->follow || pid == w->follow;
}

static int take_nvtx(struct step_watch *w, const struct gs_nvtx *n)
{
	size_t len = strlen(w->prefix);
	struct watch_pid *p;
	struct range *r;

	if (n->kind == GS_NVTX_MARK || !wanted_pid(w, n->hdr.pid) ||
	    strncmp(n->name, w->prefix, len))
		return 0;
	p = get_pid(w, n->hdr.pid);
	r = array_grow((void **)&w->ranges, &w->nranges, &w->ranges_cap, sizeof(*r));
	if (!p || !r)
		return -ENOMEM;
	p->nvtx = true;
	*r = (struct range){n->hdr.pid, n->hdr.tid, n->hdr.ts, n->hdr.ts + n->dur_ns};
	return 0;
}

int step_watch_take(struct step_watch *w, const struct gs_hdr *rec)
{
	struct watch_pid *p;

	/* the loader's own records, but checked as a reader would before a model reads them */
	if (!step_watch_takes(rec->type) || !gs_record_valid(rec))
		return 0;
	switch (rec->type) {
	case GS_REC_NVTX:
		return w->prefix ? take_nvtx(w, (const void *)rec) : 0;
	case GS_REC_PY_CODE:
	case GS_REC_PY_PROC:
		return w->python ? record_buf_add(&w->codes, rec) : 0;
	case GS_REC_FORK: {
		const struct gs_fork *f = (const void *)rec;

		if (f->child_pid == rec->pid) /* a new thread, not a process */
			return 0;
		if (!(p = get_pid(w, f->child_pid)))
			return -ENOMEM;
		p->ppid = rec->pid;
		return 0;
	}
	case GS_REC_PY_STACK:
		if (!w->python || !wanted_pid(w, rec->pid))
			return 0;
		p = get_pid(w, rec->pid);
		if (!p)
			return -ENOMEM;
		if ((w->preferred && p->nvtx) || rec->ts < p->keep_ts)
			return 0;
		return record_buf_add(&w->stacks, rec);
	default: /* GS_REC_EXIT */
		if (!(rec->flags & GS_EXIT_GROUP))
			return 0;
		p = get_pid(w, rec->pid);
		if (!p)
			return -ENOMEM;
		p->exited = true;
		return 0;
	}
}

void step_watch_keep_from(struct step_watch *w, uint64_t index)
{
	w->keep_from = index;
}

void step_watch_follow(struct step_watch *w, uint32_t pid)
{
	w->follow = pid;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->start > y->start) - (x->start < y->start);
}

/* One step per range, as steps_nvtx.c makes them from a finished trace. */
static int nvtx_steps(struct step_watch *w)
{
	char how[192];
	int err = 0;

	if (w->nranges)
		qsort(w->ranges, w->nranges, sizeof(*w->ranges), cmp_range);
	snprintf(how, sizeof(how), "nvtx ranges %s*", w->prefix);
	for (size_t i = 0; !err && i < w->nranges; i++) {
		const struct range *r = &w->ranges[i];

		if (!wanted_pid(w, r->pid))
			continue;
		if (!i || r->pid != w->ranges[i - 1].pid)
			err = step_list_begin(&w->list, r->pid, r->tid, how);
		err = err ?: step_list_add(&w->list, r->start, r->end);
	}
	return err ? -ENOMEM : 0;
}

static bool usable(const struct py_stack *s)
{
	return s->nframes && !(s->flags & (GS_PY_TRUNCATED | GS_PY_NO_THREAD));
}

/* Whether the thread has a stack that starts after `end`: then the frame a step was read from
 * (the loop's, or the step function's) has returned, since each stack in it extends the step. */
static bool thread_went_on(const struct py_model *pm, uint32_t pid, uint32_t tid, uint64_t end)
{
	for (size_t i = py_model_stack_count(pm); i-- > 0;) {
		const struct py_stack *s = py_model_stack(pm, i);

		if (s->pid == pid && s->tid == tid && usable(s))
			return s->ts > end;
	}
	return false;
}

static int add_py_record(struct py_model *pm, const struct record_buf *b)
{
	for (const struct gs_hdr *h = record_buf_first(b); h; h = record_buf_next(b, h))
		if (py_model_apply(pm, h))
			return -ENOMEM;
	return 0;
}

static uint32_t watch_parent(void *watch, uint32_t pid)
{
	const struct step_watch *w = watch;

	for (size_t i = 0; i < w->npids; i++)
		if (w->pids[i].pid == pid)
			return w->pids[i].ppid;
	return 0;
}

/* Appends the Python steps to the list, as the report finds them: a process serving an
 * ancestor's loop has none (after the ranges' origins, which keep their places). */
static int add_py_steps(struct step_watch *w, const struct py_model *pm, const uint32_t *skip,
			size_t nskip)
{
	struct step_list py = {0};
	int err = 0;

	if (steps_py_find(pm, w->function, skip, nskip, &py) ||
	    step_list_drop_served(&py, watch_parent, w))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < py.norigins; i++) {
		const struct step_origin *o = &py.origins[i];

		err = step_list_begin(&w->list, o->pid, o->tid, o->how) ? -ENOMEM : 0;
		for (size_t j = o->first; !err && j < o->first + o->n; j++)
			err = step_list_add(&w->list, py.v[j].start, py.v[j].end) ? -ENOMEM : 0;
	}
	step_list_free(&py);
	return err;
}

/* The Python steps of every process but those with step ranges; `ended[i]` of list origin i. */
static int py_steps(struct step_watch *w, bool **ended)
{
	size_t from = w->list.norigins, nskip = 0;
	struct py_model pm = {0};
	uint32_t *skip = malloc((w->npids ? w->npids : 1) * sizeof(*skip));
	int err = -ENOMEM;

	if (!skip)
		return -ENOMEM;
	for (size_t i = 0; i < w->npids; i++)
		if (w->pids[i].nvtx && w->preferred)
			skip[nskip++] = w->pids[i].pid;
	if (add_py_record(&pm, &w->codes) || add_py_record(&pm, &w->stacks) ||
	    py_model_finish(&pm) || add_py_steps(w, &pm, skip, nskip))
		goto out;
	*ended = calloc(w->list.norigins ? w->list.norigins : 1, sizeof(**ended));
	if (!*ended)
		goto out;
	for (size_t i = 0; i < from; i++)
		(*ended)[i] = true; /* a range is recorded once it ended */
	for (size_t i = from; i < w->list.norigins; i++) {
		const struct step_origin *o = &w->list.origins[i];
		const struct watch_pid *p = get_pid(w, o->pid);

		(*ended)[i] =
		    !o->n || (p && p->exited) ||
		    thread_went_on(&pm, o->pid, o->tid, w->list.v[o->first + o->n - 1].end);
	}
	err = 0;
out:
	py_model_free(&pm);
	free(skip);
	return err;
}

/* Whether `s` finds what the previous update found: the same loop, the same start for every
 * step both list (the last one listed then excepted: it was under way), no fewer steps. */
static bool same_as_before(const struct watch_pid *p, const struct watch_proc *s)
{
	uint64_t from = s->first > p->first ? s->first : p->first;

	if (!p->n || strcmp(p->how, s->how) || s->first + s->n < p->first + p->n)
		return false;
	for (uint64_t i = from; i + 1 < p->first + p->n; i++)
		if (i < s->first || s->v[i - s->first].start != p->starts[i - p->first])
			return false;
	return true;
}

static int remember(struct watch_pid *p, struct watch_proc *s)
{
	p->agreed = same_as_before(p, s) ? p->agreed + 1 : 1;
	s->settled = p->agreed >= SETTLE_UPDATES;
	if (s->n > p->starts_cap) {
		uint64_t *v = realloc(p->starts, s->n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->starts = v;
		p->starts_cap = s->n;
	}
	for (size_t i = 0; i < s->n; i++)
		p->starts[i] = s->v[i].start;
	p->n = s->n;
	p->first = s->first;
	snprintf(p->how, sizeof(p->how), "%s", s->how);
	return 0;
}

static const struct watch_proc *proc_of(const struct step_watch *w, uint32_t pid)
{
	for (size_t i = 0; i < w->nprocs; i++)
		if (w->procs[i].pid == pid)
			return &w->procs[i];
	return NULL;
}

static int keep_stack(void *ctx, const struct gs_hdr *rec)
{
	struct watch_pid *p = get_pid(ctx, rec->pid);

	return !p || rec->ts >= p->keep_ts;
}

/*
 * Lets go of the stacks no later update needs: a process's before its second-to-last step (that
 * step then comes first, its index counted in `dropped`), unless a step the caller still needs
 * would go; those of a process without steps after STEPLESS_KEEP_NS; all those of processes
 * that are not followed, that have step ranges, or that exited without steps.
 */
static int trim(struct step_watch *w, uint64_t now)
{
	bool changed = false;

	for (size_t i = 0; i < w->npids; i++) {
		struct watch_pid *p = &w->pids[i];
		const struct watch_proc *s = proc_of(w, p->pid);
		uint64_t keep = p->keep_ts;

		if (!wanted_pid(w, p->pid) || (w->preferred && p->nvtx) || (p->exited && !s))
			keep = UINT64_MAX;
		else if (s && !p->nvtx && s->settled && s->n >= 3 &&
			 s->first + s->n - 2 <= w->keep_from) {
			keep = s->v[s->n - 2].start;
			p->dropped = s->first + s->n - 2;
		} else if (!s && now > STEPLESS_KEEP_NS && now - STEPLESS_KEEP_NS > keep) {
			keep = now - STEPLESS_KEEP_NS;
		}
		changed |= keep != p->keep_ts;
		p->keep_ts = keep;
	}
	return changed ? record_buf_filter(&w->stacks, keep_stack, w) : 0;
}

int step_watch_update(struct step_watch *w, uint64_t now)
{
	bool *ended = NULL;
	int err = 0;

	step_list_free(&w->list);
	w->nprocs = 0;
	if (w->prefix)
		err = nvtx_steps(w);
	if (!err && w->python && w->stacks.count)
		err = py_steps(w, &ended);
	for (size_t i = 0; !err && i < w->list.norigins; i++) {
		const struct step_origin *o = &w->list.origins[i];
		struct watch_pid *p = get_pid(w, o->pid);
		struct watch_proc *s =
		    array_grow((void **)&w->procs, &w->nprocs, &w->procs_cap, sizeof(*s));

		if (!p || !s) {
			err = -ENOMEM;
			break;
		}
		if (!o->n) {
			w->nprocs--;
			continue;
		}
		*s = (struct watch_proc){
		    .pid = o->pid,
		    .tid = o->tid,
		    .first = p->nvtx && w->prefix ? 0 : p->dropped,
		    .v = &w->list.v[o->first],
		    .n = o->n,
		    .last_ended = !ended || ended[i],
		    .how = o->how,
		};
		err = remember(p, s);
	}
	free(ended);
	for (size_t i = 0; !err && i < w->npids; i++)
		if (!proc_of(w, w->pids[i].pid))
			w->pids[i].n = w->pids[i].agreed = 0; /* no steps found this time */
	return err ?: trim(w, now);
}

size_t step_watch_nprocs(const struct step_watch *w)
{
	return w->nprocs;
}

const struct watch_proc *step_watch_proc(const struct step_watch *w, size_t i)
{
	return &w->procs[i];
}

void step_watch_free(struct step_watch *w)
{
	if (!w)
		return;
	free(w->prefix);
	free(w->ranges);
	for (size_t i = 0; i < w->npids; i++)
		free(w->pids[i].starts);
	free(w->pids);
	record_buf_free(&w->codes);
	record_buf_free(&w->stacks);
	step_list_free(&w->list);
	free(w->procs);
	free(w);
}
