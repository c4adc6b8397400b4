// SPDX-License-Identifier: MIT
/*
 * The observer's sender: its per-thread rings (torch_ops.c) converted into GS_REC_TORCH_OP
 * records, each name sent once per recording as a GS_REC_TORCH_NAME before its first use, and
 * batched through batch.c, so that an operator costs its thread two ring writes and nothing
 * more: converting, naming and the one USDT trap per 16 KiB batch happen here, in the
 * control thread, every 20 ms.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "bridge.h"
#include "torch_send.h"

#define POLL_NS	  20000000L /* as the CUPTI bridge's control thread */
#define NAME_BITS 65536	    /* torch_ops.c's NAMES_MAX */
#define CHUNK	  256	    /* ring records read at a time */

_Static_assert(GPUSPY_TORCH_SHAPES_TEXT_MAX < GS_GPU_NAME_MAX, "a shapes text is never cut");

static pthread_mutex_t g_send_lock = PTHREAD_MUTEX_INITIALIZER; /* g_sent, conversion */
static uint64_t g_sent[NAME_BITS / 64]; /* names already sent in this recording */
static pthread_once_t g_thread_once = PTHREAD_ONCE_INIT;
static atomic_int g_thread_ok;

typedef void (*emit_fn)(const struct gs_hdr *rec, void *arg);

/* Lock held. A GS_REC_TORCH_NAME for id unless sent in this recording. */
static void send_name(uint32_t id, const struct gpuspy_torch_op *op, emit_fn emit, void *arg)
{
	union bridge_rec r;
	struct gs_torch_name *n = (struct gs_torch_name *)&r;
	const char *text;

	if (!id || id >= NAME_BITS || (g_sent[id / 64] >> (id % 64) & 1))
		return;
	text = gpuspy_torch_ops_name(id);
	if (!text)
		return;
	n->name = id;
	n->pad = 0;
	bridge_rec_finish(&r, GS_REC_TORCH_NAME, sizeof(*n), op->tid, op->ts, text);
	emit(&r.hdr, arg);
	g_sent[id / 64] |= 1ull << (id % 64);
}

/* Lock held. The records of one ring record: its name and its input shapes' text first if
 * not sent yet (they share one id space), then itself. */
static void convert(const struct gpuspy_torch_op *op, emit_fn emit, void *arg)
{
	union bridge_rec r;
	struct gs_torch_op *o = (struct gs_torch_op *)&r;

	send_name(op->name_id, op, emit, arg);
	send_name(op->shapes, op, emit, arg);
	memset(o, 0, sizeof(*o));
	o->seq_nr = op->seq_nr;
	o->name = op->name_id;
	o->shapes = op->shapes;
	o->fwd_tid = op->fwd_tid;
	o->scope = op->scope;
	bridge_rec_finish(&r, GS_REC_TORCH_OP, sizeof(*o), op->tid, op->ts, NULL);
	o->hdr.flags = (op->kind == GPUSPY_TORCH_OP_END ? GS_TORCH_OP_END : 0) |
		       (op->flags & GPUSPY_TORCH_OP_ASYNC ? GS_TORCH_OP_ASYNC : 0);
	emit(&r.hdr, arg);
}

static void emit_batch(const struct gs_hdr *rec, void *arg)
{
	(void)arg;
	batch_add(rec);
}

/* Everything in the rings into the batch (sent as it fills), then the rest sent. */
static void send_pending(void)
{
	struct gpuspy_torch_op ops[CHUNK];
	size_t n, i;

	pthread_mutex_lock(&g_send_lock);
	do {
		n = gpuspy_torch_ops_read(ops, CHUNK);
		for (i = 0; i < n; i++)
			convert(&ops[i], emit_batch, NULL);
	} while (n == CHUNK);
	pthread_mutex_unlock(&g_send_lock);
	batch_send();
}

static void discard_pending(void)
{
	struct gpuspy_torch_op ops[CHUNK];

	while (gpuspy_torch_ops_read(ops, CHUNK) == CHUNK)
		;
}

static void new_recording(void)
{
	pthread_mutex_lock(&g_send_lock);
	memset(g_sent, 0, sizeof(g_sent));
	pthread_mutex_unlock(&g_send_lock);
}

struct out_buf {
	unsigned char *p;
	size_t used, cap;
};

static void emit_buf(const struct gs_hdr *rec, void *arg)
{
	struct out_buf *o = arg;

	/* convert_pending() reads only as many ring records as surely fit */
	memcpy(o->p + o->used, rec, rec->size);
	o->used += rec->size;
}

