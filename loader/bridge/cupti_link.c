// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cupti.skel.h"
#include "lib/array_grow.h"
#include "lib/clocks.h"
#include "lib/key_index.h"
#include "lib/messages.h"
#include "lib/pid_list.h"
#include "loader/bridge/cupti_link.h"
#include "loader/bridge/usdt_site.h"
#include "loader/proc/elf_symbols.h"
#include "loader/proc/proc_maps.h"
#include "loader/session/link_batch.h"
#include "loader/session/uprobe_multi.h"
#include "output/trace/trace_format.h"
#include "output/trace/trace_writer.h"

#define BRIDGE_SEMAPHORE "gpuspy_records_semaphore"
#define REAPERS		 4 /* threads detaching the probes of exited processes */

/* What gpuspy knows of one process's bridge. */
/* One library's batches in one process: the CUPTI bridge's or the PyTorch observer's. */
struct bridge_proc {
	uint32_t pid;
	uint32_t stream; /* GS_GPU_BATCH_STREAM_* */
	uint64_t last_seq;
	bool active;  /* said GS_BRIDGE_ACTIVE and not GS_BRIDGE_INACTIVE since */
	bool flushed; /* answered the current flush request */
	bool started; /* gpuspy started its bridge (loaded on attach): it answers a flush */
};

/* A probe of the bridge: a uprobe_multi link's fd, or a libbpf link (see struct reaper). */
struct probe_link {
	struct bpf_link *link;
	int fd; /* -1: none */
};

/* One attachment to a bridge: a file, in one process or (pid -1) in all. */
struct bridge_target {
	char *path;
	pid_t pid;
	uint64_t file_key;
	struct probe_link records; /* gpuspy:records, which turns the bridge on */
	struct probe_link paused;  /* gpuspy:kernels_paused, between --gpu-sample windows */
	struct probe_link calls;   /* gpuspy:call_records, record's (not the live views') */
};

/* The probe sites of one bridge file. */
struct bridge_site {
	struct usdt_site records, flushed;
	/* gpuspy:kernels_paused and gpuspy:call_records, where the file has them: only their
	 * semaphores are used */
	struct usdt_site paused, calls;
};

/*
 * Detaching a process's gpuspy:records probe waits for RCU grace periods in the kernel,
 * ~100-150 ms here, whoever closes it (even a process exiting with it open). The probes of
 * exited processes are therefore destroyed by threads of their own, not in the event loop.
 * A perf-event uprobe's detach also holds the kernel's event_mutex for that long, which every
 * perf-event uprobe attach needs: so the probe is a uprobe_multi link where the program allows
 * it (loaded for BPF_TRACE_UPROBE_MULTI), which attaches and detaches without it, and grace
 * periods of concurrent detaches overlap. libbpf links (a perf-event uprobe, or libbpf's USDT
 * support, which shares state in libbpf: the object's USDT spec ids) are detached one at a
 * time under `usdt_lock`, which every USDT attach takes too: more at once would only queue on
 * event_mutex, ahead of the next process's attach.
 */
struct reaper {
	pthread_mutex_t usdt_lock;
	pthread_mutex_t lock; /* the queue and `stop` */
	pthread_cond_t wake;
	pthread_t threads[REAPERS];
	size_t started;
	bool stop;
	struct probe_link *queue;
	size_t n, cap;
};

struct cupti_link {
	struct reaper reaper;
	struct cupti_bpf *skel;
	struct trace_writer *w;
	bool quiet;
	struct bridge_target *targets; /* for the flush request */
	size_t ntargets, targets_cap;
	struct key_index ix_targets; /* (file key, pid) */
	struct probe_link *links;    /* attached for their semaphores: flush requests, shapes */
	size_t nlinks, links_cap;
	struct bridge_proc *procs;
	size_t nprocs, procs_cap;
	struct key_index ix_procs;
	bool kernels_paused;	   /* cupti_link_pause_kernels() */
	bool live;		   /* cupti_link_set_live(): no per-call records asked for */
	struct bridge_site *sites; /* per bridge file */
	size_t nsites, sites_cap;
	struct key_index ix_sites; /* file key -> sites[] */
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
	pthread_mutex_init(&cl->reaper.usdt_lock, NULL);
	pthread_mutex_init(&cl->reaper.lock, NULL);
	pthread_cond_init(&cl->reaper.wake, NULL);
	*out = cl;
	return 0;
}

