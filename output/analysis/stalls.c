// SPDX-License-Identifier: MIT
/* Stalls ranked with their causes and advice (stalls.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/analysis/stall_advice.h"
#include "output/analysis/stalls.h"

/* Pieces are one finding when kind, function and cause agree: the lines of one function
 * (samples land on any line of a loop) are one place, shown at its busiest line. */
struct bucket {
	uint32_t kind, what;
	char function[320]; /* the where label without its line */
	size_t best;	    /* the piece with the most time */
	uint64_t ns;
	uint32_t steps;
	size_t first; /* its pieces: order[first .. first + n) */
	size_t n;
};

static void function_of(const char *where, char *buf, size_t len)
{
	const char *colon = strrchr(where, ':');
	size_t keep =
	    colon && colon[1] >= '0' && colon[1] <= '9' ? (size_t)(colon - where) : strlen(where);

	snprintf(buf, len, "%.*s", (int)keep, where);
}

static int cmp_bucket(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return (x->kind > y->kind) - (x->kind < y->kind);
}

static char *pid_list(const struct stalls *s, const struct bucket *b, const size_t *order)
{
	char *text = NULL;
	size_t size = 0, named = 0;
	FILE *out = open_memstream(&text, &size);

	if (!out)
		return NULL;
	for (size_t i = 0; i < b->n; i++) {
		uint32_t pid = s->st.pieces[order[b->first + i]].pid;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = s->st.pieces[order[b->first + j]].pid == pid;
		if (!seen)
			fprintf(out, "%s%u", named++ ? ", " : "", pid);
	}
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	return text;
}

/* Whether the process ran GPU work (its steps know). */
static bool ran_gpu(const struct stalls *s, uint32_t pid)
{
	for (size_t i = 0; i < s->st.steps.n; i++)
		if (s->st.steps.v[i].pid == pid)
			return s->st.t[i].has_gpu;
	return false;
}

static int finding_of(struct stalls *s, const struct bucket *b, const size_t *order,
		      struct stall_finding *f)
{
	const struct stall_piece *best = &s->st.pieces[b->best];
	const char *cause = stall_causes_get(&s->causes, best->pid, b->kind);

	*f = (struct stall_finding){.kind = b->kind, .ns = b->ns, .steps = b->steps};
	f->share_pct = s->wall_ns ? 100.0 * (double)b->ns / (double)s->wall_ns : 0;
	f->pids = pid_list(s, b, order);
	f->where = strdup(string_pool_get(&s->st.strings, best->where));
	f->what = strdup(string_pool_get(&s->st.strings, b->what));
	f->cause = strdup(cause ? cause : "");
	if (!f->pids || !f->where || !f->what || !f->cause)
		return -1;
	f->advice = stall_advice(f->kind, f->where, f->what, f->cause, ran_gpu(s, best->pid));
	return f->advice ? 0 : -1;
}

/* Puts each piece in its bucket; order[] lists the pieces bucket by bucket. */
static struct bucket *fill_buckets(const struct stalls *s, size_t *nb, size_t *order)
{
	struct bucket *b = calloc(s->st.npieces + 1, sizeof(*b));
	size_t *of = malloc((s->st.npieces + 1) * sizeof(*of)), *fill;
	char function[320];

	if (!b || !of) {
		free(b);
		free(of);
		return NULL;
	}
	*nb = 0;
	for (size_t i = 0; i < s->st.npieces; i++) {
		const struct stall_piece *p = &s->st.pieces[i];
		size_t k = 0;

		function_of(string_pool_get(&s->st.strings, p->where), function, sizeof(function));
		while (k < *nb && !(b[k].kind == p->kind && b[k].what == p->what &&
				    !strcmp(b[k].function, function)))
			k++;
		if (k == *nb) {
			b[(*nb)++] = (struct bucket){.kind = p->kind, .what = p->what, .best = i};
			snprintf(b[k].function, sizeof(b[k].function), "%s", function);
		}
		b[k].ns += p->ns;
		b[k].n++;
		b[k].steps = p->steps > b[k].steps ? p->steps : b[k].steps;
		if (p->ns > s->st.pieces[b[k].best].ns)
			b[k].best = i;
		of[i] = k;
	}
	fill = calloc(*nb + 1, sizeof(*fill));
	for (size_t k = 0, at = 0; fill && k < *nb; at += b[k++].n)
		b[k].first = fill[k] = at;
	for (size_t i = 0; fill && i < s->st.npieces; i++)
		order[fill[of[i]]++] = i;
	free(of);
	if (!fill) {
		free(b);
		return NULL;
	}
	free(fill);
	return b;
}

static int rank(struct stalls *s)
{
	size_t *order = malloc((s->st.npieces + 1) * sizeof(*order)), nb = 0;
	struct bucket *b = order ? fill_buckets(s, &nb, order) : NULL;
	int ret = -1;

	if (!b)
		goto out;
	qsort(b, nb, sizeof(*b), cmp_bucket);
	s->v = calloc(nb + 1, sizeof(*s->v));
	if (!s->v)
		goto out;
	for (size_t k = 0; k < nb; k++)
		if (finding_of(s, &b[k], order, &s->v[s->n++]))
			goto out;
	ret = 0;
out:
	free(order);
	free(b);
	return ret;
}

int stalls_find(const struct trace_model *m, const char *by, struct stalls *out, char *err,
		size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (step_times_measure(m, by, &out->st, err, errlen))
		return -1;
	for (size_t i = 0; i < out->st.steps.n; i++)
		out->wall_ns += out->st.t[i].wall_ns;
	if (stall_causes_find(m, &out->st, &out->causes)) {
		snprintf(err, errlen, "%s: became unreadable, or out of memory", m->path);
		stalls_free(out);
		return -1;
	}
	if (rank(out)) {
		snprintf(err, errlen, "out of memory");
		stalls_free(out);
		return -1;
	}
	return 0;
}

/* The last result of stalls_shared(), and what it was asked. */
static struct {
	const struct trace_model *m;
	char *by;
	struct stalls s;
} shared;

static bool same_by(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

const struct stalls *stalls_shared(const struct trace_model *m, const char *by, char *err,
				   size_t errlen)
{
	char *copy = NULL;

	if (shared.m == m && same_by(shared.by, by))
		return &shared.s;
	stalls_shared_release();
	if (by && !(copy = strdup(by))) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (stalls_find(m, by, &shared.s, err, errlen)) {
		free(copy);
		return NULL;
	}
	shared.m = m;
	shared.by = copy;
	return &shared.s;
}

void stalls_shared_release(void)
{
	if (shared.m)
		stalls_free(&shared.s);
	free(shared.by);
	shared.m = NULL;
	shared.by = NULL;
}

void stalls_free(struct stalls *s)
{
	for (size_t i = 0; s->v && i < s->n; i++) {
		free(s->v[i].pids);
		free(s->v[i].where);
		free(s->v[i].what);
		free(s->v[i].cause);
		free(s->v[i].advice);
	}
	free(s->v);
	stall_causes_free(&s->causes);
	step_times_free(&s->st);
	memset(s, 0, sizeof(*s));
}