size_t gpuspy_torch_ops_convert(void *out, size_t cap, int new_session)
{
	/* at most a name and a shapes text (each cut at GS_GPU_NAME_MAX) and an operator record
	 * per ring record */
	const size_t worst =
	    2 * (sizeof(struct gs_torch_name) + GS_GPU_NAME_MAX + 8) + sizeof(struct gs_torch_op);
	struct out_buf o = {.p = out, .cap = cap};
	struct gpuspy_torch_op ops[CHUNK];
	size_t n, i, room;

	if (new_session)
		new_recording();
	pthread_mutex_lock(&g_send_lock);
	for (;;) {
		room = (o.cap - o.used) / worst;
		if (!room)
			break;
		n = gpuspy_torch_ops_read(ops, room < CHUNK ? room : CHUNK);
		for (i = 0; i < n; i++)
			convert(&ops[i], emit_buf, &o);
		if (!n)
			break;
	}
	pthread_mutex_unlock(&g_send_lock);
	return o.used;
}

static void *control(void *arg)
{
	const struct timespec period = {0, POLL_NS};
	int raised_before = 0, open = 0, flush_before = 0, shapes = 0;
	char msg[256];

	(void)arg;
	for (;;) {
		int raised = usdt_recorder_ready(), flush;

		/* the kernel raises the semaphore a moment before it writes the probe's
		 * breakpoint: act on it once the breakpoint is there, and up at two polls in a
		 * row, as the CUPTI bridge does */
		if (raised && raised_before && !open) {
			open = 1;
			discard_pending();
			new_recording();
			batch_discard();
			/* shapes are decided here, for the whole recording: gpuspy attaches
			 * gpuspy_torch:shapes before gpuspy:records (docs/TORCH_OBSERVER.md) */
			shapes = torch_usdt_shapes_requested();
			if (gpuspy_torch_ops_set_shapes(shapes))
				snprintf(msg, sizeof(msg),
					 "PyTorch operators: in-process observer on, "
					 "without input shapes: %s",
					 torch_ops_shapes_why());
			else
				snprintf(msg, sizeof(msg),
					 "PyTorch operators: in-process observer on%s",
					 shapes ? ", with input shapes" : "");
			gpuspy_torch_ops_enable();
			status_emit(GS_BRIDGE_ACTIVE, 0, "%s", msg);
		} else if (!raised && open) {
			open = 0;
			gpuspy_torch_ops_disable();
			discard_pending();
			batch_discard();
		}
		raised_before = raised;
		if (open)
			send_pending();
		flush = usdt_flush_requested();
		if (flush && !flush_before) {
			union bridge_rec r;

			if (open)
				send_pending();
			status_make(&r, GS_BRIDGE_FLUSHED, 0, "PyTorch operators delivered");
			usdt_fire_flushed(batch_add_send(&r.hdr));
		}
		flush_before = flush;
		nanosleep(&period, NULL);
	}
	return NULL;
}

/* A process ending while a recorder is attached (a launched command that finishes): recording
 * off, what the rings hold delivered, INACTIVE last, as the CUPTI bridge does at exit. Runs
 * before libtorch's static destructors (registered after libtorch was loaded), and calls
 * nothing of libtorch's. */
static void at_exit(void)
{
	union bridge_rec r;

	if (!atomic_load(&g_thread_ok) || !usdt_recorder_attached())
		return;
	gpuspy_torch_ops_set_recording(0);
	send_pending();
	status_make(&r, GS_BRIDGE_INACTIVE, 0, "PyTorch operators: process exit, all delivered");
	batch_add_send(&r.hdr);
}

static void child_after_fork(void)
{
	/* the control thread is not in the child: nobody would read what it records */
	torch_ops_after_fork_child();
	pthread_mutex_init(&g_send_lock, NULL);
	batch_reset_child();
	bridge_forget_ids();
	atomic_store(&g_thread_ok, 0);
}

static void start_thread(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;

	sigfillset(&all);
	if (pthread_attr_init(&attr))
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* the thread must never run a signal handler of the application */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (!pthread_create(&t, &attr, control, NULL)) {
		pthread_setname_np(t, "gpuspy-torch");
		pthread_atfork(NULL, NULL, child_after_fork);
		atexit(at_exit);
		atomic_store(&g_thread_ok, 1);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

int gpuspy_torch_ops_start_gate(void)
{
	pthread_once(&g_thread_once, start_thread);
	return atomic_load(&g_thread_ok) ? 0 : -1;
}

void gpuspy_torch_ops_load_late(const struct gpuspy_torch_syms *syms, int *result, char *why,
				size_t why_len)
{
	int r = -1;

	if (!gpuspy_torch_ops_init(syms, why, why_len))
		r = gpuspy_torch_ops_start_gate() ? -2 : 1;
	if (result)
		*result = r;
}