/* A probe handed to `batch` to detach, or (NULL) detached here and now; libbpf's USDT links
 * under `usdt_lock` (struct reaper). */
static void batch_probe(struct link_batch *batch, struct reaper *r, struct probe_link it)
{
	link_batch_add_fd(batch, it.fd);
	link_batch_add(batch, it.link, &r->usdt_lock);
}

static void *reap(void *arg)
{
	struct reaper *r = arg;

	for (;;) {
		struct probe_link it;

		pthread_mutex_lock(&r->lock);
		while (!r->n && !r->stop)
			pthread_cond_wait(&r->wake, &r->lock);
		if (!r->n) {
			pthread_mutex_unlock(&r->lock);
			return NULL;
		}
		it = r->queue[--r->n];
		pthread_mutex_unlock(&r->lock);
		batch_probe(NULL, r, it);
	}
}

/* The reaper threads, with every signal blocked: the main thread's stop signals must interrupt
 * its ring-buffer poll, and bridge_inject.c waits for SIGCHLD with sigtimedwait(). */
static void start_reapers(struct reaper *r)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (r->started < REAPERS && !pthread_create(&r->threads[r->started], NULL, reap, r))
		r->started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Hands a probe of an exited process to the reaper threads (started on first use); without
 * memory or a thread it is destroyed here. */
static void reap_later(struct reaper *r, struct probe_link link)
{
	struct probe_link *slot = NULL;

	if (!link.link && link.fd < 0)
		return;
	pthread_mutex_lock(&r->lock);
	if (!r->started)
		start_reapers(r);
	if (r->started)
		slot = array_grow((void **)&r->queue, &r->n, &r->cap, sizeof(*slot));
	if (slot) {
		*slot = link;
		pthread_cond_signal(&r->wake);
	}
	pthread_mutex_unlock(&r->lock);
	if (!slot)
		batch_probe(NULL, r, link);
}

/* Lets the reaper finish its queue and stop. */
static void reaper_stop(struct reaper *r)
{
	if (!r->started)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_broadcast(&r->wake);
	pthread_mutex_unlock(&r->lock);
	while (r->started)
		pthread_join(r->threads[--r->started], NULL);
	r->stop = false;
}

bool cupti_link_is_bridge(const char *host_path)
{
	uint64_t delta;

	return strstr(proc_maps_file_name(host_path), "gpuspy_cupti") &&
	       !elf_symbol_distance(host_path, BRIDGE_SEMAPHORE, BRIDGE_SEMAPHORE, &delta, NULL);
}

static struct bpf_link *attach_usdt_of(struct cupti_link *cl, struct bpf_program *prog, pid_t pid,
				       const char *path, const char *provider, const char *name)
{
	struct bpf_link *link;
	int err;

	pthread_mutex_lock(&cl->reaper.usdt_lock);
	link = bpf_program__attach_usdt(prog, pid, path, provider, name, NULL);
	err = errno;
	pthread_mutex_unlock(&cl->reaper.usdt_lock);
	errno = err;
	return link;
}

static struct bpf_link *attach_usdt(struct cupti_link *cl, struct bpf_program *prog,
				    const struct bridge_target *t, const char *name)
{
	return attach_usdt_of(cl, prog, t->pid, t->path, "gpuspy", name);
}

/* The bridge file's probe sites, read once per file. */
static const struct bridge_site *bridge_site(struct cupti_link *cl, const char *path,
					     uint64_t file_key)
{
	static const char *const names[] = {"records", "flushed", "kernels_paused", "call_records"};
	struct bridge_site *site;
	struct usdt_site found[4];
	size_t i;

	if (key_index_find(&cl->ix_sites, file_key, 0, &i))
		return &cl->sites[i];
	site = array_grow((void **)&cl->sites, &cl->nsites, &cl->sites_cap, sizeof(*site));
	if (!site || key_index_put(&cl->ix_sites, file_key, 0, cl->nsites - 1))
		return NULL;
	usdt_sites_find(path, "gpuspy", names, found, 4);
	site->records = found[0];
	site->flushed = found[1];
	site->paused = found[2];
	site->calls = found[3];
	return site;
}

/* Whether gpuspy:records passes its two arguments in registers, where bridge_records_regs
 * reads them. */
