/* Putting work on the simulated device and waiting for it.  Each function
 * validates like the driver, computes the work's place on the timeline under
 * the device lock, then reports it to CUPTI (without the lock) and, for
 * synchronising calls, really sleeps until the simulated completion time. */
#include "drv.h"

#include <string.h>

#define FC_MAX_DYNAMIC_SHARED 49152u
#define FC_NO_ID	      UINT32_MAX

static void work_init(struct fc_work *w, int kind, const struct CUstream_st *s)
{
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	w->queued_ns = fc_now_ns();
	w->device_id = 0;
	w->context_id = s ? s->ctx->id : 0;
	w->stream_id = s ? s->id : FC_NO_ID;
	w->event_id = FC_NO_ID;
	w->correlation_id = fc_current_correlation();
}

static int launch_config_ok(const struct fc_launch *l)
{
	static const unsigned int max_grid[3] = {2147483647u, 65535u, 65535u};
	static const unsigned int max_block[3] = {1024u, 1024u, 64u};
	unsigned long long threads = 1;
	for (int i = 0; i < 3; i++) {
		if (l->grid[i] == 0 || l->grid[i] > max_grid[i] || l->block[i] == 0 ||
		    l->block[i] > max_block[i])
			return 0;
		threads *= l->block[i];
	}
	return threads <= 1024 && l->shared <= FC_MAX_DYNAMIC_SHARED;
}

CUresult fc_submit_kernel(CUstream h, int ptsz, const struct fc_launch *l)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!l->func)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!launch_config_ok(l))
		return CUDA_ERROR_INVALID_VALUE;
	struct CUstream_st *s;
	struct fc_work w;
	fc_lock();
	r = fc_stream_resolve(ctx, h, ptsz, &s);
	if (r == CUDA_SUCCESS) {
		work_init(&w, FC_WORK_KERNEL, s);
		w.name = l->func->name;
		for (int i = 0; i < 3; i++) {
			w.grid[i] = (int32_t)l->grid[i];
			w.block[i] = (int32_t)l->block[i];
		}
		w.dynamic_shared = (int32_t)l->shared;
		w.async = 1;
		fc_timeline_enqueue(s, fc_kernel_duration_ns(w.name), &w.start_ns, &w.end_ns);
	}
	fc_unlock();
	if (r == CUDA_SUCCESS)
		fc_emit_work(&w);
	return r;
}

static int is_device_kind(int k)
{
	return k == FC_MEM_DEVICE || k == FC_MEM_MANAGED;
}

static int copy_kind(int dst, int src)
{
	if (is_device_kind(src))
		return is_device_kind(dst) ? FC_COPY_DTOD : FC_COPY_DTOH;
	return is_device_kind(dst) ? FC_COPY_HTOD : FC_COPY_HTOH;
}

/* expect_*: FC_MEM_DEVICE when the API names that side a device pointer,
 * FC_MEM_UNKNOWN when unified addressing decides (cuMemcpy/cuMemcpyAsync). */
CUresult fc_submit_copy(CUstream h, int ptsz, void *dst, const void *src, size_t bytes,
			int expect_dst, int expect_src, int async)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (bytes == 0)
		return CUDA_SUCCESS;
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	int dk = fc_mem_classify(dst, bytes), sk = fc_mem_classify(src, bytes);
	if (dk == FC_MEM_UNKNOWN || sk == FC_MEM_UNKNOWN ||
	    (expect_dst == FC_MEM_DEVICE && !is_device_kind(dk)) ||
	    (expect_src == FC_MEM_DEVICE && !is_device_kind(sk)))
		return CUDA_ERROR_INVALID_VALUE;
	struct CUstream_st *s;
	struct fc_work w;
	fc_lock();
	r = fc_stream_resolve(ctx, h, ptsz, &s);
	if (r == CUDA_SUCCESS) {
		work_init(&w, FC_WORK_MEMCPY, s);
		w.bytes = bytes;
		w.copy_kind = copy_kind(dk, sk);
		w.src_kind = sk;
		w.dst_kind = dk;
		w.async = async;
		/* Data moves in program order, at submission (see docs). */
		memmove(dst, src, bytes);
		fc_timeline_enqueue(s, fc_copy_duration_ns(w.copy_kind, bytes), &w.start_ns,
				    &w.end_ns);
	}
	fc_unlock();
	if (r != CUDA_SUCCESS)
		return r;
	fc_emit_work(&w);
	if (!async)
		fc_sleep_until(w.end_ns);
	return CUDA_SUCCESS;
}

static void fill(void *dst, unsigned int value, size_t elem_size, size_t count)
{
	if (elem_size == 1) {
		memset(dst, (int)(value & 0xff), count);
		return;
	}
	unsigned char *p = dst;
	for (size_t i = 0; i < count; i++)
		memcpy(p + i * elem_size, &value, elem_size); /* little-endian */
}

