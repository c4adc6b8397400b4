// SPDX-License-Identifier: MIT
/*
 * NVTX ranges and marks -> GS_REC_NVTX records, on the application's threads; cheap because
 * NVTX calls sit in training loops: no CUPTI call, no syscall, one short lock per record.
 *
 * Push/pop: a stack per thread (all NVTX domains share it: a domain's pop ends the thread's
 * innermost range). The depth is counted even while no recorder is attached, so a range
 * pushed before the gate opened and popped after is recognised and dropped (its start was
 * not seen), and the ranges inside it keep their true depth. Frames exist only once a
 * recorder attached: until then a push is one thread-local increment.
 * Start/end: ranges by id in a small hash table, since they may end on another thread; ids
 * are handed out whether or not anyone records, so they stay unique.
 * A range is recorded only if it started and ended in the same session (gate opening).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "nvtx_ranges.h"

#define MAX_FRAMES	 256   /* deeper pushes are counted, not recorded */
#define START_BUCKETS	 256   /* power of two */
#define MAX_OPEN_STARTED 65536 /* start/end ranges open at once, beyond which they are lost */

struct frame {
	uint64_t session; /* 0: not recorded */
	uint64_t ts;
	char *name;
};

struct thread_stack {
	uint32_t depth, cap;
	struct frame *frames;
};

struct started {
	uint64_t id, session, ts;
	uint32_t tid;
	struct started *next;
	char name[]; /* NUL-terminated */
};

static _Atomic uint64_t g_session; /* 0: not recording */
static _Atomic uint64_t g_next_id = 1;
static pthread_mutex_t g_started_lock = PTHREAD_MUTEX_INITIALIZER;
static struct started *g_started[START_BUCKETS];
static size_t g_nstarted;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;
static _Thread_local struct thread_stack t_stack;

static void emit(uint32_t kind, uint32_t thread, uint64_t ts, uint64_t dur, uint32_t depth,
		 uint64_t id, const char *name)
{
	union bridge_rec r;
	struct gs_nvtx *n = (struct gs_nvtx *)&r;

	n->dur_ns = dur;
	n->kind = kind;
	n->depth = depth;
	n->id = id;
	bridge_rec_finish(&r, GS_REC_NVTX, sizeof(*n), thread, ts, name ? name : "");
	batch_add(&r.hdr);
}

uint64_t nvtx_session(void)
{
	return g_session;
}

static void free_stack(void *p)
{
	struct thread_stack *s = p;

	for (uint32_t i = 0; i < s->cap; i++)
		free(s->frames[i].name);
	free(s->frames);
	s->frames = NULL;
	s->cap = 0;
}

static void make_key(void)
{
	pthread_key_create(&g_key, free_stack);
}

/* Room for frame `at` (the thread's first recorded push allocates); 0 when there is none. */
static int reserve(struct thread_stack *s, uint32_t at)
{
	uint32_t cap = s->cap ? s->cap * 2 : 16;
	struct frame *f;

	if (at < s->cap)
		return 1;
	if (at >= MAX_FRAMES)
		return 0;
	while (cap <= at)
		cap *= 2;
	if (cap > MAX_FRAMES)
		cap = MAX_FRAMES;
	f = realloc(s->frames, cap * sizeof(*f));
	if (!f)
		return 0;
	/* new frames read as "not recorded": their pushes happened while not recording */
	memset(f + s->cap, 0, (cap - s->cap) * sizeof(*f));
	if (!s->frames) {
		pthread_once(&g_key_once, make_key);
		pthread_setspecific(g_key, s);
	}
	s->frames = f;
	s->cap = cap;
	return 1;
}

int nvtx_push(uint64_t session, const char *name)
{
	struct thread_stack *s = &t_stack;
	uint32_t depth = s->depth++;
	struct frame *f;

	if (!session) {
		if (depth < s->cap)
			s->frames[depth].session = 0;
		return (int)depth;
	}
	if (!reserve(s, depth)) {
		status_add_lost(1);
		return (int)depth;
	}
	f = &s->frames[depth];
	free(f->name); /* a frame left behind by an earlier session */
	f->name = strndup(name ? name : "", GS_GPU_NAME_MAX - 1);
	f->session = f->name ? session : 0;
	f->ts = bridge_now_ns();
	if (!f->name)
		status_add_lost(1);
	return (int)depth;
}

int nvtx_pop(void)
{
	struct thread_stack *s = &t_stack;
	uint64_t now, session;
	struct frame *f;

	if (!s->depth)
		return -1; /* more pops than pushes */
	s->depth--;
	if (s->depth >= s->cap)
		return (int)s->depth;
	f = &s->frames[s->depth];
	session = g_session;
	if (f->session && f->session == session) {
		now = bridge_now_ns();
		emit(GS_NVTX_PUSH_POP, bridge_gettid(), f->ts, now - f->ts, s->depth, 0, f->name);
	}
	free(f->name);
	f->name = NULL;
	f->session = 0;
	return (int)s->depth;
}

uint64_t nvtx_start(uint64_t session, const char *name)
{
	uint64_t id = g_next_id++;
	size_t len = name ? strnlen(name, GS_GPU_NAME_MAX - 1) : 0;
	struct started *st, **b;

	if (!session)
		return id;
	st = malloc(sizeof(*st) + len + 1);
	if (!st) {
		status_add_lost(1);
		return id;
	}
	st->id = id;
	st->session = session;
	st->tid = bridge_gettid();
	memcpy(st->name, name ? name : "", len);
	st->name[len] = '\0';
	pthread_mutex_lock(&g_started_lock);
	if (g_nstarted >= MAX_OPEN_STARTED) {
		pthread_mutex_unlock(&g_started_lock);
		free(st);
		status_add_lost(1);
		return id;
	}
	b = &g_started[id & (START_BUCKETS - 1)];
	st->next = *b;
	*b = st;
	g_nstarted++;
	st->ts = bridge_now_ns();
	pthread_mutex_unlock(&g_started_lock);
	return id;
}

void nvtx_end(uint64_t id)
{
	uint64_t now = bridge_now_ns();
	struct started *st = NULL, **p;

	if (!g_session)
		return; /* nothing is open: nvtx_close() forgot them all */
	pthread_mutex_lock(&g_started_lock);
	for (p = &g_started[id & (START_BUCKETS - 1)]; *p; p = &(*p)->next) {
		if ((*p)->id == id) {
			st = *p;
			*p = st->next;
			g_nstarted--;
			break;
		}
	}
	pthread_mutex_unlock(&g_started_lock);
	if (!st)
		return; /* started before the recorder attached, or ended twice */
	if (st->session == g_session)
		emit(GS_NVTX_START_END, st->tid, st->ts, now - st->ts, 0, id, st->name);
	free(st);
}

void nvtx_mark(uint64_t session, const char *name)
{
	if (session)
		emit(GS_NVTX_MARK, bridge_gettid(), bridge_now_ns(), 0, 0, 0, name);
}

void nvtx_open(uint64_t session)
{
	g_session = session;
}

void nvtx_close(void)
{
	g_session = 0;
	pthread_mutex_lock(&g_started_lock);
	for (size_t i = 0; i < START_BUCKETS; i++) {
		while (g_started[i]) {
			struct started *st = g_started[i];

			g_started[i] = st->next;
			free(st);
		}
	}
	g_nstarted = 0;
	pthread_mutex_unlock(&g_started_lock);
}

void nvtx_reset_child(void)
{
	g_session = 0;
	pthread_mutex_init(&g_started_lock, NULL);
}
