// SPDX-License-Identifier: MIT
/*
 * The CUPTI bridge's records on the Chrome timeline, in Kineto's convention: GPU work on a
 * track per device (pid) and stream (tid), named "GPU N" / "stream S"; a flow (category
 * ac2g) from the launching call's span to each kernel, copy and memset; NVTX ranges on the
 * threads that opened them. Kineto's dialect (c->kineto) differs in names (Kineto's memcpy
 * and memset names, which HTA classifies by), and adds CUPTI's sync records (on a track of the
 * calling thread's, track_tid says why) and the API records no uprobe span joined.
 *
 * Track pids: a device index as pid is Kineto's convention, and it can collide with a real
 * pid in the same file (pid 1 under -a, or any pid 0..N). When a traced process has such a
 * pid, or several processes have GPU work (their device indexes and stream ids are their own,
 * and would share tracks), each (process, device) gets a pid above Linux's PID_MAX_LIMIT
 * instead, which no process can have.
 *
 * Flow ids must be unique in the file; CUPTI's correlation ids are unique per process only
 * and a graph launch's kernels share one. A flow's id is the correlation id in the low 32
 * bits, and above them the (process ordinal, rank within the correlation id) pair: so the
 * first GPU operation of a correlation in the first process has the correlation id itself,
 * as Kineto writes it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "lib/json_writer.h"
#include "output/export/chrome_events.h"
#include "output/export/export_chrome_gpu.h"
#include "output/model/gpu/gpu_finish.h"
#include "output/model/gpu/gpu_model.h"
#include "output/model/gpu/gpu_strings.h"
#include "output/model/trace_model.h"

#define GPU_TRACK_PID_BASE 4194304u /* PID_MAX_LIMIT: above every Linux pid */

struct gpu_track {
	uint32_t pid, device;
	uint64_t chrome_pid;
};

struct chrome_gpu {
	/* pass 2 reads the GPU and API records in the order the model stored them */
	size_t next_op, next_api;
	struct gpu_track *tracks;
	size_t ntracks, tracks_cap;
	bool per_process;	     /* tracks above GPU_TRACK_PID_BASE, named with their process */
	struct key_index ix_tracks;  /* (pid, device) -> tracks[] */
	struct key_index ix_streams; /* (chrome pid, stream) seen, for their names */
	uint64_t *streams;	     /* (chrome pid, stream) pairs seen, in order */
	size_t nstreams, streams_cap;
	uint64_t next_async_id; /* NVTX start/end ranges */
	bool *owner; /* Kineto's dialect: apis[i] is the one that shows its correlation id */
	struct gpu_launch *launches; /* Kineto's dialect: by (pid, tid, ts), built at first use */
	size_t nlaunches;
	bool launches_built;
};

/* Where a GPU operation was launched from, for the annotations that launched it. */
struct gpu_launch {
	uint32_t pid, tid;
	uint64_t ts;
	uint32_t op;
};

/* CUPTI gives a runtime call and the driver calls it makes one correlation id; HTA asserts a
 * single CUDA API event per id. The outermost call, the longest, which the GPU work joined,
 * keeps it; the calls nested in it are written without. 0, or -1 out of memory. */
static int find_owners(struct chrome_gpu *s, const struct gpu_model *g)
{
	uint32_t *order = malloc((g->napis + 1) * sizeof(*order));
	size_t n = 0;

	s->owner = calloc(g->napis + 1, sizeof(*s->owner));
	if (!order || !s->owner) {
		free(order);
		return -1;
	}
	for (size_t i = 0; i < g->napis; i++)
		if (g->apis[i].correlation)
			order[n++] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), gpu_api_cmp_correlation, (void *)g);
	for (size_t i = 0; i < n; i++) {
		const struct gpu_api *a = &g->apis[order[i]], *p = &g->apis[order[i ? i - 1 : 0]];

		s->owner[order[i]] = !i || a->pid != p->pid || a->correlation != p->correlation;
	}
	free(order);
	return 0;
}

/* Whether an API record's event shows its correlation id (only one of an id in Kineto's). */
static bool shows_correlation(const struct chrome_ctx *c, const struct gpu_api *a)
{
	return !c->kineto || !c->gpu || c->gpu->owner[a - c->names->gpu.apis];
}