static bool records_in_regs(const struct usdt_site *records)
{
	return records->found && (!strcmp(records->args, "8@%rdi 8@%rsi") ||
				  !strcmp(records->args, "8@%rdi -8@%rsi"));
}

/* gpuspy:records in one process (or all): where the note puts its arguments in registers, a
 * uprobe_multi link or else a plain uprobe, which detach without libbpf's USDT state
 * (struct reaper); libbpf's USDT support otherwise. */
static int attach_records(struct cupti_link *cl, struct bridge_target *t, uint64_t file_key)
{
	const struct bridge_site *site = bridge_site(cl, t->path, file_key);
	struct bpf_program *regs = cl->skel->progs.bridge_records_regs;

	t->records = (struct probe_link){.fd = -1};
	if (site && records_in_regs(&site->records) &&
	    bpf_program__expected_attach_type(regs) ==
		(enum bpf_attach_type)GS_BPF_TRACE_UPROBE_MULTI) {
		t->records.fd =
		    uprobe_multi_attach_one(bpf_program__fd(regs), t->path, site->records.off,
					    site->records.sema, t->pid > 0 ? (uint32_t)t->pid : 0);
		return t->records.fd < 0 ? t->records.fd : 0;
	}
	if (site && records_in_regs(&site->records)) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .ref_ctr_offset = (size_t)site->records.sema);

		t->records.link = bpf_program__attach_uprobe_opts(regs, t->pid, t->path,
								  (size_t)site->records.off, &opts);
	} else {
		t->records.link = attach_usdt(cl, cl->skel->progs.bridge_records, t, "records");
	}
	return t->records.link ? 0 : -errno;
}

/* A probe attached for its semaphore alone: kept until detach. */
static int keep_link(struct cupti_link *cl, struct probe_link link)
{
	struct probe_link *slot;

	if (!link.link && link.fd < 0)
		return -errno;
	slot = array_grow((void **)&cl->links, &cl->nlinks, &cl->links_cap, sizeof(*slot));
	if (!slot) {
		batch_probe(NULL, &cl->reaper, link);
		return -ENOMEM;
	}
	*slot = link;
	return 0;
}

/* A probe at `site` in process `pid` (-1: all), attached for its semaphore alone: a
 * uprobe_multi link where the program allows it, which detaches without the kernel's
 * event_mutex; else libbpf's USDT attach with bridge_flushed, which does nothing (any program
 * raises the semaphore it is attached with). Neither fd nor link, errno set, on failure. */
static struct probe_link semaphore_probe(struct cupti_link *cl, const struct usdt_site *site,
					 pid_t pid, const char *path, const char *provider,
					 const char *name)
{
	struct bpf_program *multi = cl->skel->progs.bridge_semaphore;
	struct probe_link link = {.fd = -1};

	if (site && site->found && site->sema &&
	    bpf_program__expected_attach_type(multi) ==
		(enum bpf_attach_type)GS_BPF_TRACE_UPROBE_MULTI) {
		link.fd = uprobe_multi_attach_one(bpf_program__fd(multi), path, site->off,
						  site->sema, pid > 0 ? (uint32_t)pid : 0);
		if (link.fd >= 0)
			return link;
		link.fd = -1;
	}
	link.link = attach_usdt_of(cl, cl->skel->progs.bridge_flushed, pid, path, provider, name);
	return link;
}

/* A semaphore probe kept until detach. */
static int attach_semaphore(struct cupti_link *cl, const struct usdt_site *site, pid_t pid,
			    const char *path, const char *provider, const char *name)
{
	return keep_link(cl, semaphore_probe(cl, site, pid, path, provider, name));
}

/* The flush request's probe. */
static int attach_flushed(struct cupti_link *cl, const struct bridge_target *t)
{
	const struct bridge_site *site = bridge_site(cl, t->path, t->file_key);

	return attach_semaphore(cl, site ? &site->flushed : NULL, t->pid, t->path, "gpuspy",
				"flushed");
}

int cupti_link_want_shapes(struct cupti_link *cl, const char *host_path, pid_t pid)
{
	static const char *const names[] = {"shapes"};
	struct usdt_site site;

	usdt_sites_find(host_path, "gpuspy_torch", names, &site, 1);
	return attach_semaphore(cl, &site, pid, host_path, "gpuspy_torch", "shapes");
}

