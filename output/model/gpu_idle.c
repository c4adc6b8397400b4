// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "lib/syscall_names.h"
#include "output/model/gpu/gpu_model.h"
#include "output/model/gpu_idle.h"
#include "output/trace/cuda_api.h"
#include "output/trace/trace_reader.h"

#define HOST_THREADS_SHOWN 8 /* a summary line, not a thread dump */

/* On a tie the first kind explains most: a CUDA call holds the syscalls it makes, and a
 * syscall the off-CPU sleep it blocked in. */
enum activity_kind { ACT_CUDA, ACT_SYSCALL, ACT_OFFCPU };

struct activity {
	uint32_t tid, kind, key; /* key: probe index, syscall number or off-CPU reason */
	uint64_t ns;		 /* overlap with the gap */
};

struct gap_acc {
	struct activity *v;
	size_t n, cap;
};

struct attrib {
	const struct trace_model *m;
	const struct gpu_gap *gaps;
	size_t n;
	size_t *order;	   /* gaps by (pid, device, start) */
	size_t *group_end; /* for each position in order[], the end of its (pid, device) run */
	struct gap_acc *acc;
};

static int cmp_gap(const void *a, const void *b, void *gaps)
{
	const struct gpu_gap *x = (const struct gpu_gap *)gaps + *(const size_t *)a;
	const struct gpu_gap *y = (const struct gpu_gap *)gaps + *(const size_t *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static const struct gpu_gap *at(const struct attrib *a, size_t k)
{
	return &a->gaps[a->order[k]];
}

static int accumulate(struct gap_acc *acc, uint32_t tid, uint32_t kind, uint32_t key, uint64_t ns)
{
	struct activity *e;

	for (size_t i = 0; i < acc->n; i++) {
		e = &acc->v[i];
		if (e->tid == tid && e->kind == kind && e->key == key) {
			e->ns += ns;
			return 0;
		}
	}
	e = array_grow((void **)&acc->v, &acc->n, &acc->cap, sizeof(*e));
	if (!e)
		return -1;
	*e = (struct activity){tid, kind, key, ns};
	return 0;
}

/* The first position of a (pid, device) run whose gap ends after `from`: gaps of one device
 * of one process are disjoint and ordered, so a binary search finds it. */
static size_t first_ending_after(const struct attrib *a, size_t k, size_t end, uint64_t from)
{
	while (k < end) {
		size_t mid = k + (end - k) / 2;

		if (at(a, mid)->start + at(a, mid)->len > from)
			end = mid;
		else
			k = mid + 1;
	}
	return k;
}

static size_t first_of_pid(const struct attrib *a, uint32_t pid)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (at(a, mid)->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int add_span(struct attrib *a, uint32_t pid, uint32_t tid, uint64_t s, uint64_t e,
		    uint32_t kind, uint32_t key)
{
	size_t first = first_of_pid(a, pid);

	/* the bridge's thread sleeps between polls: that is not why the GPU waits */
	if (first == a->n || at(a, first)->pid != pid ||
	    !strcmp(trace_model_thread_name(a->m, pid, tid), GPU_BRIDGE_THREAD_NAME))
		return 0;
	for (size_t k = first; k < a->n && at(a, k)->pid == pid; k = a->group_end[k]) {
		size_t j = first_ending_after(a, k, a->group_end[k], s);

		for (; j < a->group_end[k] && at(a, j)->start < e; j++) {
			const struct gpu_gap *g = at(a, j);
			uint64_t lo = s > g->start ? s : g->start;
			uint64_t hi = e < g->start + g->len ? e : g->start + g->len;

			if (hi > lo && accumulate(&a->acc[a->order[j]], tid, kind, key, hi - lo))
				return -1;
		}
	}
	return 0;
}

static int on_record(struct attrib *a, const struct gs_hdr *h)
{
	switch (h->type) {
	case GS_REC_SYSCALL: {
		const struct gs_syscall *s = (const void *)h;

		return add_span(a, h->pid, h->tid, h->ts, h->ts + s->dur_ns, ACT_SYSCALL, s->nr);
	}
	case GS_REC_OFFCPU: {
		const struct gs_offcpu *o = (const void *)h;

		return add_span(a, h->pid, h->tid, h->ts, h->ts + o->dur_ns, ACT_OFFCPU, o->reason);
	}
	case GS_REC_CUDA_CALL: {
		const struct gs_cuda_call *c = (const void *)h;

		/* a nested call is part of the outermost one */
		if ((h->flags & GS_CUDA_NESTED) || !cuda_probe(c->probe))
			return 0;
		return add_span(a, h->pid, h->tid, h->ts, h->ts + c->dur_ns, ACT_CUDA, c->probe);
	}
	default:
		return 0;
	}
}

static int read_spans(struct attrib *a, const struct trace_model *m)
{
	char err[256];
	struct trace_reader *r;
	const struct gs_hdr *h;
	int ret;

	if (trace_reader_open(m->path, &r, err, sizeof(err)))
		return -1;
	trace_reader_set_filter(r, m->filter);
	while ((ret = trace_reader_next(r, &h)) > 0)
		if (on_record(a, h))
			break;
	trace_reader_close(r);
	return ret ? -1 : 0;
}

static const char *activity_name(const struct activity *e, char *buf, size_t len)
{
	switch (e->kind) {
	case ACT_CUDA:
		return cuda_probe(e->key)->name;
	case ACT_SYSCALL:
		return gs_syscall_name(e->key, buf, len);
	default:
		snprintf(buf, len, "off-cpu (%s)", gs_offcpu_reason_name(e->key));
		return buf;
	}
}

/* Per thread its largest activity first, then threads by that activity, largest first. */
static int cmp_activity(const void *a, const void *b)
{
	const struct activity *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return (x->kind > y->kind) - (x->kind < y->kind);
}

static int cmp_best(const void *a, const void *b)
{
	const struct activity *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static char *summarize(const struct trace_model *m, uint32_t pid, uint64_t len, struct gap_acc *acc)
{
	size_t nbest = 0, size = 0;
	char *out = NULL, name[32];
	FILE *f = open_memstream(&out, &size);

	if (!f)
		return NULL;
	if (acc->n > 1)
		qsort(acc->v, acc->n, sizeof(*acc->v), cmp_activity);
	for (size_t i = 0; i < acc->n; i++)
		if (!i || acc->v[i].tid != acc->v[i - 1].tid)
			acc->v[nbest++] = acc->v[i];
	if (nbest > 1)
		qsort(acc->v, nbest, sizeof(*acc->v), cmp_best);
	for (size_t i = 0; i < nbest && i < HOST_THREADS_SHOWN; i++) {
		const struct activity *e = &acc->v[i];

		fprintf(f, "%s%u %s: %s %llu%%", i ? "; " : "", e->tid,
			trace_model_thread_name(m, pid, e->tid),
			activity_name(e, name, sizeof(name)),
			(unsigned long long)((e->ns * 100 + len / 2) / len));
	}
	if (nbest > HOST_THREADS_SHOWN)
		fprintf(f, "; +%zu more threads", nbest - HOST_THREADS_SHOWN);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

static int prepare(struct attrib *a)
{
	a->order = malloc((a->n + 1) * sizeof(*a->order));
	a->group_end = malloc((a->n + 1) * sizeof(*a->group_end));
	a->acc = calloc(a->n + 1, sizeof(*a->acc));
	if (!a->order || !a->group_end || !a->acc)
		return -1;
	for (size_t i = 0; i < a->n; i++)
		a->order[i] = i;
	qsort_r(a->order, a->n, sizeof(*a->order), cmp_gap, (void *)a->gaps);
	for (size_t k = a->n; k-- > 0;) {
		bool same = k + 1 < a->n && at(a, k)->pid == at(a, k + 1)->pid &&
			    at(a, k)->device == at(a, k + 1)->device;

		a->group_end[k] = same ? a->group_end[k + 1] : k + 1;
	}
	return 0;
}

int gpu_idle_attribute(const struct trace_model *m, const struct gpu_gap *gaps, size_t n,
		       char **hosts)
{
	struct attrib a = {.m = m, .gaps = gaps, .n = n};
	int ret = -1;

	memset(hosts, 0, n * sizeof(*hosts));
	if (prepare(&a) || read_spans(&a, m))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!(hosts[i] = summarize(m, gaps[i].pid, gaps[i].len, &a.acc[i])))
			goto out;
	ret = 0;
out:
	for (size_t i = 0; a.acc && i < n; i++)
		free(a.acc[i].v);
	for (size_t i = 0; ret && i < n; i++) {
		free(hosts[i]);
		hosts[i] = NULL;
	}
	free(a.order);
	free(a.group_end);
	free(a.acc);
	return ret;
}
