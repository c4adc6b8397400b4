// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "output/model/gpu/gpu_model.h"
#include "output/model/op_model.h"

/* 20M calls may be held: op_model.h's sizes, kept */
_Static_assert(sizeof(struct op_call) == 64, "struct op_call is 64 bytes");
_Static_assert(sizeof(struct op_torch) == 24, "struct op_torch is 24 bytes");

bool op_model_takes(const struct gs_hdr *h)
{
	return h->type == GS_REC_OP_CALL || h->type == GS_REC_OP_NAME ||
	       h->type == GS_REC_TORCH_OP || h->type == GS_REC_TORCH_NAME ||
	       (h->type == GS_REC_BRIDGE_LOAD && (h->flags & GS_BRIDGE_LOAD_TORCH));
}

/* A later record for the same index renames it, as the array this replaced did. */
static int on_name(struct op_model *om, const struct gs_op_name *n)
{
	uint32_t id;

	if (string_pool_intern(&om->names, n->name, &id))
		return -1;
	return key_index_put(&om->ix_names, n->op, 0, id);
}

static int on_call(struct op_model *om, const struct gs_op_call *c)
{
	struct op_call *o =
	    array_grow((void **)&om->calls, &om->ncalls, &om->calls_cap, sizeof(*o));

	if (!o)
		return -1;
	o->ts = c->hdr.ts;
	o->dur = c->dur_ns;
	o->self_ns = c->dur_ns;
	o->pid = c->hdr.pid;
	o->tid = c->hdr.tid;
	o->op = c->op;
	o->parent = OP_NONE;
	o->depth = c->depth;
	o->flags = (uint16_t)c->hdr.flags;
	o->torch = OP_NONE;
	return 0;
}

static struct op_pid_calls *pid_calls(struct op_model *om, uint32_t pid)
{
	struct op_pid_calls *p;
	size_t i;

	if (key_index_find(&om->ix_pids, pid, 0, &i))
		return &om->pids[i];
	p = array_grow((void **)&om->pids, &om->npids, &om->pids_cap, sizeof(*p));
	if (!p || key_index_put(&om->ix_pids, pid, 0, om->npids - 1))
		return NULL;
	p->pid = pid;
	return p;
}

/* An in-process range as a call; its op and shapes are observer ids until name_calls(). */
static int on_range(struct op_model *om, const struct op_torch_range *r)
{
	const struct op_torch_open *o = r->start;
	struct op_torch *x =
	    array_grow((void **)&om->torch, &om->ntorch, &om->torch_cap, sizeof(*x));
	struct op_call *c;

	if (!x)
		return -1;
	c = array_grow((void **)&om->calls, &om->ncalls, &om->calls_cap, sizeof(*c));
	if (!c)
		return -1;
	x->seq_nr = o->seq_nr;
	x->fwd_tid = o->fwd_tid;
	x->shapes = o->shapes;
	x->bwd = OP_NONE;
	x->scope = o->scope;
	x->async = !!(o->flags & GS_TORCH_OP_ASYNC);
	c->ts = o->ts;
	c->dur = r->end > o->ts ? r->end - o->ts : 0;
	c->self_ns = c->dur;
	c->pid = r->pid;
	c->tid = r->tid;
	c->op = o->name;
	c->parent = OP_NONE;
	c->depth = (uint16_t)r->depth;
	c->flags = r->depth ? GS_CUDA_NESTED : 0;
	c->torch = (uint32_t)(om->ntorch - 1);
	return 0;
}

/* How the observer came to be in the process, or why not (the last record says). */
static int on_load(struct op_model *om, const struct gs_bridge_load *l)
{
	struct op_pid_calls *p = pid_calls(om, l->hdr.pid);

	if (!p)
		return -1;
	free(p->load_message);
	p->load_outcome = l->outcome;
	p->load_message = strdup(l->message); /* NUL-terminated: trace_format.c checked */
	return p->load_message ? 0 : -1;
}

int op_model_apply_only(struct op_model *om, const struct gs_hdr *h, bool keep_calls)
{
	struct op_torch_range range;
	struct op_pid_calls *p;
	int ret = 0;

	if (h->type == GS_REC_OP_NAME)
		return on_name(om, (const void *)h);
	if (h->type == GS_REC_BRIDGE_LOAD)
		return on_load(om, (const void *)h);
	if (h->type != GS_REC_OP_CALL) {
		ret = op_torch_apply(&om->reader, &om->names, h, &range);
		if (ret <= 0)
			return ret;
	}
	p = pid_calls(om, h->pid);
	if (!p)
		return -1;
	if (h->type != GS_REC_OP_CALL) {
		p->inprocess++;
		return keep_calls ? on_range(om, &range) : 0;
	}
	p->uprobe++;
	return keep_calls ? on_call(om, (const void *)h) : 0;
}