/* One target's gpuspy:kernels_paused, raised between --gpu-sample windows: the probe is never
 * fired, and switched twice a period (hence a uprobe_multi link where the kernel has them). A
 * bridge built before the probe existed has no such note: its kernels stay on, said with -v. */
static void pause_target(struct cupti_link *cl, struct bridge_target *t, bool paused)
{
	const struct bridge_site *site;

	if (!paused) {
		reap_later(&cl->reaper, t->paused);
		t->paused = (struct probe_link){.fd = -1};
		return;
	}
	if (t->paused.link || t->paused.fd >= 0)
		return;
	site = bridge_site(cl, t->path, t->file_key);
	t->paused = semaphore_probe(cl, site ? &site->paused : NULL, t->pid, t->path, "gpuspy",
				    "kernels_paused");
	if (!t->paused.link && t->paused.fd < 0)
		gs_debug("cannot pause the kernel records of the CUPTI bridge %s: %s", t->path,
			 strerror(errno));
}

/* record's gpuspy:call_records in one target, before its gate opens, so the bridge starts
 * with its per-call records on. A bridge built before the probe existed records them anyway. */
static void want_calls(struct cupti_link *cl, struct bridge_target *t)
{
	const struct bridge_site *site = bridge_site(cl, t->path, t->file_key);

	t->calls = (struct probe_link){.fd = -1};
	if (cl->live || !site || !site->calls.found)
		return;
	t->calls = semaphore_probe(cl, &site->calls, t->pid, t->path, "gpuspy", "call_records");
	if (!t->calls.link && t->calls.fd < 0)
		gs_warn("cannot ask the CUPTI bridge %s for its CUDA API records: %s", t->path,
			strerror(errno));
}

void cupti_link_set_live(struct cupti_link *cl)
{
	cl->live = true;
}

void cupti_link_pause_kernels(struct cupti_link *cl, bool paused)
{
	if (!cl || cl->kernels_paused == paused)
		return;
	cl->kernels_paused = paused;
	for (size_t i = 0; i < cl->ntargets; i++)
		pause_target(cl, &cl->targets[i], paused);
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
	t->file_key = file_key;
	t->paused = (struct probe_link){.fd = -1};
	t->path = strdup(host_path);
	if (!t->path)
		return -ENOMEM;
	/* paused before the gate opens, so a new bridge starts outside the window too */
	pause_target(cl, t, cl->kernels_paused);
	want_calls(cl, t);
	err = attach_records(cl, t, file_key);
	if (err) {
		gs_warn("cannot attach to the CUPTI bridge %s: %s", host_path, strerror(-err));
		reap_later(&cl->reaper, t->paused);
		reap_later(&cl->reaper, t->calls);
		free(t->path);
		cl->ntargets--;
	}
	return err;
}

static struct bridge_proc *bridge_proc(struct cupti_link *cl, uint32_t pid, uint32_t stream)
{
	struct bridge_proc *p;
	size_t i;

	if (key_index_find(&cl->ix_procs, pid, stream, &i))
		return &cl->procs[i];
	p = array_grow((void **)&cl->procs, &cl->nprocs, &cl->procs_cap, sizeof(*p));
	if (!p || key_index_put(&cl->ix_procs, pid, stream, cl->nprocs - 1))
		return NULL;
	p->pid = pid;
	p->stream = stream;
	return p;
}