/* Memsets on device memory are asynchronous w.r.t. the host even in their
 * "synchronous" form, as documented for cuMemsetD8/cudaMemset. */
CUresult fc_submit_memset(CUstream h, int ptsz, void *dst, unsigned int value, size_t elem_size,
			  size_t count, int async)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	size_t bytes = elem_size * count;
	if (bytes == 0)
		return CUDA_SUCCESS;
	int dk = fc_mem_classify(dst, bytes);
	if (!dst || !is_device_kind(dk) || ((uintptr_t)dst % elem_size) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	struct CUstream_st *s;
	struct fc_work w;
	fc_lock();
	r = fc_stream_resolve(ctx, h, ptsz, &s);
	if (r == CUDA_SUCCESS) {
		work_init(&w, FC_WORK_MEMSET, s);
		w.bytes = bytes;
		w.memset_value = value;
		w.dst_kind = dk;
		w.async = async;
		fill(dst, value, elem_size, count);
		fc_timeline_enqueue(s, fc_memset_duration_ns(bytes), &w.start_ns, &w.end_ns);
	}
	fc_unlock();
	if (r == CUDA_SUCCESS)
		fc_emit_work(&w);
	return r;
}

/* Block until t, then report a Synchronization record covering the wait. */
static void wait_and_report(uint64_t t, int sync_kind, const struct CUstream_st *s,
			    uint32_t event_id, uint32_t ctx_id)
{
	struct fc_work w;
	work_init(&w, FC_WORK_SYNC, NULL);
	w.context_id = ctx_id;
	w.stream_id = s ? s->id : FC_NO_ID;
	w.event_id = event_id;
	w.sync_kind = sync_kind;
	w.start_ns = fc_now_ns();
	fc_sleep_until(t);
	w.end_ns = fc_now_ns();
	fc_emit_work(&w);
}

CUresult fc_sync_ctx(void)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	fc_lock();
	uint64_t t = fc_ctx_tail(ctx);
	fc_unlock();
	wait_and_report(t, FC_SYNC_CONTEXT, NULL, FC_NO_ID, ctx->id);
	return CUDA_SUCCESS;
}

CUresult fc_sync_stream(CUstream h, int ptsz)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	struct CUstream_st *s;
	uint64_t t = 0;
	fc_lock();
	r = fc_stream_resolve(ctx, h, ptsz, &s);
	if (r == CUDA_SUCCESS)
		t = fc_stream_done_ns(s);
	fc_unlock();
	if (r == CUDA_SUCCESS)
		wait_and_report(t, FC_SYNC_STREAM, s, FC_NO_ID, ctx->id);
	return r;
}

CUresult fc_query_stream(CUstream h, int ptsz)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	struct CUstream_st *s;
	fc_lock();
	r = fc_stream_resolve(ctx, h, ptsz, &s);
	if (r == CUDA_SUCCESS && fc_now_ns() < fc_stream_done_ns(s))
		r = CUDA_ERROR_NOT_READY;
	fc_unlock();
	return r;
}

CUresult fc_event_record(struct CUevent_st *e, CUstream h, int ptsz)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	struct CUstream_st *s;
	fc_lock();
	if (!fc_event_is_live(e))
		r = CUDA_ERROR_INVALID_HANDLE;
	else
		r = fc_stream_resolve(ctx, h, ptsz, &s);
	if (r == CUDA_SUCCESS) {
		uint64_t st;
		fc_timeline_enqueue(s, 0, &st, &e->ts_ns);
		e->recorded = 1;
	}
	fc_unlock();
	return r;
}

/* Never-recorded events count as complete, as documented for cuEventSynchronize. */
CUresult fc_event_sync(struct CUevent_st *e)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	fc_lock();
	int live = fc_event_is_live(e);
	uint64_t t = live && e->recorded ? e->ts_ns : 0;
	uint32_t id = live ? e->id : 0;
	fc_unlock();
	if (!live)
		return CUDA_ERROR_INVALID_HANDLE;
	wait_and_report(t, FC_SYNC_EVENT, NULL, id, ctx->id);
	return CUDA_SUCCESS;
}

CUresult fc_stream_wait_event(CUstream h, int ptsz, struct CUevent_st *e)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	struct CUstream_st *s;
	uint32_t id = 0;
	fc_lock();
	if (!fc_event_is_live(e))
		r = CUDA_ERROR_INVALID_HANDLE;
	else
		r = fc_stream_resolve(ctx, h, ptsz, &s);
	if (r == CUDA_SUCCESS) {
		if (e->recorded && e->ts_ns > s->tail_ns)
			s->tail_ns = e->ts_ns; /* later work on s starts after the event */
		id = e->id;
	}
	fc_unlock();
	if (r == CUDA_SUCCESS)
		wait_and_report(0, FC_SYNC_STREAM_WAIT_EVENT, s, id, ctx->id);
	return r;
}
