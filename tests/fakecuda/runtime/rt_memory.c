/* Runtime memory API: allocation, copies and memsets mapped onto the driver
 * calls NVIDIA's runtime uses for each cudaMemcpyKind. */
#include "rt.h"

#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

/* Every call here needs the context first; keep that in one place. */
#define RT_NEED_CTX()                                                                              \
	do {                                                                                       \
		cudaError_t ctx_e_ = rt_ctx();                                                     \
		if (ctx_e_ != cudaSuccess)                                                         \
			RT_RETURN(ctx_e_);                                                         \
	} while (0)

RT_EXPORT cudaError_t CUDARTAPI cudaMalloc(void **devPtr, size_t size)
{
	RT_API(cudaMalloc, v3020);
	if (!devPtr)
		RT_RETURN(cudaErrorInvalidValue);
	RT_NEED_CTX();
	*devPtr = NULL;
	if (size == 0) /* documented: succeeds, returns NULL */
		RT_RETURN(cudaSuccess);
	RT_RETURN(rt_from_cu(rt_drv(0)->cuMemAlloc((CUdeviceptr *)devPtr, size)));
}

RT_EXPORT cudaError_t CUDARTAPI cudaFree(void *devPtr)
{
	RT_API(cudaFree, v3020);
	RT_NEED_CTX();
	if (!devPtr) /* documented no-op */
		RT_RETURN(cudaSuccess);
	RT_RETURN(rt_from_cu(rt_drv(0)->cuMemFree(DP(devPtr))));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMallocHost(void **ptr, size_t size)
{
	RT_API(cudaMallocHost, v3020);
	if (!ptr)
		RT_RETURN(cudaErrorInvalidValue);
	RT_NEED_CTX();
	RT_RETURN(rt_from_cu(rt_drv(0)->cuMemAllocHost(ptr, size)));
}

RT_EXPORT cudaError_t CUDARTAPI cudaFreeHost(void *ptr)
{
	RT_API(cudaFreeHost, v3020);
	RT_NEED_CTX();
	if (!ptr)
		RT_RETURN(cudaSuccess);
	RT_RETURN(rt_from_cu(rt_drv(0)->cuMemFreeHost(ptr)));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	RT_API(cudaMallocManaged, v6000);
	if (!devPtr)
		RT_RETURN(cudaErrorInvalidValue);
	RT_NEED_CTX();
	RT_RETURN(rt_from_cu(rt_drv(0)->cuMemAllocManaged((CUdeviceptr *)devPtr, size, flags)));
}

static cudaError_t malloc_async(void **p, size_t size, cudaStream_t s, int pt)
{
	if (!p)
		return cudaErrorInvalidValue;
	cudaError_t e = rt_ctx();
	return e != cudaSuccess
		   ? e
		   : rt_from_cu(rt_drv(pt)->cuMemAllocAsync((CUdeviceptr *)p, size, (CUstream)s));
}

static cudaError_t free_async(void *p, cudaStream_t s, int pt)
{
	cudaError_t e = rt_ctx();
	return e != cudaSuccess ? e : rt_from_cu(rt_drv(pt)->cuMemFreeAsync(DP(p), (CUstream)s));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	RT_API(cudaMallocAsync, v11020);
	RT_RETURN(malloc_async(devPtr, size, hStream, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void **devPtr, size_t size,
						     cudaStream_t hStream)
{
	RT_API(cudaMallocAsync_ptsz, v11020);
	RT_RETURN(malloc_async(devPtr, size, hStream, 1));
}

RT_EXPORT cudaError_t CUDARTAPI cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	RT_API(cudaFreeAsync, v11020);
	RT_RETURN(free_async(devPtr, hStream, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
	RT_API(cudaFreeAsync_ptsz, v11020);
	RT_RETURN(free_async(devPtr, hStream, 1));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
	RT_API(cudaMemGetInfo, v3020);
	RT_NEED_CTX();
	RT_RETURN(rt_from_cu(rt_drv(0)->cuMemGetInfo(free_bytes, total)));
}

/* ---- copies ---------------------------------------------------------------- */

static cudaError_t copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, int pt)
{
	cudaError_t e = rt_ctx();
	if (e != cudaSuccess)
		return e;
	const struct rt_driver *d = rt_drv(pt);
	switch (kind) {
	case cudaMemcpyHostToDevice:
		return rt_from_cu(d->cuMemcpyHtoD(DP(dst), src, n));
	case cudaMemcpyDeviceToHost:
		return rt_from_cu(d->cuMemcpyDtoH(dst, DP(src), n));
	case cudaMemcpyDeviceToDevice:
		return rt_from_cu(d->cuMemcpyDtoD(DP(dst), DP(src), n));
	case cudaMemcpyHostToHost:
	case cudaMemcpyDefault:
		return rt_from_cu(d->cuMemcpy(DP(dst), DP(src), n));
	default:
		return cudaErrorInvalidMemcpyDirection;
	}
}

static cudaError_t copy_async(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
			      cudaStream_t st, int pt)
{
	cudaError_t e = rt_ctx();
	if (e != cudaSuccess)
		return e;
	const struct rt_driver *d = rt_drv(pt);
	CUstream s = (CUstream)st;
	switch (kind) {
	case cudaMemcpyHostToDevice:
		return rt_from_cu(d->cuMemcpyHtoDAsync(DP(dst), src, n, s));
	case cudaMemcpyDeviceToHost:
		return rt_from_cu(d->cuMemcpyDtoHAsync(dst, DP(src), n, s));
	case cudaMemcpyDeviceToDevice:
		return rt_from_cu(d->cuMemcpyDtoDAsync(DP(dst), DP(src), n, s));
	case cudaMemcpyHostToHost:
	case cudaMemcpyDefault:
		return rt_from_cu(d->cuMemcpyAsync(DP(dst), DP(src), n, s));
	default:
		return cudaErrorInvalidMemcpyDirection;
	}
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t count,
					   enum cudaMemcpyKind kind)
{
	RT_API(cudaMemcpy, v3020);
	RT_RETURN(copy(dst, src, count, kind, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy_ptds(void *dst, const void *src, size_t count,
						enum cudaMemcpyKind kind)
{
	RT_API(cudaMemcpy_ptds, v7000);
	RT_RETURN(copy(dst, src, count, kind, 1));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t count,
						enum cudaMemcpyKind kind, cudaStream_t stream)
{
	RT_API(cudaMemcpyAsync, v3020);
	RT_RETURN(copy_async(dst, src, count, kind, stream, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
						     enum cudaMemcpyKind kind, cudaStream_t stream)
{
	RT_API(cudaMemcpyAsync_ptsz, v7000);
	RT_RETURN(copy_async(dst, src, count, kind, stream, 1));
}

/* ---- memsets --------------------------------------------------------------- */

static cudaError_t memset_(void *p, int value, size_t n, cudaStream_t s, int async, int pt)
{
	cudaError_t e = rt_ctx();
	if (e != cudaSuccess)
		return e;
	const struct rt_driver *d = rt_drv(pt);
	unsigned char v = (unsigned char)value;
	return rt_from_cu(async ? d->cuMemsetD8Async(DP(p), v, n, (CUstream)s)
				: d->cuMemsetD8(DP(p), v, n));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset(void *devPtr, int value, size_t count)
{
	RT_API(cudaMemset, v3020);
	RT_RETURN(memset_(devPtr, value, count, NULL, 0, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	RT_API(cudaMemset_ptds, v7000);
	RT_RETURN(memset_(devPtr, value, count, NULL, 0, 1));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemsetAsync(void *devPtr, int value, size_t count,
						cudaStream_t stream)
{
	RT_API(cudaMemsetAsync, v3020);
	RT_RETURN(memset_(devPtr, value, count, stream, 1, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
						     cudaStream_t stream)
{
	RT_API(cudaMemsetAsync_ptsz, v7000);
	RT_RETURN(memset_(devPtr, value, count, stream, 1, 1));
}
