// SPDX-License-Identifier: MIT
/* Releasing the per-process state of exited processes (record_exit.h). */
#include <stdlib.h>
#include <string.h>
#include "bpf/records.h"
#include "lib/clocks.h"
#include "lib/exit_codes.h"
#include "lib/key_index.h"
#include "lib/messages.h"
#include "lib/pid_list.h"
#include "loader/bridge/cupti_link.h"
#include "loader/bridge/late_bridges.h"
#include "loader/probes/cuda_names.h"
#include "loader/probes/cuda_probes.h"
#include "loader/probes/op_probes.h"
#include "loader/python/py_stacks.h"
#include "loader/record/record_exit.h"
#include "loader/record/record_torch.h"
#include "loader/record/recorder.h"

#define GRACE_NS  1000000000ULL
#define CANCELLED (SIZE_MAX - 1) /* ix value: released early (the pid was reused) */

struct pending_exit {
	uint32_t pid; /* 0: released early */
	uint64_t at;  /* when its exit record was read */
};

/* One recording per gpuspy process: the exits not released yet, oldest first. */
static struct {
	struct pending_exit *v;
	size_t n, cap;
	uint64_t base;	     /* sequence number of v[0] */
	struct key_index ix; /* pid -> sequence number of its pending exit, or CANCELLED */
	uint64_t last_release;
	uint64_t released; /* processes released so far */
} ex;

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static void release(struct recorder *r, uint32_t *pids, size_t n)
{
	struct pid_list dead = {.pids = pids};

	qsort(pids, n, sizeof(*pids), cmp_pid);
	for (size_t i = 0; i < n; i++)
		if (pids[i] && (!dead.n || pids[i] != pids[dead.n - 1]))
			pids[dead.n++] = pids[i];
	if (!dead.n)
		return;
	py_stacks_forget(r->py, &dead);
	cuda_probes_forget(r->cuda, &dead);
	cuda_names_forget(r->cuda_names, &dead);
	cupti_link_forget(r->cupti, &dead);
	op_probes_forget(r->ops, &dead);
	late_bridges_forget(r->late, &dead);
	recorder_forget_torch(r, &dead);
	ex.released += dead.n;
	gs_debug("released the state of %zu exited process(es), %llu so far; per-process entries "
		 "kept: python %zu, CUDA %zu, CUPTI %zu, operators %zu, late bridges %zu",
		 dead.n, (unsigned long long)ex.released, py_stacks_tracked(r->py),
		 cuda_probes_tracked(r->cuda) + cuda_names_tracked(r->cuda_names),
		 cupti_link_tracked(r->cupti), op_probes_tracked(r->ops),
		 late_bridges_tracked(r->late));
}

/* Releases the exits read before `before`, in one batch. */
static void release_due(struct recorder *r, uint64_t before)
{
	uint32_t *pids;
	size_t k = 0;

	while (k < ex.n && ex.v[k].at < before)
		k++;
	if (!k)
		return;
	pids = malloc(k * sizeof(*pids));
	if (!pids)
		return; /* tried again at the next exit */
	for (size_t i = 0; i < k; i++)
		pids[i] = ex.v[i].pid;
	release(r, pids, k);
	free(pids);
	ex.n -= k;
	memmove(ex.v, ex.v + k, ex.n * sizeof(*ex.v));
	ex.base += k;
	/* the index keeps the pending ones only */
	key_index_free(&ex.ix);
	for (size_t i = 0; i < ex.n; i++)
		if (ex.v[i].pid && key_index_put(&ex.ix, ex.v[i].pid, 0, (size_t)(ex.base + i)))
			break; /* out of memory: a reused pid then waits for its batch */
}

static void note_exit(uint32_t pid, uint64_t now)
{
	struct pending_exit *e;

	if (ex.n == ex.cap) {
		size_t cap = ex.cap ? ex.cap * 2 : 256;
		struct pending_exit *v = realloc(ex.v, cap * sizeof(*v));

		if (!v)
			return; /* its state stays: memory, never correctness */
		ex.v = v;
		ex.cap = cap;
	}
	e = &ex.v[ex.n];
	if (key_index_put(&ex.ix, pid, 0, (size_t)(ex.base + ex.n)))
		return;
	e->pid = pid;
	e->at = now;
	ex.n++;
}

/* `pid` is a new process: what is kept for an earlier one with its pid goes now. */
static void pid_reused(struct recorder *r, uint32_t pid)
{
	size_t seq;

	if (!key_index_find(&ex.ix, pid, 0, &seq) || seq == CANCELLED || seq < ex.base ||
	    seq - ex.base >= ex.n)
		return;
	ex.v[seq - ex.base].pid = 0;
	key_index_put(&ex.ix, pid, 0, CANCELLED); /* overwrites: cannot fail */
	release(r, &pid, 1);
}

void record_exit_on_record(struct recorder *r, const struct gs_hdr *rec)
{
	uint64_t now;

	if (rec->type == GS_REC_FORK && !(rec->flags & GS_FORK_THREAD) &&
	    rec->size >= sizeof(struct gs_fork)) {
		pid_reused(r, ((const struct gs_fork *)rec)->child_pid);
		return;
	}
	if (rec->type != GS_REC_EXIT || !(rec->flags & GS_EXIT_GROUP))
		return;
	now = gs_monotonic_ns();
	note_exit(rec->pid, now);
	if (now - ex.last_release < GRACE_NS)
		return;
	ex.last_release = now;
	release_due(r, now - GRACE_NS);
}

void record_exit_free(void)
{
	free(ex.v);
	key_index_free(&ex.ix);
	ex.v = NULL;
	ex.n = ex.cap = 0;
}
