// SPDX-License-Identifier: MIT
/* Waits followed to their causes in other threads (stall_causes.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "lib/syscall_names.h"
#include "output/analysis/py_where.h"
#include "output/analysis/stall_causes.h"
#include "output/analysis/thread_spans.h"

#define PIDS_NAMED    8	 /* a cause names its threads' processes, not a list of hundreds */
#define FILES_COUNTED 64 /* distinct files one activity is seen on, counted up to this */

/* What other threads did during one (process, kind) of waits: one activity per (span type,
 * syscall/reason/call, place). */
struct activity {
	uint32_t group; /* groups[] index: the (pid, kind) of waits */
	uint8_t type;
	uint32_t key, where;
	uint32_t tid; /* lock waits: the thread (the holder is one thread); else 0 */
	uint64_t ns;
	uint32_t pids[PIDS_NAMED], npids;
	uint32_t files[FILES_COUNTED], nfiles; /* strings ids */
	uint64_t best_file_ns;
	uint32_t best_file;
};

struct group {
	uint32_t pid, kind;
	uint64_t wait_ns;
};

struct following {
	const struct trace_model *m;
	const struct step_times *st;
	struct group *groups;
	size_t ngroups, groups_cap;
	struct activity *acts;
	size_t nacts, acts_cap;
	uint64_t *max_end; /* max end over waits[0..i]: where a span's overlaps can begin */
	struct string_pool strings;
};

/* Whether (pid, tid) is a thread that may cause wait `w`. */
static bool related(const struct trace_model *m, const struct wait_span *w, uint32_t pid,
		    uint32_t tid)
{
	const struct model_process *p;

	switch (w->kind) {
	case STALL_INPUT_WAIT: /* DataLoader workers: the process's children */
		p = trace_model_process(m, pid);
		return p && p->ppid == w->pid && pid != w->pid;
	case STALL_LOCK_WAIT:
		return pid == w->pid && tid != w->tid;
	default: /* runnable at the same time: anyone else */
		return tid != w->tid;
	}
}

/* Whether a related thread's span says anything of the wait: for contention, only its own
 * runnable time (a sleeping thread competes for nothing). */
static bool telling(const struct wait_span *w, const struct tspan *s)
{
	return w->kind != STALL_CPU_CONTENTION ||
	       (s->type == TSPAN_OFFCPU && s->key == GS_OFFCPU_PREEMPTED);
}

/* The first wait that may overlap a span starting at `from`: waits are by start, and
 * max_end[] (the latest end so far) grows with i, so a binary search finds the first wait
 * that any earlier one could still reach past `from`; a host-wide trace's spans thus visit
 * only the waits around them. */
