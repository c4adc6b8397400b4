// SPDX-License-Identifier: MIT
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "array_grow.h"
#include "cli.h"
#include "cupti.skel.h"
#include "cupti_link.h"
#include "elf_symbols.h"
#include "key_index.h"
#include "trace_format.h"
#include "trace_writer.h"

#define BRIDGE_SEMAPHORE "gpuspy_records_semaphore"

/* What gpuspy knows of one process's bridge. */
struct bridge_proc {
	uint32_t pid;
	uint64_t last_seq;
	bool active;  /* said GS_BRIDGE_ACTIVE and not GS_BRIDGE_INACTIVE since */
	bool flushed; /* answered the current flush request */
	bool started; /* gpuspy started its bridge (loaded on attach): it answers a flush */
};

/* One attachment to a bridge: a file, in one process or (pid -1) in all. */
struct bridge_target {
	char *path;
	pid_t pid;
};

struct cupti_link {
	struct cupti_bpf *skel;
	struct trace_writer *w;
	bool quiet;
	struct bridge_target *targets; /* for the flush request */
	size_t ntargets, targets_cap;
	struct key_index ix_targets; /* (file key, pid) */
	struct bpf_link **links;
	size_t nlinks, links_cap;
	struct bridge_proc *procs;
	size_t nprocs, procs_cap;
	struct key_index ix_procs;
	uint64_t gaps;
};

int cupti_link_new(struct cupti_bpf *skel, struct trace_writer *w, bool quiet,
		   struct cupti_link **out)
{
	struct cupti_link *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return -ENOMEM;
	cl->skel = skel;
	cl->w = w;
	cl->quiet = quiet;
	*out = cl;
	return 0;
}

bool cupti_link_is_bridge(const char *host_path)
{
	const char *base = strrchr(host_path, '/');
	uint64_t delta;

	base = base ? base + 1 : host_path;
	return strstr(base, "gpuspy_cupti") &&
	       !elf_symbol_distance(host_path, BRIDGE_SEMAPHORE, BRIDGE_SEMAPHORE, &delta);
}

static int attach_usdt(struct cupti_link *cl, struct bpf_program *prog,
		       const struct bridge_target *t, const char *name)
{
	struct bpf_link *link =
	    bpf_program__attach_usdt(prog, t->pid, t->path, "gpuspy", name, NULL);
	struct bpf_link **slot;

	if (!link)
		return -errno;
	slot = array_grow((void **)&cl->links, &cl->nlinks, &cl->links_cap, sizeof(*slot));
	if (!slot) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	*slot = link;
	return 0;
}

int cupti_link_attach(struct cupti_link *cl, const char *host_path, uint64_t file_key, pid_t pid)
{
	struct bridge_target *t;
	size_t dummy;
	int err;

	if (key_index_find(&cl->ix_targets, file_key, (uint64_t)(int64_t)pid, &dummy))
		return 0;
	t = array_grow((void **)&cl->targets, &cl->ntargets, &cl->targets_cap, sizeof(*t));
	if (!t || key_index_put(&cl->ix_targets, file_key, (uint64_t)(int64_t)pid, 0))
		return -ENOMEM;
	t->pid = pid;
	t->path = strdup(host_path);
	if (!t->path)
		return -ENOMEM;
	err = attach_usdt(cl, cl->skel->progs.bridge_records, t, "records");
	if (err) {
		gs_warn("cannot attach to the CUPTI bridge %s: %s", host_path, strerror(-err));
		free(t->path);
		cl->ntargets--;
	}
	return err;
}

static struct bridge_proc *bridge_proc(struct cupti_link *cl, uint32_t pid)
{
	struct bridge_proc *p;
	size_t i;

	if (key_index_find(&cl->ix_procs, pid, 0, &i))
		return &cl->procs[i];
	p = array_grow((void **)&cl->procs, &cl->nprocs, &cl->procs_cap, sizeof(*p));
	if (!p || key_index_put(&cl->ix_procs, pid, 0, cl->nprocs - 1))
		return NULL;
	p->pid = pid;
	return p;
}

static void note_status(struct cupti_link *cl, struct bridge_proc *p,
			const struct gs_bridge_status *st)
{
	switch (st->state) {
	case GS_BRIDGE_ACTIVE:
		p->active = true;
		break;
	case GS_BRIDGE_INACTIVE:
		p->active = false;
		break;
	case GS_BRIDGE_FLUSHED:
		p->flushed = true;
		break;
	case GS_BRIDGE_CUPTI_BUSY:
	case GS_BRIDGE_CUPTI_ERROR:
		if (!cl->quiet)
			gs_warn("pid %u: %s", p->pid, st->message);
		break;
	default:
		break;
	}
}

