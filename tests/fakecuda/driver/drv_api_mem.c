/* Driver entry points: allocation, copies and memsets.  Each entry point is a
 * thin traced wrapper; the semantics live in drv_memory.c / drv_submit.c.
 * "_ptds"/"_ptsz" variants use the per-thread default stream for NULL. */
#include "drv.h"

#define DPTR(x) ((void *)(uintptr_t)(x))
#define DEV	FC_MEM_DEVICE
#define ANY	FC_MEM_UNKNOWN

static CUresult alloc_checked(CUdeviceptr *dptr, size_t bytes, int kind)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	void *p = NULL;
	r = fc_mem_alloc(bytes, kind, &p);
	if (r == CUDA_SUCCESS)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return r;
}

static CUresult free_checked(void *p, int kind)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	return r != CUDA_SUCCESS ? r : fc_mem_free(p, kind);
}

FC_EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	FC_API(cuMemAlloc_v2);
	FC_RETURN(alloc_checked(dptr, bytesize, FC_MEM_DEVICE));
}

FC_EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	FC_API(cuMemFree_v2);
	FC_RETURN(free_checked(DPTR(dptr), FC_MEM_DEVICE));
}

FC_EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	FC_API(cuMemAllocManaged);
	if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	FC_RETURN(alloc_checked(dptr, bytesize, FC_MEM_MANAGED));
}

FC_EXPORT CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	FC_API(cuMemAllocHost_v2);
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	FC_RETURN(r != CUDA_SUCCESS ? r : fc_mem_alloc(bytesize, FC_MEM_PINNED, pp));
}

FC_EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
	FC_API(cuMemFreeHost);
	FC_RETURN(free_checked(p, FC_MEM_PINNED));
}

/* Stream-ordered allocation: the simulator hands out memory at once; since
 * data moves in program order this is indistinguishable for valid programs. */
static CUresult alloc_async(CUdeviceptr *dptr, size_t bytes, CUstream h, int ptsz)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	struct CUstream_st *s;
	if (r == CUDA_SUCCESS) {
		fc_lock();
		r = fc_stream_resolve(ctx, h, ptsz, &s);
		fc_unlock();
	}
	return r != CUDA_SUCCESS ? r : alloc_checked(dptr, bytes, FC_MEM_DEVICE);
}

static CUresult free_async(CUdeviceptr dptr, CUstream h, int ptsz)
{
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	struct CUstream_st *s;
	if (r == CUDA_SUCCESS) {
		fc_lock();
		r = fc_stream_resolve(ctx, h, ptsz, &s);
		fc_unlock();
	}
	return r != CUDA_SUCCESS ? r : fc_mem_free(DPTR(dptr), FC_MEM_DEVICE);
}

