// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "output/model/op_torch.h"

#define EVALUATE "autograd::engine::evaluate_function: "

static uint64_t key(uint32_t hi, uint32_t lo)
{
	return (uint64_t)hi << 32 | lo;
}

uint32_t op_torch_name(const struct op_torch_reader *r, uint32_t pid, uint32_t name)
{
	size_t id;

	return key_index_find(&r->ix_names, key(pid, name), 0, &id) ? (uint32_t)id : OP_NONE;
}

/* Ids are per process and stable for its life; a second name for an id (a file that is not
 * the observer's) renames it, as OP_NAME does. */
static int on_name(struct op_torch_reader *r, struct string_pool *names,
		   const struct gs_torch_name *n)
{
	uint32_t id;

	if (string_pool_intern(names, n->text, &id))
		return -1;
	return key_index_put(&r->ix_names, key(n->hdr.pid, n->name), 0, id);
}

static struct op_torch_thread *find_thread(const struct op_torch_reader *r, uint32_t pid,
					   uint32_t tid)
{
	size_t i;

	return key_index_find(&r->ix_threads, key(pid, tid), 0, &i) ? &r->threads[i] : NULL;
}

static struct op_torch_thread *get_thread(struct op_torch_reader *r, uint32_t pid, uint32_t tid)
{
	struct op_torch_thread *t = find_thread(r, pid, tid);

	if (t)
		return t;
	t = array_grow((void **)&r->threads, &r->nthreads, &r->threads_cap, sizeof(*t));
	if (!t || key_index_put(&r->ix_threads, key(pid, tid), 0, r->nthreads - 1))
		return NULL;
	t->pid = pid;
	t->tid = tid;
	t->eval = OP_NONE;
	return t;
}

static bool is_evaluate(const struct op_torch_reader *r, const struct string_pool *names,
			uint32_t pid, uint32_t name)
{
	uint32_t id = op_torch_name(r, pid, name);

	return id != OP_NONE &&
	       !strncmp(string_pool_get(names, id), EVALUATE, sizeof(EVALUATE) - 1);
}

/*
 * The autograd engine records its evaluate_function range without a sequence number and the
 * backward node it runs right inside it with one; torch.profiler gives the range the node's
 * number and forward thread (torch/csrc/profiler/collection.cpp:289-299), so its table and
 * trace show them on both: the next start on the thread decides.
 */
static int on_start(struct op_torch_reader *rd, const struct string_pool *names,
		    const struct gs_torch_op *r)
{
	struct op_torch_thread *t = get_thread(rd, r->hdr.pid, r->hdr.tid);
	struct op_torch_open *o;

	if (!t)
		return -1;
	if (t->eval != OP_NONE) {
		if (r->scope == 1 && r->seq_nr >= 0) {
			t->open[t->eval].seq_nr = r->seq_nr;
			t->open[t->eval].fwd_tid = r->fwd_tid;
		}
		t->eval = OP_NONE;
	}
	if (t->deeper || t->depth >= OP_TORCH_MAX_DEPTH) {
		t->deeper++;
		rd->too_deep++;
		return 0;
	}
	if (t->depth == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 16;
		void *p = realloc(t->open, cap * sizeof(*t->open));

		if (!p)
			return -1;
		t->open = p;
		t->cap = cap;
	}
	o = &t->open[t->depth];
	o->ts = r->hdr.ts;
	o->seq_nr = r->seq_nr;
	o->name = r->name;
	o->fwd_tid = r->fwd_tid;
	o->shapes = r->shapes;
	o->scope = (uint8_t)(r->scope < 256 ? r->scope : 255);
	o->flags = (uint8_t)r->hdr.flags;
	if (r->seq_nr < 0 && r->scope == 0 && is_evaluate(rd, names, r->hdr.pid, r->name))
		t->eval = t->depth;
	t->depth++;
	return 0;
}

/*
 * Per thread an end is its innermost open range's (the observer keeps them nested), and carries
 * its start's name id: an end whose name is not the innermost range's had the ends of the ranges
 * above it dropped (a thread's ring full drops records, starts and ends alike), so those are
 * closed as never ended, and an end of no open range had its start dropped. The rest of what an
 * end carries is its start's again and is not read.
 */
static int on_end(struct op_torch_reader *rd, const struct gs_torch_op *r,
		  struct op_torch_range *done)
{
	struct op_torch_thread *t = find_thread(rd, r->hdr.pid, r->hdr.tid);
	uint32_t k;

	if (t && t->deeper) {
		t->deeper--;
		return 0;
	}
	for (k = t ? t->depth : 0; k && r->name && t->open[k - 1].name != r->name; k--)
		;
	if (!k) {
		rd->unstarted++;
		return 0;
	}
	rd->unended += t->depth - k;
	t->depth = k - 1;
	if (t->eval != OP_NONE && t->eval >= t->depth)
		t->eval = OP_NONE;
	done->start = &t->open[t->depth];
	done->end = r->hdr.ts;
	done->pid = t->pid;
	done->tid = t->tid;
	done->depth = t->depth;
	return 1;
}