int op_model_apply(struct op_model *om, const struct gs_hdr *h)
{
	return op_model_apply_only(om, h, true);
}

/* Thread, then start; at equal starts the longer (enclosing) call first. */
static int cmp_call(const void *a, const void *b)
{
	const struct op_call *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return (x->depth > y->depth) - (x->depth < y->depth);
}

static bool contains(const struct op_call *outer, const struct op_call *inner)
{
	return inner->ts >= outer->ts && inner->ts + inner->dur <= outer->ts + outer->dur;
}

/*
 * One thread's calls, in start order, nested with a stack of the open ones. A call's parent is
 * the innermost open call that contains it; its own duration leaves its parent's self time.
 * A call whose record was lost simply is not there: its children then count against the
 * next enclosing call.
 */
static int nest_thread(struct op_model *om, size_t first, size_t end)
{
	uint32_t stack[GS_OP_MAX_DEPTH * 4];
	size_t depth = 0;

	for (size_t i = first; i < end; i++) {
		struct op_call *c = &om->calls[i];

		while (depth && !contains(&om->calls[stack[depth - 1]], c))
			depth--;
		if (depth) {
			struct op_call *p = &om->calls[stack[depth - 1]];

			c->parent = stack[depth - 1];
			p->self_ns = p->self_ns > c->dur ? p->self_ns - c->dur : 0;
		}
		if (depth < sizeof(stack) / sizeof(stack[0]))
			stack[depth++] = (uint32_t)i;
	}
	return key_index_put(&om->ix_threads,
			     (uint64_t)om->calls[first].pid << 32 | om->calls[first].tid, 0, first);
}

static int nest(struct op_model *om)
{
	for (size_t i = 0, end; i < om->ncalls; i = end) {
		for (end = i + 1; end < om->ncalls && om->calls[end].pid == om->calls[i].pid &&
				  om->calls[end].tid == om->calls[i].tid;
		     end++)
			;
		if (nest_thread(om, i, end))
			return -1;
	}
	return 0;
}

const struct op_call *op_model_call_at(const struct op_model *om, uint32_t pid, uint32_t tid,
				       uint64_t ts)
{
	size_t lo, hi;
	const struct op_call *c;

	if (!key_index_find(&om->ix_threads, (uint64_t)pid << 32 | tid, 0, &lo))
		return NULL;
	/* the last call of the thread starting at or before ts: the innermost call running
	 * then is it or one of its ancestors (calls on a thread nest) */
	for (hi = om->ncalls; lo + 1 < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		const struct op_call *m = &om->calls[mid];

		if (m->pid != pid || m->tid != tid || m->ts > ts)
			hi = mid;
		else
			lo = mid;
	}
	for (c = &om->calls[lo]; c; c = c->parent == OP_NONE ? NULL : &om->calls[c->parent])
		if (c->ts <= ts && ts < c->ts + c->dur)
			return c;
	return NULL;
}

/* Where and when the GPU work of `op` was launched: the uprobe span of the CUDA call it
 * joined, else CUPTI's own record of that call. */
static bool launch_point(const struct gpu_model *g, const struct gpu_op *op, uint32_t *tid,
			 uint64_t *ts)
{
	const struct gpu_api *a;

	if (op->kind == GPU_OP_SYNC || op->api == GPU_NONE)
		return false;
	a = &g->apis[op->api];
	*tid = a->tier ? a->call_tid : a->tid;
	*ts = a->tier ? a->call_ts : a->ts;
	return true;
}

static void attribute_gpu(struct op_model *om, const struct gpu_model *g)
{
	for (size_t i = 0; i < g->nops; i++) {
		const struct gpu_op *op = &g->ops[i];
		struct op_call *c;
		uint64_t ts;
		uint32_t tid;

		if (!launch_point(g, op, &tid, &ts))
			continue;
		c = (struct op_call *)op_model_call_at(om, op->pid, tid, ts);
		if (!c)
			continue;
		om->gpu_ops_inside++;
		c->self_cuda_ns += op->dur;
		for (; c; c = c->parent == OP_NONE ? NULL : &om->calls[c->parent])
			c->cuda_total_ns += op->dur;
	}
}

