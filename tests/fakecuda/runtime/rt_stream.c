/* Runtime streams and events: thin mappings onto the driver.  cudaStream_t
 * and cudaEvent_t are the driver's CUstream / CUevent. */
#include "rt.h"

/* cudaErrorNotReady from a query is a status, not an error: the real runtime
 * does not make it the thread's last error. */
#define RT_RETURN_STATUS(expr)                                                                     \
	do {                                                                                       \
		cudaError_t st_ = (expr);                                                          \
		if (st_ == cudaErrorNotReady)                                                      \
			RT_RETURN_QUIET(st_);                                                      \
		RT_RETURN(st_);                                                                    \
	} while (0)

static cudaError_t with_ctx(int pt, const struct rt_driver **d)
{
	cudaError_t e = rt_ctx();
	*d = rt_drv(pt);
	return e;
}

static cudaError_t create(cudaStream_t *s, unsigned int flags, int priority, int with_prio)
{
	const struct rt_driver *d;
	cudaError_t e = with_ctx(0, &d);
	if (e != cudaSuccess)
		return e;
	if (!s)
		return cudaErrorInvalidValue;
	CUstream *cs = (CUstream *)s;
	return rt_from_cu(with_prio ? d->cuStreamCreateWithPriority(cs, flags, priority)
				    : d->cuStreamCreate(cs, flags));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream)
{
	RT_API(cudaStreamCreate, v3020);
	RT_RETURN(create(pStream, cudaStreamDefault, 0, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	RT_API(cudaStreamCreateWithFlags, v5000);
	RT_RETURN(create(pStream, flags, 0, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t *pStream,
							     unsigned int flags, int priority)
{
	RT_API(cudaStreamCreateWithPriority, v5050);
	RT_RETURN(create(pStream, flags, priority, 1));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream)
{
	RT_API(cudaStreamDestroy, v5050);
	const struct rt_driver *d;
	cudaError_t e = with_ctx(0, &d);
	RT_RETURN(e != cudaSuccess ? e : rt_from_cu(d->cuStreamDestroy((CUstream)stream)));
}

static cudaError_t stream_sync(cudaStream_t s, int pt)
{
	const struct rt_driver *d;
	cudaError_t e = with_ctx(pt, &d);
	return e != cudaSuccess ? e : rt_from_cu(d->cuStreamSynchronize((CUstream)s));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream)
{
	RT_API(cudaStreamSynchronize, v3020);
	RT_RETURN(stream_sync(stream, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	RT_API(cudaStreamSynchronize_ptsz, v7000);
	RT_RETURN(stream_sync(stream, 1));
}

static cudaError_t stream_query(cudaStream_t s, int pt)
{
	const struct rt_driver *d;
	cudaError_t e = with_ctx(pt, &d);
	return e != cudaSuccess ? e : rt_from_cu(d->cuStreamQuery((CUstream)s));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream)
{
	RT_API(cudaStreamQuery, v3020);
	RT_RETURN_STATUS(stream_query(stream, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t stream)
{
	RT_API(cudaStreamQuery_ptsz, v7000);
	RT_RETURN_STATUS(stream_query(stream, 1));
}

static cudaError_t wait_event(cudaStream_t s, cudaEvent_t ev, unsigned int flags, int pt)
{
	const struct rt_driver *d;
	cudaError_t e = with_ctx(pt, &d);
	return e != cudaSuccess ? e
				: rt_from_cu(d->cuStreamWaitEvent((CUstream)s, (CUevent)ev, flags));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
						    unsigned int flags)
{
	RT_API(cudaStreamWaitEvent, v3020);
	RT_RETURN(wait_event(stream, event, flags, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
							 unsigned int flags)
{
	RT_API(cudaStreamWaitEvent_ptsz, v7000);
	RT_RETURN(wait_event(stream, event, flags, 1));
}

static cudaError_t stream_id(cudaStream_t s, unsigned long long *id, int pt)
{
	const struct rt_driver *d;
	cudaError_t e = with_ctx(pt, &d);
	return e != cudaSuccess ? e : rt_from_cu(d->cuStreamGetId((CUstream)s, id));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
	RT_API(cudaStreamGetId, v12000);
	RT_RETURN(stream_id(hStream, streamId, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamGetId_ptsz(cudaStream_t hStream,
						     unsigned long long *streamId)
{
	RT_API(cudaStreamGetId_ptsz, v12000);
	RT_RETURN(stream_id(hStream, streamId, 1));
}

/* ---- events ------------------------------------------------------------------ */

RT_EXPORT cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *event)
{
	RT_API(cudaEventCreate, v3020);
	const struct rt_driver *d;
	cudaError_t e = with_ctx(0, &d);
	if (e == cudaSuccess && !event)
		e = cudaErrorInvalidValue;
	RT_RETURN(e != cudaSuccess ? e : rt_from_cu(d->cuEventCreate((CUevent *)event, 0)));
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	RT_API(cudaEventCreateWithFlags, v3020);
	const struct rt_driver *d;
	cudaError_t e = with_ctx(0, &d);
	if (e == cudaSuccess && !event)
		e = cudaErrorInvalidValue;
	RT_RETURN(e != cudaSuccess ? e : rt_from_cu(d->cuEventCreate((CUevent *)event, flags)));
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event)
{
	RT_API(cudaEventDestroy, v3020);
	const struct rt_driver *d;
	cudaError_t e = with_ctx(0, &d);
	RT_RETURN(e != cudaSuccess ? e : rt_from_cu(d->cuEventDestroy((CUevent)event)));
}

static cudaError_t record(cudaEvent_t ev, cudaStream_t s, int pt)
{
	const struct rt_driver *d;
	cudaError_t e = with_ctx(pt, &d);
	return e != cudaSuccess ? e : rt_from_cu(d->cuEventRecord((CUevent)ev, (CUstream)s));
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	RT_API(cudaEventRecord, v3020);
	RT_RETURN(record(event, stream, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	RT_API(cudaEventRecord_ptsz, v7000);
	RT_RETURN(record(event, stream, 1));
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event)
{
	RT_API(cudaEventSynchronize, v3020);
	const struct rt_driver *d;
	cudaError_t e = with_ctx(0, &d);
	RT_RETURN(e != cudaSuccess ? e : rt_from_cu(d->cuEventSynchronize((CUevent)event)));
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event)
{
	RT_API(cudaEventQuery, v3020);
	const struct rt_driver *d;
	cudaError_t e = with_ctx(0, &d);
	RT_RETURN_STATUS(e != cudaSuccess ? e : rt_from_cu(d->cuEventQuery((CUevent)event)));
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	RT_API(cudaEventElapsedTime, v12080);
	const struct rt_driver *d;
	cudaError_t e = with_ctx(0, &d);
	RT_RETURN(e != cudaSuccess
		      ? e
		      : rt_from_cu(d->cuEventElapsedTime(ms, (CUevent)start, (CUevent)end)));
}
