/* The simulated device: one global lock, one FIFO per stream on a virtual
 * timeline.  A stream is represented only by the completion time of the last
 * work put on it (tail_ns): new work starts at max(now, dependencies) and
 * pushes the tail.  Dependencies follow CUDA's stream semantics:
 *  - a stream waits for its own earlier work (FIFO);
 *  - the legacy NULL stream waits for all blocking streams of its context and
 *    blocking streams wait for the legacy stream; CU_STREAM_NON_BLOCKING
 *    streams do not synchronise with it;
 *  - different streams otherwise overlap freely (infinite device capacity). */
#include "drv.h"

#include <stdlib.h>

static pthread_mutex_t g_device_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUstream_st *g_streams;  /* live streams */
static struct CUevent_st *g_events;    /* live events */
static uint32_t g_next_stream_id = 13; /* CUPTI numbers user streams >= 13 */
static uint32_t g_next_legacy_id = 7;  /* ... and the NULL stream 7 */
static uint32_t g_next_event_id = 1;

struct per_thread_stream {
	struct CUctx_st *ctx;
	struct CUstream_st *stream;
};
static _Thread_local struct per_thread_stream t_pts;

void fc_lock(void)
{
	pthread_mutex_lock(&g_device_lock);
}
void fc_unlock(void)
{
	pthread_mutex_unlock(&g_device_lock);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static struct CUstream_st *stream_new(struct CUctx_st *ctx, unsigned int flags, int legacy,
				      int per_thread)
{
	struct CUstream_st *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->id = legacy ? g_next_legacy_id++ : g_next_stream_id++;
	s->flags = flags;
	s->is_legacy = legacy;
	s->is_per_thread = per_thread;
	s->ctx = ctx;
	s->next = g_streams;
	g_streams = s;
	return s;
}

struct CUstream_st *fc_legacy_stream_new(struct CUctx_st *ctx)
{
	return stream_new(ctx, 0, 1, 0);
}

static int stream_is_live(const struct CUstream_st *s)
{
	for (struct CUstream_st *x = g_streams; x; x = x->next)
		if (x == s)
			return 1;
	return 0;
}

CUresult fc_stream_resolve(struct CUctx_st *ctx, CUstream h, int ptsz, struct CUstream_st **out)
{
	if (h == CU_STREAM_LEGACY || (h == NULL && !ptsz)) {
		*out = ctx->legacy;
		return CUDA_SUCCESS;
	}
	if (h == CU_STREAM_PER_THREAD || h == NULL) {
		if (t_pts.ctx != ctx || !stream_is_live(t_pts.stream)) {
			t_pts.ctx = ctx;
			t_pts.stream = stream_new(ctx, 0, 0, 1);
		}
		*out = t_pts.stream;
		return t_pts.stream ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (!stream_is_live(h))
		return CUDA_ERROR_INVALID_HANDLE;
	if (h->ctx != ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	*out = h;
	return CUDA_SUCCESS;
}

CUresult fc_stream_create(struct CUctx_st *ctx, unsigned int flags, struct CUstream_st **out)
{
	if (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	*out = stream_new(ctx, flags, 0, 0);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static void unlink_stream(struct CUstream_st *s)
{
	for (struct CUstream_st **pp = &g_streams; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			free(s);
			return;
		}
}

/* Destroying a stream does not cancel its work: the context's tail already
 * covers it, so cuCtxSynchronize still waits for it, as on a real GPU. */
CUresult fc_stream_destroy(struct CUstream_st *s)
{
	if (!s || s->is_legacy || s->is_per_thread || !stream_is_live(s))
		return CUDA_ERROR_INVALID_HANDLE;
	unlink_stream(s);
	return CUDA_SUCCESS;
}

void fc_streams_drop_ctx(struct CUctx_st *ctx)
{
	struct CUstream_st **pp = &g_streams;
	while (*pp) {
		struct CUstream_st *s = *pp;
		if (s->ctx == ctx) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

static uint64_t ready_time(const struct CUstream_st *s)
{
	uint64_t t = s->tail_ns;
	if (s->is_legacy) {
		for (struct CUstream_st *x = g_streams; x; x = x->next)
			if (x->ctx == s->ctx && !(x->flags & CU_STREAM_NON_BLOCKING))
				t = max_u64(t, x->tail_ns);
	} else if (!(s->flags & CU_STREAM_NON_BLOCKING) && s->ctx->legacy) {
		t = max_u64(t, s->ctx->legacy->tail_ns);
	}
	return t;
}

void fc_timeline_enqueue(struct CUstream_st *s, uint64_t duration, uint64_t *start, uint64_t *end)
{
	*start = max_u64(fc_now_ns(), ready_time(s));
	*end = *start + duration;
	s->tail_ns = *end;
	s->ctx->tail_ns = max_u64(s->ctx->tail_ns, *end);
}

uint64_t fc_ctx_tail(struct CUctx_st *ctx)
{
	return ctx->tail_ns;
}

/* When everything a sync on s must wait for is done.  The legacy stream is a
 * barrier over the blocking streams, so syncing it waits for them too. */
uint64_t fc_stream_done_ns(const struct CUstream_st *s)
{
	return s->is_legacy ? ready_time(s) : s->tail_ns;
}

int fc_event_is_live(struct CUevent_st *e)
{
	for (struct CUevent_st *x = g_events; x; x = x->next)
		if (x == e)
			return 1;
	return 0;
}

struct CUevent_st *fc_event_new(unsigned int flags)
{
	struct CUevent_st *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->id = g_next_event_id++;
	e->flags = flags;
	e->next = g_events;
	g_events = e;
	return e;
}

void fc_event_free(struct CUevent_st *e)
{
	for (struct CUevent_st **pp = &g_events; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			free(e);
			return;
		}
}