static size_t first_wait(const struct following *f, uint64_t from)
{
	size_t lo = 0, hi = f->st->nwaits;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->max_end[mid] <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool wanted(void *ctx, uint32_t pid, uint32_t tid, uint64_t start, uint64_t end)
{
	const struct following *f = ctx;

	for (size_t i = first_wait(f, start); i < f->st->nwaits && f->st->waits[i].start < end; i++)
		if (f->st->waits[i].end > start && related(f->m, &f->st->waits[i], pid, tid))
			return true;
	return false;
}

static size_t group_of(struct following *f, uint32_t pid, uint32_t kind)
{
	struct group *g;

	for (size_t i = 0; i < f->ngroups; i++)
		if (f->groups[i].pid == pid && f->groups[i].kind == kind)
			return i;
	g = array_grow((void **)&f->groups, &f->ngroups, &f->groups_cap, sizeof(*g));
	if (!g)
		return SIZE_MAX;
	*g = (struct group){pid, kind, 0};
	return f->ngroups - 1;
}

static struct activity *activity_of(struct following *f, uint32_t group, const struct tspan *s,
				    uint32_t where)
{
	uint32_t tid = f->groups[group].kind == STALL_LOCK_WAIT ? s->tid : 0;
	struct activity *a;

	for (size_t i = 0; i < f->nacts; i++) {
		a = &f->acts[i];
		if (a->group == group && a->type == s->type && a->key == s->key &&
		    a->where == where && a->tid == tid)
			return a;
	}
	a = array_grow((void **)&f->acts, &f->nacts, &f->acts_cap, sizeof(*a));
	if (a)
		*a = (struct activity){
		    .group = group, .type = s->type, .key = s->key, .where = where, .tid = tid};
	return a;
}

static void note_pid(struct activity *a, uint32_t pid)
{
	for (uint32_t i = 0; i < a->npids; i++)
		if (a->pids[i] == pid)
			return;
	if (a->npids < PIDS_NAMED)
		a->pids[a->npids++] = pid;
}

static void note_file(struct activity *a, uint32_t file, uint64_t ns)
{
	uint32_t i = 0;

	while (i < a->nfiles && a->files[i] != file)
		i++;
	if (i == a->nfiles && a->nfiles < FILES_COUNTED)
		a->files[a->nfiles++] = file;
	if (ns > a->best_file_ns) { /* the file seen longest in one span: the slowest read */
		a->best_file_ns = ns;
		a->best_file = file;
	}
}

static int add_overlap(struct following *f, const struct wait_span *w, const struct tspan *s,
		       uint64_t ns)
{
	const struct py_model *pm = &f->m->py;
	const char *file =
	    s->type == TSPAN_SYSCALL ? trace_model_fd_name(f->m, s->pid, s->fd, s->ino) : NULL;
	char where[320];
	uint32_t where_id, file_id = 0;
	size_t g = group_of(f, w->pid, w->kind);
	struct activity *a;

	py_where_label(pm, py_model_stack_at(pm, s->pid, s->tid, s->start), where, sizeof(where));
	if (g == SIZE_MAX || string_pool_intern(&f->strings, where, &where_id) ||
	    (file && string_pool_intern(&f->strings, file, &file_id)))
		return -1;
	if (!(a = activity_of(f, (uint32_t)g, s, where_id)))
		return -1;
	a->ns += ns;
	note_pid(a, s->pid);
	if (file)
		note_file(a, file_id, ns);
	return 0;
}

static int follow(struct following *f, const struct tspan *s)
{
	for (size_t i = first_wait(f, s->start);
	     i < f->st->nwaits && f->st->waits[i].start < s->end; i++) {
		const struct wait_span *w = &f->st->waits[i];
		uint64_t lo = s->start > w->start ? s->start : w->start;
		uint64_t hi = s->end < w->end ? s->end : w->end;

		if (hi > lo && related(f->m, w, s->pid, s->tid) && telling(w, s) &&
		    add_overlap(f, w, s, hi - lo))
			return -1;
	}
	return 0;
}

static const char *activity_name(const struct activity *a, char *buf, size_t len)
{
	if (a->type == TSPAN_SYSCALL)
		return gs_syscall_name(a->key, buf, len);
	if (a->type == TSPAN_CUDA)
		return cuda_probe(a->key)->name;
	snprintf(buf, len, "%s",
		 a->key == GS_OFFCPU_PREEMPTED ? "runnable (preempted)"
		 : a->key == GS_OFFCPU_BLOCKED ? "uninterruptible sleep"
					       : "sleeping");
	return buf;
}

static void say_processes(const struct activity *a, uint32_t kind, FILE *out)
{
	const char *one = kind == STALL_INPUT_WAIT ? "worker" : "pid";

	fprintf(out, "%s%s", one, a->npids == 1 ? "" : "s");
	for (uint32_t i = 0; i < a->npids; i++)
		fprintf(out, "%s%u", i ? ", " : " ", a->pids[i]);
	fprintf(out, "%s: ", a->npids == PIDS_NAMED ? " and more" : "");
}

/* The best activity of a group, in words. */
static char *describe(const struct following *f, size_t g, const struct activity *a)
{
	const struct group *grp = &f->groups[g];
	const char *where = string_pool_get(&f->strings, a->where);
	char name[48], *text = NULL;
	size_t size = 0;
	uint64_t share;
	FILE *out = open_memstream(&text, &size);

	if (!out)
		return NULL;
	if (grp->kind == STALL_LOCK_WAIT)
		fprintf(out, "thread %u (%s): ", a->tid,
			trace_model_thread_name(f->m, grp->pid, a->tid));
	else
		say_processes(a, grp->kind, out);
	fprintf(out, "%s", activity_name(a, name, sizeof(name)));
	if (a->nfiles) {
		fprintf(out, " on %s", string_pool_get(&f->strings, a->best_file));
		if (a->nfiles > 1)
			fprintf(out, " (+%u%s other files)", a->nfiles - 1,
				a->nfiles == FILES_COUNTED ? " or more" : "");
	}
	if (*where)
		fprintf(out, " in %s", where);
	/* several threads wait or run side by side: each one's share, not their sum */
	share = grp->wait_ns ? a->ns * 100 / a->npids / grp->wait_ns : 0;
	fprintf(out, ", %llu%% of the wait%s", (unsigned long long)(share > 100 ? 100 : share),
		a->npids > 1 ? " each" : "");
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	return text;
}

static int count_waits(struct following *f)
{
	for (size_t i = 0; i < f->st->nwaits; i++) {
		const struct wait_span *w = &f->st->waits[i];
		size_t g = group_of(f, w->pid, w->kind);

		if (g == SIZE_MAX)
			return -1;
		f->groups[g].wait_ns += w->end - w->start;
		f->max_end[i] = i && f->max_end[i - 1] > w->end ? f->max_end[i - 1] : w->end;
	}
	return 0;
}

static int explain(struct following *f, struct stall_causes *out)
{
	out->v = calloc(f->ngroups + 1, sizeof(*out->v));
	if (!out->v)
		return -1;
	for (size_t g = 0; g < f->ngroups; g++) {
		const struct activity *best = NULL;

		for (size_t i = 0; i < f->nacts; i++)
			if (f->acts[i].group == g && (!best || f->acts[i].ns > best->ns))
				best = &f->acts[i];
		out->v[out->n] = (struct stall_cause){f->groups[g].pid, f->groups[g].kind, NULL};
		out->v[out->n].text = best ? describe(f, g, best) : strdup("");
		if (!out->v[out->n++].text)
			return -1;
	}
	return 0;
}

int stall_causes_find(const struct trace_model *m, const struct step_times *st,
		      struct stall_causes *out)
{
	struct following f = {.m = m, .st = st};
	struct tspan_set spans = {0};
	int ret = -1;

	memset(out, 0, sizeof(*out));
	f.max_end = malloc((st->nwaits + 1) * sizeof(*f.max_end));
	if (!f.max_end || count_waits(&f) || string_pool_intern(&f.strings, "", &(uint32_t){0}) ||
	    thread_spans_read(m, wanted, &f, &spans))
		goto out;
	for (size_t i = 0; i < spans.n; i++)
		if (follow(&f, &spans.v[i]))
			goto out;
	ret = explain(&f, out);
out:
	thread_spans_free(&spans);
	free(f.groups);
	free(f.acts);
	free(f.max_end);
	string_pool_free(&f.strings);
	if (ret)
		stall_causes_free(out);
	return ret;
}

const char *stall_causes_get(const struct stall_causes *c, uint32_t pid, uint32_t kind)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].pid == pid && c->v[i].kind == kind)
			return c->v[i].text;
	return NULL;
}

void stall_causes_free(struct stall_causes *c)
{
	for (size_t i = 0; c->v && i < c->n; i++)
		free(c->v[i].text);
	free(c->v);
	memset(c, 0, sizeof(*c));
}