static int add_track(struct chrome_gpu *s, uint32_t pid, uint32_t device)
{
	struct gpu_track *t;
	size_t i;

	if (key_index_find(&s->ix_tracks, pid, device, &i))
		return 0;
	t = array_grow((void **)&s->tracks, &s->ntracks, &s->tracks_cap, sizeof(*t));
	if (!t || key_index_put(&s->ix_tracks, pid, device, s->ntracks - 1))
		return -1;
	t->pid = pid;
	t->device = device;
	return 0;
}

/* Kineto's pid = device index, unless that could mix tracks (see the top of the file). */
static void assign_pids(struct chrome_gpu *s, const struct trace_model *m)
{
	bool several = false;

	for (size_t i = 0; i < s->ntracks; i++) {
		several |= s->tracks[i].pid != s->tracks[0].pid;
		s->per_process |= trace_model_process(m, s->tracks[i].device) != NULL;
	}
	s->per_process |= several;
	for (size_t i = 0; i < s->ntracks; i++)
		s->tracks[i].chrome_pid =
		    s->per_process ? GPU_TRACK_PID_BASE + i : s->tracks[i].device;
}

static struct chrome_gpu *state(struct chrome_ctx *c)
{
	const struct gpu_model *g = &c->names->gpu;

	if (c->gpu)
		return c->gpu;
	c->gpu = calloc(1, sizeof(*c->gpu));
	if (!c->gpu)
		return NULL;
	for (size_t i = 0; i < g->nops; i++) {
		if (add_track(c->gpu, g->ops[i].pid, g->ops[i].device)) {
			chrome_gpu_free(c);
			return NULL;
		}
	}
	assign_pids(c->gpu, c->names);
	if (c->kineto && find_owners(c->gpu, g)) {
		chrome_gpu_free(c);
		return NULL;
	}
	return c->gpu;
}

static uint64_t track_pid(const struct chrome_gpu *s, const struct gpu_op *op)
{
	size_t i;

	return key_index_find(&s->ix_tracks, op->pid, op->device, &i) ? s->tracks[i].chrome_pid
								      : op->device;
}

/* CUPTI's sync records are host waits: they start when a thread blocks and end when the GPU
 * catches up, so on a stream's track (where Kineto draws a stream sync) one starts inside the
 * kernel it waits for and ends after it, a partial overlap that Chrome's nesting rules do not
 * allow (Perfetto moves it to an overflow track). They go on a track of the calling thread's
 * in the GPU's process instead, "syncs (tid N)": one thread waits on one thing at a time, so
 * its syncs never overlap each other, and their args keep the stream. A sync whose calling
 * thread is unknown goes on tid 0, "syncs". Kineto writes a context or device sync's invalid
 * stream (-1) as its track's stream 1; tid 0 keeps them off a real stream's track too. */
#define SYNC_TID_BASE (1u << 23) /* above PID_MAX_LIMIT (2^22) and every stream id CUPTI uses */

static uint64_t track_tid(const struct gpu_op *op)
{
	if (op->kind == GPU_OP_SYNC)
		return op->launch_tid ? SYNC_TID_BASE + (uint64_t)op->launch_tid : 0;
	return op->stream == UINT32_MAX ? 0 : op->stream;
}

static int note_stream(struct chrome_gpu *s, uint64_t pid, uint64_t tid)
{
	uint64_t *e;
	size_t i;

	if (key_index_find(&s->ix_streams, pid, tid, &i))
		return 0;
	e = array_grow((void **)&s->streams, &s->nstreams, &s->streams_cap, 2 * sizeof(*e));
	if (!e || key_index_put(&s->ix_streams, pid, tid, s->nstreams - 1))
		return -1;
	e[0] = pid;
	e[1] = tid;
	return 0;
}

static uint64_t flow_id(const struct gpu_model *g, const struct gpu_op *op)
{
	const struct gpu_proc *p = gpu_model_proc(g, op->pid);
	uint64_t ordinal = p ? (uint64_t)(p - g->procs) : 0;

	return ((uint64_t)op->corr_seq * g->nprocs + ordinal) << 32 | op->correlation;
}