/* The batch's records, each checked for its own size and type before it is written. */
static int write_records(struct cupti_link *cl, struct bridge_proc *p, const struct gs_gpu_batch *b)
{
	const unsigned char *at = b->records, *end = (const unsigned char *)b + b->hdr.size;
	union {
		struct gs_hdr hdr;
		unsigned char bytes[GS_GPU_BATCH_MAX];
	} rec;
	int err = 0;

	while (!err && at + sizeof(struct gs_hdr) <= end) {
		const struct gs_hdr *h = (const void *)at;

		if (h->size < sizeof(*h) || h->size % 8 || h->size > end - at)
			break; /* a malformed tail: nothing after it can be framed */
		memcpy(rec.bytes, at, h->size);
		at += h->size;
		if (rec.hdr.type < GS_REC_GPU_KERNEL || rec.hdr.type > GS_REC_GPU_OVERHEAD ||
		    !gs_record_valid(&rec.hdr))
			continue;
		rec.hdr.pid = b->hdr.pid;
		if (rec.hdr.type == GS_REC_BRIDGE_STATUS)
			note_status(cl, p, (const void *)&rec.hdr);
		err = trace_writer_append(cl->w, &rec.hdr);
	}
	return err;
}

int cupti_link_on_batch(struct cupti_link *cl, const struct gs_hdr *batch)
{
	const struct gs_gpu_batch *b = (const void *)batch;
	struct bridge_proc *p;

	if (batch->size < sizeof(*b))
		return 0;
	p = bridge_proc(cl, batch->pid);
	if (!p)
		return -ENOMEM;
	if (p->last_seq && b->seq > p->last_seq + 1)
		cl->gaps += b->seq - p->last_seq - 1;
	if (b->seq > p->last_seq)
		p->last_seq = b->seq;
	return write_records(cl, p, b);
}

int cupti_link_expect(struct cupti_link *cl, pid_t pid)
{
	struct bridge_proc *p = cl ? bridge_proc(cl, (uint32_t)pid) : NULL;

	if (!cl)
		return 0;
	if (!p)
		return -ENOMEM;
	p->started = true;
	return 0;
}

static bool all_flushed(const struct cupti_link *cl)
{
	for (size_t i = 0; i < cl->nprocs; i++) {
		const struct bridge_proc *p = &cl->procs[i];

		/* a process that exited has nothing more to send */
		if ((p->active || p->started) && !p->flushed && !kill((pid_t)p->pid, 0))
			return false;
	}
	return true;
}

void cupti_link_flush(struct cupti_link *cl, cupti_poll_fn poll, void *ctx, int timeout_ms)
{
	uint64_t deadline = gs_monotonic_ns() + (uint64_t)timeout_ms * 1000000ULL;

	if (!cl || !cl->ntargets)
		return;
	/* a bridge that turned on just before the stop: its ACTIVE status is still in the ring */
	poll(ctx, 0);
	for (size_t i = 0; i < cl->nprocs; i++)
		cl->procs[i].flushed = false;
	for (size_t i = 0; i < cl->ntargets; i++) {
		const struct bridge_target *t = &cl->targets[i];
		int err = attach_usdt(cl, cl->skel->progs.bridge_flushed, t, "flushed");

		/* a process that exited meanwhile has nothing more to say */
		if (err && !(t->pid > 0 && kill(t->pid, 0)))
			gs_warn("cannot ask the CUPTI bridge %s to flush: %s", t->path,
				strerror(-err));
	}
	gs_debug("waiting for %zu CUPTI bridge process(es) to flush", cl->nprocs);
	while (!all_flushed(cl) && gs_monotonic_ns() < deadline)
		poll(ctx, 20);
	if (!all_flushed(cl))
		gs_warn("a CUPTI bridge did not finish delivering within %d ms: its last GPU "
			"records may be missing",
			timeout_ms);
}

uint64_t cupti_link_gaps(const struct cupti_link *cl)
{
	return cl ? cl->gaps : 0;
}

void cupti_link_detach(struct cupti_link *cl)
{
	if (!cl)
		return;
	for (size_t i = 0; i < cl->nlinks; i++)
		bpf_link__destroy(cl->links[i]);
	cl->nlinks = 0;
}

void cupti_link_free(struct cupti_link *cl)
{
	if (!cl)
		return;
	cupti_link_detach(cl);
	for (size_t i = 0; i < cl->ntargets; i++)
		free(cl->targets[i].path);
	free(cl->targets);
	key_index_free(&cl->ix_targets);
	free(cl->links);
	free(cl->procs);
	key_index_free(&cl->ix_procs);
	free(cl);
}