static void note_status(struct cupti_link *cl, struct bridge_proc *p,
			const struct gs_bridge_status *st)
{
	switch (st->state) {
	case GS_BRIDGE_ACTIVE:
		/* scripts wait for this line: the operators are recorded from here on */
		if (!p->active && p->stream == GS_GPU_BATCH_STREAM_TORCH && !cl->quiet)
			fprintf(stderr, "gpuspy: pid %u: PyTorch operators recorded in-process\n",
				p->pid);
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
		if ((rec.hdr.type < GS_REC_GPU_KERNEL || rec.hdr.type > GS_REC_GPU_DEVICE) ||
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
	uint64_t seq = b->seq & ((1ull << GS_GPU_BATCH_STREAM_SHIFT) - 1);
	struct bridge_proc *p;

	if (batch->size < sizeof(*b))
		return 0;
	p = bridge_proc(cl, batch->pid, (uint32_t)(b->seq >> GS_GPU_BATCH_STREAM_SHIFT));
	if (!p)
		return -ENOMEM;
	if (p->last_seq && seq > p->last_seq + 1)
		cl->gaps += seq - p->last_seq - 1;
	if (seq > p->last_seq)
		p->last_seq = seq;
	return write_records(cl, p, b);
}

int cupti_link_expect(struct cupti_link *cl, pid_t pid, uint32_t stream)
{
	struct bridge_proc *p = cl ? bridge_proc(cl, (uint32_t)pid, stream) : NULL;

	if (!cl)
		return 0;
	if (!p)
		return -ENOMEM;
	p->started = true;
	return 0;
}

bool cupti_link_is_active(const struct cupti_link *cl, pid_t pid, uint32_t stream)
{
	size_t i;

	return cl && key_index_find(&cl->ix_procs, (uint32_t)pid, stream, &i) &&
	       cl->procs[i].active;
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
		int err = attach_flushed(cl, t);

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

void cupti_link_forget(struct cupti_link *cl, const struct pid_list *dead)
{
	struct key_index ix = {0};
	size_t n = 0;

	if (!cl)
		return;
	for (size_t i = 0; i < cl->ntargets; i++) {
		struct bridge_target *t = &cl->targets[i];

		if (t->pid > 0 && pid_list_has(dead, (uint32_t)t->pid)) {
			reap_later(&cl->reaper, t->records);
			reap_later(&cl->reaper, t->paused);
			reap_later(&cl->reaper, t->calls);
			free(t->path);
			continue;
		}
		cl->targets[n++] = *t;
	}
	cl->ntargets = n;
	/* an attachment that stays indexed is one a pid reused later would not get */
	if (key_index_drop_pids(&cl->ix_targets, dead, 2))
		gs_warn("out of memory: a new process that reuses an exited one's pid may not "
			"get GPU records");
	n = 0;
	for (size_t i = 0; i < cl->nprocs; i++)
		if (!pid_list_has(dead, cl->procs[i].pid) &&
		    key_index_put(&ix, cl->procs[i].pid, cl->procs[i].stream, n++)) {
			key_index_free(&ix);
			return; /* out of memory: they stay */
		}
	n = 0;
	for (size_t i = 0; i < cl->nprocs; i++)
		if (!pid_list_has(dead, cl->procs[i].pid))
			cl->procs[n++] = cl->procs[i];
	cl->nprocs = n;
	key_index_free(&cl->ix_procs);
	cl->ix_procs = ix;
}

size_t cupti_link_tracked(const struct cupti_link *cl)
{
	size_t n = 0;

	if (!cl)
		return 0;
	for (size_t i = 0; i < cl->ntargets; i++)
		n += cl->targets[i].pid > 0;
	return n + cl->nprocs;
}

uint64_t cupti_link_gaps(const struct cupti_link *cl)
{
	return cl ? cl->gaps : 0;
}

void cupti_link_detach(struct cupti_link *cl, struct link_batch *batch)
{
	if (!cl)
		return;
	/* the probes of processes that exited, queued before */
	reaper_stop(&cl->reaper);
	for (size_t i = 0; i < cl->ntargets; i++) {
		struct probe_link *probes[] = {&cl->targets[i].records, &cl->targets[i].paused,
					       &cl->targets[i].calls};

		for (size_t k = 0; k < 3; k++) {
			batch_probe(batch, &cl->reaper, *probes[k]);
			*probes[k] = (struct probe_link){.fd = -1};
		}
	}
	for (size_t i = 0; i < cl->nlinks; i++)
		batch_probe(batch, &cl->reaper, cl->links[i]);
	cl->nlinks = 0;
}

void cupti_link_free(struct cupti_link *cl)
{
	struct link_batch batch;

	if (!cl)
		return;
	link_batch_init(&batch);
	cupti_link_detach(cl, &batch);
	link_batch_free(&batch);
	for (size_t i = 0; i < cl->ntargets; i++)
		free(cl->targets[i].path);
	free(cl->targets);
	key_index_free(&cl->ix_targets);
	free(cl->links);
	free(cl->procs);
	key_index_free(&cl->ix_procs);
	free(cl->reaper.queue);
	free(cl->sites);
	key_index_free(&cl->ix_sites);
	pthread_mutex_destroy(&cl->reaper.usdt_lock);
	pthread_mutex_destroy(&cl->reaper.lock);
	pthread_cond_destroy(&cl->reaper.wake);
	free(cl);
}