/* Where the flow starts: the launching call's span, or in Kineto's dialect the API record's
 * own span when no uprobe span joined it. */
static bool flow_source(const struct chrome_ctx *c, const struct gpu_api *a, uint32_t *tid,
			uint64_t *ts)
{
	if (a->tier) {
		*tid = a->call_tid;
		*ts = a->call_ts;
		return true;
	}
	*tid = a->tid;
	*ts = a->ts;
	return c->kineto;
}

static void emit_flow(struct chrome_ctx *c, const struct gpu_op *op, uint64_t pid, uint64_t tid)
{
	const struct gpu_model *g = &c->names->gpu;
	uint64_t id = flow_id(g, op), src_ts;
	uint32_t src_tid;

	if (op->api == GPU_NONE || !flow_source(c, &g->apis[op->api], &src_tid, &src_ts))
		return;
	chrome_begin_event(c);
	fprintf(c->out,
		"{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %" PRIu64
		", \"pid\": %u, \"tid\": %u, ",
		id, op->pid, src_tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, src_ts));
	fputs("}", c->out);
	chrome_begin_event(c);
	fprintf(
	    c->out,
	    "{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %" PRIu64
	    ", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64 ", ",
	    id, pid, tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, op->ts));
	fputs("}", c->out);
}

static const char *op_category(const struct gpu_op *op)
{
	static const char *const cats[GPU_OP_NKINDS] = {
	    [GPU_OP_KERNEL] = "kernel",
	    [GPU_OP_MEMCPY] = "gpu_memcpy",
	    [GPU_OP_MEMSET] = "gpu_memset",
	    [GPU_OP_SYNC] = "cuda_sync",
	};

	return cats[op->kind];
}

/* Kineto's names for copies and memsets, which HTA tells memory kernels from others by. */
static const char *kineto_name(const struct gpu_model *g, const struct gpu_op *op, char *buf,
			       size_t len)
{
	if (op->kind == GPU_OP_MEMCPY)
		snprintf(buf, len, "Memcpy %s (%s -> %s)", gpu_copy_kind_short(op->subkind),
			 gpu_memory_kind_name(op->src_kind), gpu_memory_kind_name(op->dst_kind));
	else if (op->kind == GPU_OP_MEMSET)
		snprintf(buf, len, "Memset (%s)", gpu_memory_kind_name(op->dst_kind));
	else
		return gpu_op_name(g, op, buf, len);
	return buf;
}

static void kernel_args(FILE *out, const struct gpu_model *g, const struct gpu_op *op)
{
	fprintf(out,
		", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"registers per thread\": %u"
		", \"shared memory\": %" PRIu64 ", \"static shared memory\": %u"
		", \"dynamic shared memory\": %u",
		op->grid[0], op->grid[1], op->grid[2], op->block[0], op->block[1], op->block[2],
		op->registers, (uint64_t)op->static_smem + op->dynamic_smem, op->static_smem,
		op->dynamic_smem);
	if (op->graph_id)
		fprintf(out, ", \"graph id\": %u, \"graph node id\": %" PRIu64, op->graph_id,
			op->graph_node_id);
	fputs(", \"mangled\": ", out);
	json_print_string(out, string_pool_get(&g->names, op->name));
}

static void transfer_args(FILE *out, const struct gpu_op *op)
{
	fprintf(out, ", \"bytes\": %" PRIu64, op->bytes);
	if (op->kind == GPU_OP_MEMCPY)
		fprintf(out, ", \"kind\": \"%s\"", gpu_copy_kind_name(op->subkind));
	/* bytes per ns are GB/s */
	if (op->dur)
		fprintf(out, ", \"memory bandwidth (GB/s)\": %.3f", (double)op->bytes / op->dur);
}

static void op_args(struct chrome_ctx *c, const struct gpu_op *op)
{
	const struct gpu_model *g = &c->names->gpu;
	FILE *out = c->out;

	fprintf(out, "\"device\": %u, \"context\": %u, \"stream\": %d, \"correlation\": %u",
		op->device, op->context, (int32_t)op->stream, op->correlation);
	if (op->kind == GPU_OP_KERNEL)
		kernel_args(out, g, op);
	else if (op->kind == GPU_OP_SYNC)
		fprintf(out, ", \"cuda_sync_kind\": \"%s\"", gpu_sync_type_name(op->subkind));
	else
		transfer_args(out, op);
	fprintf(out, ", \"launch pid\": %u, \"launch tid\": %u", op->pid, op->launch_tid);
}