int op_torch_apply(struct op_torch_reader *r, struct string_pool *names, const struct gs_hdr *h,
		   struct op_torch_range *done)
{
	const struct gs_torch_op *op = (const void *)h;

	if (h->type == GS_REC_TORCH_NAME)
		return on_name(r, names, (const void *)h);
	return h->flags & GS_TORCH_OP_END ? on_end(r, op, done) : on_start(r, names, op);
}

void op_torch_close(struct op_torch_reader *r)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		r->unended += r->threads[i].depth;
		free(r->threads[i].open);
	}
	free(r->threads);
	r->threads = NULL;
	r->nthreads = r->threads_cap = 0;
	key_index_free(&r->ix_threads);
}

void op_torch_free(struct op_torch_reader *r)
{
	op_torch_close(r);
	key_index_free(&r->ix_names);
}

static int cmp_event(const void *a, const void *b)
{
	const struct op_torch_event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return (x->call > y->call) - (x->call < y->call);
}

struct vote {
	uint32_t logical, tid;
	uint64_t n;
};

#define MAX_FWD_THREADS 64 /* forward threads of a process a logical id is matched against */

/*
 * A backward op names its forward op's thread by torch's logical id (1, 2, ... in order of a
 * thread's first RecordFunction), which the records do not give for the thread that runs an
 * op. A logical id is the kernel thread whose forward ops have the sequence numbers its
 * backward ops carry most often (numbers count per thread, so another forward thread shares
 * only some). `ix_l2t`: (logical id, 1) -> tid.
 */
static int map_logical(const struct op_torch_event *ev, size_t n, struct key_index *ix_l2t)
{
	struct key_index ix_fwd = {0}, ix_votes = {0};
	uint32_t tids[MAX_FWD_THREADS];
	struct vote *votes = NULL;
	size_t ntids = 0, nvotes = 0, cap = 0, k;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		if (ev[i].x->fwd_tid)
			continue;
		if (!key_index_find(&ix_fwd, ev[i].tid, 0, &k) && ntids < MAX_FWD_THREADS) {
			tids[ntids++] = ev[i].tid;
			err = key_index_put(&ix_fwd, ev[i].tid, 0, 0);
		}
		if (!err)
			err = key_index_put(&ix_fwd, ev[i].tid, (uint64_t)ev[i].x->seq_nr + 1, 0);
	}
	for (size_t i = 0; i < n && !err; i++) {
		const struct op_torch *x = ev[i].x;

		for (size_t j = 0; x->fwd_tid && j < ntids && !err; j++) {
			struct vote *v;

			if (!key_index_find(&ix_fwd, tids[j], (uint64_t)x->seq_nr + 1, &k))
				continue;
			if (key_index_find(&ix_votes, x->fwd_tid, tids[j], &k)) {
				votes[k].n++;
				continue;
			}
			v = array_grow((void **)&votes, &nvotes, &cap, sizeof(*v));
			if (!v || key_index_put(&ix_votes, x->fwd_tid, tids[j], nvotes - 1)) {
				err = -1;
				break;
			}
			v->logical = x->fwd_tid;
			v->tid = tids[j];
			v->n = 1;
		}
	}
	/* (logical id, 0) holds the votes[] index of the most voted tid while counting */
	for (size_t i = 0; i < nvotes && !err; i++)
		if (!key_index_find(ix_l2t, votes[i].logical, 0, &k) || votes[i].n > votes[k].n)
			err = key_index_put(ix_l2t, votes[i].logical, 0, i);
	for (size_t i = 0; i < nvotes && !err; i++)
		if (key_index_find(ix_l2t, votes[i].logical, 0, &k) && k == i)
			err = key_index_put(ix_l2t, votes[i].logical, 1, votes[i].tid);
	free(votes);
	key_index_free(&ix_fwd);
	key_index_free(&ix_votes);
	return err;
}

/*
 * Kineto's link, in start order over a process's calls with a sequence number: a forward op
 * (no forward thread) is the candidate of its (thread, number), the latest started winning
 * (among the ops sharing a number, the one that created the autograd node); a backward op
 * (scope or not: evaluate_function ranges have a forward thread by the rule above) takes the
 * candidate of its (forward thread, number), which is then used up.
 */
int op_torch_link(struct op_torch_event *ev, size_t n)
{
	struct key_index ix_l2t = {0}, ix_cand = {0};
	int err;

	qsort(ev, n, sizeof(*ev), cmp_event);
	err = map_logical(ev, n, &ix_l2t);
	for (size_t i = 0; i < n && !err; i++) {
		const struct op_torch *x = ev[i].x;
		uint64_t seq = (uint64_t)x->seq_nr;
		size_t tid, f;

		if (!x->fwd_tid) {
			err = key_index_put(&ix_cand, ev[i].tid, seq, i);
			continue;
		}
		if (!key_index_find(&ix_l2t, x->fwd_tid, 1, &tid) ||
		    !key_index_find(&ix_cand, tid, seq, &f))
			continue;
		ev[f].x->bwd = ev[i].call;
		key_index_remove(&ix_cand, tid, seq);
	}
	key_index_free(&ix_l2t);
	key_index_free(&ix_cand);
	return err;
}