/* The in-process calls win in a process that has both kinds (op_model.h). */
static void count_calls(struct op_model *om)
{
	size_t kept = 0, k;

	om->calls_seen = 0;
	for (size_t i = 0; i < om->npids; i++) {
		const struct op_pid_calls *p = &om->pids[i];

		om->calls_seen += p->inprocess ? p->inprocess : p->uprobe;
		om->uprobe_calls_ignored += p->inprocess ? p->uprobe : 0;
	}
	if (!om->uprobe_calls_ignored)
		return;
	for (size_t i = 0; i < om->ncalls; i++) {
		const struct op_call *c = &om->calls[i];

		if (c->torch == OP_NONE && key_index_find(&om->ix_pids, c->pid, 0, &k) &&
		    om->pids[k].inprocess)
			continue;
		om->calls[kept++] = *c;
	}
	om->ncalls = kept;
}

/* Every call's op becomes a names id: the two kinds name theirs in two index spaces (OP_CALL's
 * global, the observer's per process), resolved once all names are read. */
static int name_calls(struct op_model *om)
{
	if (string_pool_intern(&om->names, "<unknown operator>", &om->unknown_name))
		return -1;
	for (size_t i = 0; i < om->ncalls; i++) {
		struct op_call *c = &om->calls[i];
		size_t id;

		if (c->torch != OP_NONE) {
			struct op_torch *x = &om->torch[c->torch];

			c->op = op_torch_name(&om->reader, c->pid, c->op);
			x->shapes =
			    x->shapes ? op_torch_name(&om->reader, c->pid, x->shapes) : OP_NONE;
			om->calls_with_shapes += x->shapes != OP_NONE;
		} else {
			c->op =
			    key_index_find(&om->ix_names, c->op, 0, &id) ? (uint32_t)id : OP_NONE;
		}
		if (c->op == OP_NONE)
			c->op = om->unknown_name;
	}
	return 0;
}

/* Each process's in-process calls with a sequence number, to op_torch_link(). */
static int link_calls(struct op_model *om)
{
	struct op_torch_event *ev = NULL;
	size_t n, cap = 0;
	int err = 0;

	for (size_t first = 0, end = 0; first < om->ncalls && !err; first = end) {
		for (n = 0; end < om->ncalls && om->calls[end].pid == om->calls[first].pid; end++) {
			const struct op_call *c = &om->calls[end];
			struct op_torch_event *e;

			if (c->torch == OP_NONE || om->torch[c->torch].seq_nr < 0)
				continue;
			e = array_grow((void **)&ev, &n, &cap, sizeof(*e));
			if (!e) {
				err = -1;
				break;
			}
			e->ts = c->ts;
			e->depth = c->depth;
			e->tid = c->tid;
			e->call = (uint32_t)end;
			e->x = &om->torch[c->torch];
		}
		if (!err && n)
			err = op_torch_link(ev, n);
	}
	free(ev);
	return err;
}

int op_model_finish(struct op_model *om, const struct gpu_model *g)
{
	op_torch_close(&om->reader);
	count_calls(om);
	if (name_calls(om))
		return -1;
	if (!om->ncalls)
		return 0;
	qsort(om->calls, om->ncalls, sizeof(*om->calls), cmp_call);
	if (nest(om))
		return -1;
	if (g)
		attribute_gpu(om, g);
	return link_calls(om);
}

void op_model_free(struct op_model *om)
{
	string_pool_free(&om->names);
	key_index_free(&om->ix_names);
	free(om->calls);
	key_index_free(&om->ix_threads);
	free(om->torch);
	op_torch_free(&om->reader);
	for (size_t i = 0; i < om->npids; i++)
		free(om->pids[i].load_message);
	free(om->pids);
	key_index_free(&om->ix_pids);
	memset(om, 0, sizeof(*om));
}

const char *op_model_name(const struct op_model *om, uint32_t op)
{
	return op < om->names.n ? string_pool_get(&om->names, op) : "<unknown operator>";
}

const struct op_torch *op_model_torch(const struct op_model *om, const struct op_call *c)
{
	return c->torch < om->ntorch ? &om->torch[c->torch] : NULL;
}

const char *op_model_shapes(const struct op_model *om, const struct op_call *c)
{
	const struct op_torch *x = op_model_torch(om, c);

	return x && x->shapes < om->names.n ? string_pool_get(&om->names, x->shapes) : NULL;
}
