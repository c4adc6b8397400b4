/* Driver entry points: streams, events, context synchronisation and error
 * strings. */
#include "drv.h"

#include <stddef.h>

FC_EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
	FC_API(cuCtxSynchronize);
	FC_RETURN(fc_sync_ctx());
}

static CUresult stream_create(CUstream *ph, unsigned int flags)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!ph)
		return CUDA_ERROR_INVALID_VALUE;
	fc_lock();
	r = fc_stream_create(ctx, flags, ph);
	fc_unlock();
	return r;
}

FC_EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	FC_API(cuStreamCreate);
	FC_RETURN(stream_create(phStream, Flags));
}

/* Priorities do not change the simulated schedule (infinite capacity). */
FC_EXPORT CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
						      int priority)
{
	FC_API(cuStreamCreateWithPriority);
	(void)priority;
	FC_RETURN(stream_create(phStream, flags));
}

FC_EXPORT CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
	FC_API(cuStreamDestroy_v2);
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r == CUDA_SUCCESS) {
		fc_lock();
		r = fc_stream_destroy(hStream);
		fc_unlock();
	}
	FC_RETURN(r);
}

FC_EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	FC_API(cuStreamSynchronize);
	FC_RETURN(fc_sync_stream(hStream, 0));
}

FC_EXPORT CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
	FC_API(cuStreamSynchronize_ptsz);
	FC_RETURN(fc_sync_stream(hStream, 1));
}

FC_EXPORT CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
	FC_API(cuStreamQuery);
	FC_RETURN(fc_query_stream(hStream, 0));
}

FC_EXPORT CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream)
{
	FC_API(cuStreamQuery_ptsz);
	FC_RETURN(fc_query_stream(hStream, 1));
}

FC_EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	FC_API(cuStreamWaitEvent);
	(void)Flags;
	FC_RETURN(fc_stream_wait_event(hStream, 0, hEvent));
}

FC_EXPORT CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent,
						  unsigned int Flags)
{
	FC_API(cuStreamWaitEvent_ptsz);
	(void)Flags;
	FC_RETURN(fc_stream_wait_event(hStream, 1, hEvent));
}

static CUresult stream_id(CUstream h, int ptsz, unsigned long long *id)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!id)
		return CUDA_ERROR_INVALID_VALUE;
	struct CUstream_st *s;
	fc_lock();
	r = fc_stream_resolve(ctx, h, ptsz, &s);
	if (r == CUDA_SUCCESS)
		*id = s->id;
	fc_unlock();
	return r;
}

FC_EXPORT CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
	FC_API(cuStreamGetId);
	FC_RETURN(stream_id(hStream, 0, streamId));
}

FC_EXPORT CUresult CUDAAPI cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId)
{
	FC_API(cuStreamGetId_ptsz);
	FC_RETURN(stream_id(hStream, 1, streamId));
}

/* ---- events -------------------------------------------------------------- */

FC_EXPORT CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	FC_API(cuEventCreate);
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	unsigned int known =
	    CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
	if (r == CUDA_SUCCESS && (!phEvent || (Flags & ~known)))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) {
		fc_lock();
		*phEvent = fc_event_new(Flags);
		fc_unlock();
		if (!*phEvent)
			r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	FC_RETURN(r);
}

FC_EXPORT CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
	FC_API(cuEventDestroy_v2);
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r == CUDA_SUCCESS) {
		fc_lock();
		if (fc_event_is_live(hEvent))
			fc_event_free(hEvent);
		else
			r = CUDA_ERROR_INVALID_HANDLE;
		fc_unlock();
	}
	FC_RETURN(r);
}

FC_EXPORT CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
	FC_API(cuEventRecord);
	FC_RETURN(fc_event_record(hEvent, hStream, 0));
}

FC_EXPORT CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	FC_API(cuEventRecord_ptsz);
	FC_RETURN(fc_event_record(hEvent, hStream, 1));
}

FC_EXPORT CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream,
						  unsigned int flags)
{
	FC_API(cuEventRecordWithFlags);
	(void)flags;
	FC_RETURN(fc_event_record(hEvent, hStream, 0));
}

FC_EXPORT CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream,
						       unsigned int flags)
{
	FC_API(cuEventRecordWithFlags_ptsz);
	(void)flags;
	FC_RETURN(fc_event_record(hEvent, hStream, 1));
}

FC_EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	FC_API(cuEventSynchronize);
	FC_RETURN(fc_event_sync(hEvent));
}

FC_EXPORT CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
	FC_API(cuEventQuery);
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r == CUDA_SUCCESS) {
		fc_lock();
		if (!fc_event_is_live(hEvent))
			r = CUDA_ERROR_INVALID_HANDLE;
		else if (hEvent->recorded && fc_now_ns() < hEvent->ts_ns)
			r = CUDA_ERROR_NOT_READY;
		fc_unlock();
	}
	FC_RETURN(r);
}

static CUresult elapsed(float *ms, CUevent a, CUevent b)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	fc_lock();
	uint64_t now = fc_now_ns();
	if (!fc_event_is_live(a) || !fc_event_is_live(b) || !a->recorded || !b->recorded ||
	    ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (now < a->ts_ns || now < b->ts_ns)
		r = CUDA_ERROR_NOT_READY;
	else
		*ms = (float)((double)((int64_t)(b->ts_ns - a->ts_ns)) / 1e6);
	fc_unlock();
	return r;
}

FC_EXPORT CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	FC_API(cuEventElapsedTime);
	FC_RETURN(elapsed(pMilliseconds, hStart, hEnd));
}

FC_EXPORT CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	FC_API(cuEventElapsedTime_v2);
	FC_RETURN(elapsed(pMilliseconds, hStart, hEnd));
}

/* ---- error strings ------------------------------------------------------- */

#define FC_ERRORS(X)                                                                               \
	X(CUDA_SUCCESS, "no error")                                                                \
	X(CUDA_ERROR_INVALID_VALUE, "invalid argument")                                            \
	X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                               \
	X(CUDA_ERROR_NOT_INITIALIZED, "initialization error")                                      \
	X(CUDA_ERROR_DEINITIALIZED, "driver shutting down")                                        \
	X(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")                              \
	X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                                     \
	X(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid")                              \
	X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                                    \
	X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                                    \
	X(CUDA_ERROR_NOT_FOUND, "named symbol not found")                                          \
	X(CUDA_ERROR_NOT_READY, "device not ready")                                                \
	X(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure")                                  \
	X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")

static const char *error_text(CUresult e, int want_name)
{
#define FC_ERR_CASE(code, text)                                                                    \
	case code:                                                                                 \
		return want_name ? #code : text;
	switch (e) {
		FC_ERRORS(FC_ERR_CASE)
	default:
		return NULL;
	}
#undef FC_ERR_CASE
}

FC_EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
	FC_API(cuGetErrorString);
	if (!pStr)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	*pStr = error_text(error, 0);
	FC_RETURN(*pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

FC_EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
	FC_API(cuGetErrorName);
	if (!pStr)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	*pStr = error_text(error, 1);
	FC_RETURN(*pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}
