/* The line each traced CUDA call prints, and wrappers that make the call and
 * print its line, so a program cannot make such a call and forget to say so.
 * A tracer's counts are compared with these lines exactly, failed calls
 * included, and tests/fakecuda/compare_cupti.py matches LAUNCH, MEMCPY and
 * MEMSET one for one with CUPTI's records (it ignores the other words):
 *   LAUNCH name=<mangled> grid=x,y,z block=x,y,z stream=<label> api=<function>
 *   LAUNCH_FAILED name=<mangled> error=<cudaError> grid=.. block=.. stream=.. api=..
 *   MEMCPY kind=<HtoD|DtoH|DtoD> bytes=<n> stream=<label> api=<function>
 *   MEMCPY_FAILED api=<function> bytes=<n> error=<cudaError>
 *   MEMSET bytes=<n> stream=<label> api=<function>
 *   MEMSET_FAILED api=<function> bytes=<n> error=<cudaError>
 *   ALLOC api=<function> bytes=<n> ok=<1|0>
 *   FREE api=<function> ok=<1|0>
 *   SYNC api=<function>
 * <function> is the exact exported name called.  A failed copy, memset or
 * launch gets its own word because the GPU (and CUPTI) never sees its work.
 * Every wrapper returns the call's error for the caller to check. */
#ifndef TARGETS_CUDA_CALLS_H
#define TARGETS_CUDA_CALLS_H

#include <cuda_runtime.h>
#include <stdio.h>

/* nvcc 13's <<<>>> stubs call this hidden runtime entry (nm -D shows it). */
#define LAUNCH_API "__cudaLaunchKernel"

static inline void print_launch(const char *name, dim3 g, dim3 b, const char *stream)
{
	printf("LAUNCH name=%s grid=%u,%u,%u block=%u,%u,%u stream=%s api=%s\n", name, g.x, g.y,
	       g.z, b.x, b.y, b.z, stream, LAUNCH_API);
}

/* <<<>>> returns nothing: the caller reads the error (cudaGetLastError) and
 * passes it here once it has checked it. */
static inline void print_launch_failed(const char *name, cudaError_t e, dim3 g, dim3 b,
				       const char *stream)
{
	printf("LAUNCH_FAILED name=%s error=%s grid=%u,%u,%u block=%u,%u,%u stream=%s api=%s\n",
	       name, cudaGetErrorName(e), g.x, g.y, g.z, b.x, b.y, b.z, stream, LAUNCH_API);
}

static inline const char *copy_kind_name(cudaMemcpyKind kind)
{
	switch (kind) {
	case cudaMemcpyHostToDevice:
		return "HtoD";
	case cudaMemcpyDeviceToHost:
		return "DtoH";
	case cudaMemcpyDeviceToDevice:
		return "DtoD";
	case cudaMemcpyHostToHost:
		return "HtoH";
	default:
		return "invalid";
	}
}

static inline void print_copy(const char *api, cudaMemcpyKind kind, size_t bytes,
			      const char *stream, cudaError_t e)
{
	if (e == cudaSuccess)
		printf("MEMCPY kind=%s bytes=%zu stream=%s api=%s\n", copy_kind_name(kind), bytes,
		       stream, api);
	else
		printf("MEMCPY_FAILED api=%s bytes=%zu error=%s\n", api, bytes,
		       cudaGetErrorName(e));
}

static inline void print_memset(const char *api, size_t bytes, const char *stream, cudaError_t e)
{
	if (e == cudaSuccess)
		printf("MEMSET bytes=%zu stream=%s api=%s\n", bytes, stream, api);
	else
		printf("MEMSET_FAILED api=%s bytes=%zu error=%s\n", api, bytes,
		       cudaGetErrorName(e));
}

static inline cudaError_t print_alloc(const char *api, size_t bytes, cudaError_t e)
{
	printf("ALLOC api=%s bytes=%zu ok=%d\n", api, bytes, e == cudaSuccess);
	return e;
}

static inline cudaError_t print_free(const char *api, cudaError_t e)
{
	printf("FREE api=%s ok=%d\n", api, e == cudaSuccess);
	return e;
}

static inline cudaError_t print_sync(const char *api, cudaError_t e)
{
	printf("SYNC api=%s\n", api);
	return e;
}

/* The casts pick the C API: cuda_runtime.h's C++ overloads of cudaMallocHost
 * (with flags) and cudaMallocAsync (with a pool) call other functions. */
template <class T> static inline cudaError_t alloc_device(T **p, size_t bytes)
{
	return print_alloc("cudaMalloc", bytes, cudaMalloc((void **)p, bytes));
}

template <class T> static inline cudaError_t alloc_host(T **p, size_t bytes)
{
	return print_alloc("cudaMallocHost", bytes, cudaMallocHost((void **)p, bytes));
}

template <class T> static inline cudaError_t alloc_async(T **p, size_t bytes, cudaStream_t s)
{
	return print_alloc("cudaMallocAsync", bytes, cudaMallocAsync((void **)p, bytes, s));
}

static inline cudaError_t free_device(void *p)
{
	return print_free("cudaFree", cudaFree(p));
}

static inline cudaError_t free_host(void *p)
{
	return print_free("cudaFreeHost", cudaFreeHost(p));
}

static inline cudaError_t free_async(void *p, cudaStream_t s)
{
	return print_free("cudaFreeAsync", cudaFreeAsync(p, s));
}

static inline cudaError_t copy_sync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
	cudaError_t e = cudaMemcpy(dst, src, bytes, kind);
	print_copy("cudaMemcpy", kind, bytes, "default", e);
	return e;
}

static inline cudaError_t copy_async(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
				     cudaStream_t s, const char *stream)
{
	cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, s);
	print_copy("cudaMemcpyAsync", kind, bytes, stream, e);
	return e;
}

static inline cudaError_t fill_sync(void *p, int value, size_t bytes)
{
	cudaError_t e = cudaMemset(p, value, bytes);
	print_memset("cudaMemset", bytes, "default", e);
	return e;
}

static inline cudaError_t fill_async(void *p, int value, size_t bytes, cudaStream_t s,
				     const char *stream)
{
	cudaError_t e = cudaMemsetAsync(p, value, bytes, s);
	print_memset("cudaMemsetAsync", bytes, stream, e);
	return e;
}

static inline cudaError_t sync_device(void)
{
	return print_sync("cudaDeviceSynchronize", cudaDeviceSynchronize());
}

static inline cudaError_t sync_stream(cudaStream_t s)
{
	return print_sync("cudaStreamSynchronize", cudaStreamSynchronize(s));
}

static inline cudaError_t sync_event(cudaEvent_t e)
{
	return print_sync("cudaEventSynchronize", cudaEventSynchronize(e));
}

static inline cudaError_t wait_event(cudaStream_t s, cudaEvent_t e)
{
	return print_sync("cudaStreamWaitEvent", cudaStreamWaitEvent(s, e, 0));
}

#endif