static int emit_op(struct chrome_ctx *c, const struct gpu_op *op)
{
	const struct gpu_model *g = &c->names->gpu;
	uint64_t pid = track_pid(c->gpu, op), tid = track_tid(op);
	char buf[160];

	/* CUPTI's syncs are host waits the uprobe spans already show; Kineto's dialect keeps
	 * them (HTA reads cuda_sync events), on the calling thread's sync track (track_tid) */
	if (op->kind == GPU_OP_SYNC && !c->kineto)
		return 0;
	if (note_stream(c->gpu, pid, tid))
		return -1;
	chrome_begin_event(c);
	fprintf(c->out, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", op_category(op));
	json_print_string(c->out, c->kineto ? kineto_name(g, op, buf, sizeof(buf))
					    : gpu_op_name(g, op, buf, sizeof(buf)));
	fprintf(c->out, ", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64 ", ", pid, tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, op->ts));
	fputs(", ", c->out);
	chrome_print_dur(c, op->dur);
	fputs(", \"args\": {", c->out);
	op_args(c, op);
	fputs("}}", c->out);
	if (op->kind != GPU_OP_SYNC)
		emit_flow(c, op, pid, tid);
	return 0;
}

static void nvtx_common(struct chrome_ctx *c, const char *ph, const struct gs_nvtx *n, uint64_t ts)
{
	chrome_begin_event(c);
	fprintf(c->out, "{\"ph\": \"%s\", \"cat\": \"user_annotation\", \"name\": ", ph);
	json_print_string(c->out, n->name);
	fprintf(c->out, ", \"pid\": %u, \"tid\": %u, ", n->hdr.pid, n->hdr.tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, ts));
}

static int cmp_launch(const void *a, const void *b)
{
	const struct gpu_launch *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	if (x->tid != y->tid)
		return (x->tid > y->tid) - (x->tid < y->tid);
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Every GPU operation (syncs aside) by its launching call's thread and start; 0 or -1. */
static int build_launches(struct chrome_ctx *c, struct chrome_gpu *s)
{
	const struct gpu_model *g = &c->names->gpu;

	s->launches_built = true;
	s->launches = malloc((g->nops + 1) * sizeof(*s->launches));
	if (!s->launches)
		return -1;
	for (size_t i = 0; i < g->nops; i++) {
		const struct gpu_op *op = &g->ops[i];
		struct gpu_launch *l = &s->launches[s->nlaunches];

		if (op->kind == GPU_OP_SYNC || op->api == GPU_NONE ||
		    !flow_source(c, &g->apis[op->api], &l->tid, &l->ts))
			continue;
		l->pid = op->pid;
		l->op = (uint32_t)i;
		s->nlaunches++;
	}
	qsort(s->launches, s->nlaunches, sizeof(*s->launches), cmp_launch);
	return 0;
}

#define ANNOTATION_TRACKS 16 /* streams an annotation is drawn on; a step uses a few */

/* Kineto's gpu_user_annotation: an annotation of thread (pid, tid) over [start, end) drawn on
 * each stream that ran work launched inside it, from the first such operation's start to the
 * last one's end, which HTA's GPU user-annotation breakdown and kernel attribution read. 0,
 * or -1 out of memory. */
int chrome_gpu_annotation(struct chrome_ctx *c, uint32_t pid, uint32_t tid, uint64_t start,
			  uint64_t end, const char *name)
{
	struct anno_track {
		uint64_t pid, tid, ts, end;
	} t[ANNOTATION_TRACKS];
	const struct gpu_model *g = &c->names->gpu;
	struct chrome_gpu *s = state(c);
	struct gpu_launch key = {.pid = pid, .tid = tid, .ts = start};
	size_t lo = 0, hi, nt = 0;

	if (!c->kineto || !g->nops)
		return 0;
	if (!s || (!s->launches_built && build_launches(c, s)))
		return -1;
	for (hi = s->nlaunches; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_launch(&s->launches[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < s->nlaunches; lo++) {
		const struct gpu_launch *l = &s->launches[lo];
		const struct gpu_op *op = &g->ops[l->op];
		uint64_t p = track_pid(s, op), k = track_tid(op);
		size_t j;

		if (l->pid != pid || l->tid != tid || l->ts >= end)
			break;
		for (j = 0; j < nt && (t[j].pid != p || t[j].tid != k); j++)
			;
		if (j == nt) {
			if (nt == ANNOTATION_TRACKS)
				continue;
			t[nt++] = (struct anno_track){p, k, op->ts, op->ts + op->dur};
		}
		if (op->ts < t[j].ts)
			t[j].ts = op->ts;
		if (op->ts + op->dur > t[j].end)
			t[j].end = op->ts + op->dur;
	}
	for (size_t j = 0; j < nt; j++) {
		chrome_begin_event(c);
		fputs("{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": ", c->out);
		json_print_string(c->out, name);
		fprintf(c->out, ", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64 ", ", t[j].pid,
			t[j].tid);
		chrome_print_us(c->out, "ts", chrome_rel(c, t[j].ts));
		fputs(", ", c->out);
		chrome_print_dur(c, t[j].end - t[j].ts);
		fputs("}", c->out);
	}
	return 0;
}

/* Push/pop ranges nest on their thread: complete events. A start/end range may end on
 * another thread and overlap anything: an async slice of its process (Kineto's dialect
 * keeps every range a complete event on the thread that opened it, as Kineto does). Marks
 * are instants. */
static int emit_nvtx(struct chrome_ctx *c, const struct gs_nvtx *n)
{
	if (n->kind == GS_NVTX_MARK) {
		nvtx_common(c, "i", n, n->hdr.ts);
		fputs(", \"s\": \"t\"}", c->out);
		return 0;
	}
	if (n->kind == GS_NVTX_START_END && !c->kineto) {
		uint64_t id = ++c->gpu->next_async_id;

		nvtx_common(c, "b", n, n->hdr.ts);
		fprintf(c->out, ", \"id\": %" PRIu64 ", \"args\": {\"range id\": %llu}}", id,
			(unsigned long long)n->id);
		nvtx_common(c, "e", n, n->hdr.ts + n->dur_ns);
		fprintf(c->out, ", \"id\": %" PRIu64 "}", id);
		return 0;
	}
	nvtx_common(c, "X", n, n->hdr.ts);
	fputs(", ", c->out);
	chrome_print_dur(c, n->dur_ns);
	fprintf(c->out, ", \"args\": {\"style\": \"%s\", \"depth\": %u}}",
		gpu_nvtx_style_name(n->kind), n->depth);
	return chrome_gpu_annotation(c, n->hdr.pid, n->hdr.tid, n->hdr.ts, n->hdr.ts + n->dur_ns,
				     n->name);
}

/* Kineto's dialect: an API call no uprobe span shows (a function gpuspy does not probe) is
 * CUPTI's record itself, so every GPU operation has its launching call and correlation. */
static void emit_unjoined_api(struct chrome_ctx *c, const struct gpu_api *a)
{
	bool nested = !shows_correlation(c, a);
	char fn[128], buf[136];
	const char *name;

	if (a->tier)
		return;
	gpu_api_function(string_pool_get(&c->names->gpu.names, a->name), fn, sizeof(fn));
	name = chrome_kineto_api_name(fn, nested, buf, sizeof(buf));
	chrome_begin_event(c);
	fprintf(c->out, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ",
		a->kind == GS_GPU_API_DRIVER ? "cuda_driver" : "cuda_runtime");
	json_print_string(c->out, name);
	fprintf(c->out, ", \"pid\": %u, \"tid\": %u, ", a->pid, a->tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, a->ts));
	fputs(", ", c->out);
	chrome_print_dur(c, a->dur);
	fprintf(c->out, ", \"args\": {\"cbid\": %u, \"source\": \"cupti\"", a->cbid);
	if (name != fn) {
		fputs(", \"symbol\": ", c->out);
		json_print_string(c->out, fn);
	}
	if (nested)
		fputs(", \"nested\": true}}", c->out);
	else
		fprintf(c->out, ", \"correlation\": %u}}", a->correlation);
}

int chrome_gpu_record(struct chrome_ctx *c, const struct gs_hdr *h)
{
	const struct gpu_model *g = &c->names->gpu;

	if (!state(c))
		return -1;
	switch (h->type) {
	case GS_REC_GPU_KERNEL:
	case GS_REC_GPU_MEMCPY:
	case GS_REC_GPU_MEMSET:
	case GS_REC_GPU_SYNC:
		/* the model stored these in file order: the next one is this record */
		if (c->gpu->next_op >= g->nops)
			return 0;
		return emit_op(c, &g->ops[c->gpu->next_op++]);
	case GS_REC_GPU_API:
		if (c->gpu->next_api >= g->napis)
			return 0;
		if (c->kineto)
			emit_unjoined_api(c, &g->apis[c->gpu->next_api]);
		c->gpu->next_api++;
		return 0;
	case GS_REC_NVTX:
		return emit_nvtx(c, (const void *)h);
	default:
		return 0;
	}
}

/* CUPTI's records of the calls nested in a call may have joined its span too (gpu_join.c):
 * the one of them that is its id's outermost, whose id the span shows; NULL if none. */
static const struct gpu_api *joined_owner(const struct chrome_ctx *c,
					  const struct gs_cuda_call *call)
{
	const struct gpu_model *g = &c->names->gpu;
	uint32_t pid = call->hdr.pid, tid = call->hdr.tid;
	uint64_t ts = call->hdr.ts;
	size_t lo = 0, hi = g->ncalls;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct gpu_api *a = &g->apis[g->calls[mid]];

		if (a->pid < pid || (a->pid == pid && a->call_tid < tid) ||
		    (a->pid == pid && a->call_tid == tid && a->call_ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < g->ncalls; lo++) {
		const struct gpu_api *a = &g->apis[g->calls[lo]];

		if (a->pid != pid || a->call_tid != tid || a->call_ts != ts)
			return NULL;
		if (shows_correlation(c, a))
			return a;
	}
	return NULL;
}

void chrome_gpu_call_args(struct chrome_ctx *c, const struct gs_cuda_call *call)
{
	const struct gpu_api *a =
	    gpu_model_call_api(&c->names->gpu, call->hdr.pid, call->hdr.tid, call->hdr.ts);

	if (!a || (c->kineto && !state(c)))
		return;
	if (c->kineto && !shows_correlation(c, a) && !(a = joined_owner(c, call)))
		return;
	fprintf(c->out, ", \"correlation\": %u", a->correlation);
	if (c->kineto)
		fprintf(c->out, ", \"cbid\": %u", a->cbid);
}

void chrome_gpu_names(struct chrome_ctx *c)
{
	char label[64];

	if (!c->gpu)
		return;
	for (size_t i = 0; i < c->gpu->ntracks; i++) {
		const struct gpu_track *t = &c->gpu->tracks[i];

		if (c->gpu->per_process)
			snprintf(label, sizeof(label), "GPU %u (pid %u)", t->device, t->pid);
		else
			snprintf(label, sizeof(label), "GPU %u", t->device);
		chrome_metadata(c, "process_name", t->chrome_pid, 0, label);
	}
	for (size_t i = 0; i < c->gpu->nstreams; i++) {
		const uint64_t *e = &c->gpu->streams[2 * i];

		if (e[1] >= SYNC_TID_BASE)
			snprintf(label, sizeof(label), "syncs (tid %" PRIu64 ")",
				 e[1] - SYNC_TID_BASE);
		else if (e[1])
			snprintf(label, sizeof(label), "stream %" PRIu64, e[1]);
		else
			snprintf(label, sizeof(label), "syncs");
		chrome_metadata(c, "thread_name", e[0], e[1], label);
	}
}

void chrome_gpu_free(struct chrome_ctx *c)
{
	if (!c->gpu)
		return;
	free(c->gpu->tracks);
	free(c->gpu->streams);
	free(c->gpu->owner);
	free(c->gpu->launches);
	key_index_free(&c->gpu->ix_tracks);
	key_index_free(&c->gpu->ix_streams);
	free(c->gpu);
	c->gpu = NULL;
}