FC_EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	FC_API(cuMemAllocAsync);
	FC_RETURN(alloc_async(dptr, bytesize, hStream, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
						CUstream hStream)
{
	FC_API(cuMemAllocAsync_ptsz);
	FC_RETURN(alloc_async(dptr, bytesize, hStream, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	FC_API(cuMemFreeAsync);
	FC_RETURN(free_async(dptr, hStream, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	FC_API(cuMemFreeAsync_ptsz);
	FC_RETURN(free_async(dptr, hStream, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	FC_API(cuMemGetInfo_v2);
	struct CUctx_st *ctx;
	CUresult r = fc_ctx_require(&ctx);
	if (r == CUDA_SUCCESS && (!free_bytes || !total))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) {
		*total = 80ull << 30;
		*free_bytes = *total; /* not accounted: host memory backs it */
	}
	FC_RETURN(r);
}

/* ---- synchronous copies (legacy / per-thread stream) -------------------- */

FC_EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	FC_API(cuMemcpyHtoD_v2);
	FC_RETURN(fc_submit_copy(NULL, 0, DPTR(dst), src, n, DEV, ANY, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
	FC_API(cuMemcpyHtoD_v2_ptds);
	FC_RETURN(fc_submit_copy(NULL, 1, DPTR(dst), src, n, DEV, ANY, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	FC_API(cuMemcpyDtoH_v2);
	FC_RETURN(fc_submit_copy(NULL, 0, dst, DPTR(src), n, ANY, DEV, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
	FC_API(cuMemcpyDtoH_v2_ptds);
	FC_RETURN(fc_submit_copy(NULL, 1, dst, DPTR(src), n, ANY, DEV, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	FC_API(cuMemcpyDtoD_v2);
	FC_RETURN(fc_submit_copy(NULL, 0, DPTR(dst), DPTR(src), n, DEV, DEV, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	FC_API(cuMemcpyDtoD_v2_ptds);
	FC_RETURN(fc_submit_copy(NULL, 1, DPTR(dst), DPTR(src), n, DEV, DEV, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	FC_API(cuMemcpy);
	FC_RETURN(fc_submit_copy(NULL, 0, DPTR(dst), DPTR(src), n, ANY, ANY, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	FC_API(cuMemcpy_ptds);
	FC_RETURN(fc_submit_copy(NULL, 1, DPTR(dst), DPTR(src), n, ANY, ANY, 0));
}

/* ---- asynchronous copies ------------------------------------------------ */

FC_EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
						CUstream h)
{
	FC_API(cuMemcpyHtoDAsync_v2);
	FC_RETURN(fc_submit_copy(h, 0, DPTR(dst), src, n, DEV, ANY, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n,
						     CUstream h)
{
	FC_API(cuMemcpyHtoDAsync_v2_ptsz);
	FC_RETURN(fc_submit_copy(h, 1, DPTR(dst), src, n, DEV, ANY, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
	FC_API(cuMemcpyDtoHAsync_v2);
	FC_RETURN(fc_submit_copy(h, 0, dst, DPTR(src), n, ANY, DEV, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n,
						     CUstream h)
{
	FC_API(cuMemcpyDtoHAsync_v2_ptsz);
	FC_RETURN(fc_submit_copy(h, 1, dst, DPTR(src), n, ANY, DEV, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n,
						CUstream h)
{
	FC_API(cuMemcpyDtoDAsync_v2);
	FC_RETURN(fc_submit_copy(h, 0, DPTR(dst), DPTR(src), n, DEV, DEV, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n,
						     CUstream h)
{
	FC_API(cuMemcpyDtoDAsync_v2_ptsz);
	FC_RETURN(fc_submit_copy(h, 1, DPTR(dst), DPTR(src), n, DEV, DEV, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
	FC_API(cuMemcpyAsync);
	FC_RETURN(fc_submit_copy(h, 0, DPTR(dst), DPTR(src), n, ANY, ANY, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n,
					      CUstream h)
{
	FC_API(cuMemcpyAsync_ptsz);
	FC_RETURN(fc_submit_copy(h, 1, DPTR(dst), DPTR(src), n, ANY, ANY, 1));
}

/* ---- memsets ------------------------------------------------------------ */

FC_EXPORT CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n)
{
	FC_API(cuMemsetD8_v2);
	FC_RETURN(fc_submit_memset(NULL, 0, DPTR(dst), uc, 1, n, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char uc, size_t n)
{
	FC_API(cuMemsetD8_v2_ptds);
	FC_RETURN(fc_submit_memset(NULL, 1, DPTR(dst), uc, 1, n, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr dst, unsigned short us, size_t n)
{
	FC_API(cuMemsetD16_v2);
	FC_RETURN(fc_submit_memset(NULL, 0, DPTR(dst), us, 2, n, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dst, unsigned int ui, size_t n)
{
	FC_API(cuMemsetD32_v2);
	FC_RETURN(fc_submit_memset(NULL, 0, DPTR(dst), ui, 4, n, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr dst, unsigned int ui, size_t n)
{
	FC_API(cuMemsetD32_v2_ptds);
	FC_RETURN(fc_submit_memset(NULL, 1, DPTR(dst), ui, 4, n, 0));
}

FC_EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream h)
{
	FC_API(cuMemsetD8Async);
	FC_RETURN(fc_submit_memset(h, 0, DPTR(dst), uc, 1, n, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char uc, size_t n,
						CUstream h)
{
	FC_API(cuMemsetD8Async_ptsz);
	FC_RETURN(fc_submit_memset(h, 1, DPTR(dst), uc, 1, n, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int ui, size_t n, CUstream h)
{
	FC_API(cuMemsetD32Async);
	FC_RETURN(fc_submit_memset(h, 0, DPTR(dst), ui, 4, n, 1));
}

FC_EXPORT CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int ui, size_t n,
						 CUstream h)
{
	FC_API(cuMemsetD32Async_ptsz);
	FC_RETURN(fc_submit_memset(h, 1, DPTR(dst), ui, 4, n, 1));
}
