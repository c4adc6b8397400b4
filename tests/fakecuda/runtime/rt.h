/* Internal declarations of the fake CUDA runtime (libcudart.so.13).
 *
 * Like NVIDIA's runtime, it is a layer over the driver API: it dlopen()s
 * "libcuda.so.1", asks it for every entry point through cuGetProcAddress
 * (CUDA version 13000; once with the legacy-stream flag, once with the
 * per-thread-stream flag) and calls only those pointers.  Probes on both
 * layers therefore fire in the real order: cudaX() enter, cuY() enter/exit,
 * cudaX() exit.  NVIDIA's "internal" header mode makes cuda_runtime_api.h
 * declare both the plain and the _ptsz/_ptds entry points. */
#ifndef FAKECUDA_RT_H
#define FAKECUDA_RT_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_runtime_cbid.h>
#include <stddef.h>

#include "../fc_hooks.h"

#define RT_EXPORT	__attribute__((visibility("default")))
#define RT_CUDA_VERSION 13000

/* Driver entry points the runtime uses (one table per stream flavour). */
struct rt_driver {
	CUresult (*cuInit)(unsigned int);
	CUresult (*cuDriverGetVersion)(int *);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice);
	CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
	CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuCtxGetCurrent)(CUcontext *);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuLibraryLoadData)(CUlibrary *, const void *, CUjit_option *, void **,
				      unsigned int, CUlibraryOption *, void **, unsigned int);
	CUresult (*cuLibraryUnload)(CUlibrary);
	CUresult (*cuLibraryGetKernel)(CUkernel *, CUlibrary, const char *);
	CUresult (*cuKernelGetFunction)(CUfunction *, CUkernel);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int,
				   unsigned int, unsigned int, unsigned int, unsigned int, CUstream,
				   void **, void **);
	CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuMemAllocHost)(void **, size_t);
	CUresult (*cuMemFreeHost)(void *);
	CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned int);
	CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream);
	CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
	CUresult (*cuMemGetInfo)(size_t *, size_t *);
	CUresult (*cuMemcpy)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*cuStreamCreate)(CUstream *, unsigned int);
	CUresult (*cuStreamCreateWithPriority)(CUstream *, unsigned int, int);
	CUresult (*cuStreamDestroy)(CUstream);
	CUresult (*cuStreamSynchronize)(CUstream);
	CUresult (*cuStreamQuery)(CUstream);
	CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned int);
	CUresult (*cuStreamGetId)(CUstream, unsigned long long *);
	CUresult (*cuEventCreate)(CUevent *, unsigned int);
	CUresult (*cuEventDestroy)(CUevent);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventQuery)(CUevent);
	CUresult (*cuEventSynchronize)(CUevent);
	CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
};

/* rt_driver.c: NULL when libcuda.so.1 cannot be loaded. */
const struct rt_driver *rt_drv(int per_thread);
const struct fakecuda_hooks *rt_hooks(void);

/* rt_state.c: lazy driver/context initialisation and the last error. */
cudaError_t rt_from_cu(CUresult r);
/* cuInit + primary context current on this thread; cudaSuccess or error. */
cudaError_t rt_ctx(void);
cudaError_t rt_record(cudaError_t e); /* remember as last error */
int rt_current_device(void);
void rt_set_current_device(int dev);

/* rt_register.c: nvcc registrations. */
const char *rt_kernel_name(cudaKernel_t k);
const char *rt_host_fn_name(const void *host_fn);
cudaError_t rt_kernel_for_host_fn(const void *host_fn, cudaKernel_t *out);

/* rt_launch.c */
cudaError_t rt_launch(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t shared,
		      cudaStream_t s, int per_thread);

/* Trace a runtime entry point exactly like the driver traces its own. */
struct rt_frame {
	struct fc_api_frame f;
	int active;
};
void rt_api_begin(struct rt_frame *fr, uint32_t cbid, const char *name, const char *symbol);
cudaError_t rt_api_end(struct rt_frame *fr, cudaError_t e);

#define RT_API(fn, ver)                                                                            \
	struct rt_frame rt_frame_;                                                                 \
	rt_api_begin(&rt_frame_, CUPTI_RUNTIME_TRACE_CBID_##fn##_##ver, #fn, NULL)
#define RT_API_SYM(fn, ver, sym)                                                                   \
	struct rt_frame rt_frame_;                                                                 \
	rt_api_begin(&rt_frame_, CUPTI_RUNTIME_TRACE_CBID_##fn##_##ver, #fn, (sym))
/* Returns and records the error as the thread's last error. */
#define RT_RETURN(expr) return rt_api_end(&rt_frame_, rt_record(expr))
/* Returns without touching the last error (query-style calls). */
#define RT_RETURN_QUIET(expr) return rt_api_end(&rt_frame_, (expr))

/* nvcc's hidden entry points (declared in crt/host_runtime.h, which is C++
 * only, so repeated here with the same signatures). */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
			    const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
			    dim3 *bDim, dim3 *gDim, int *wSize);
char __cudaInitModule(void **fatCubinHandle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
				     struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
				       void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
			       size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
				    size_t sharedMem, cudaStream_t stream);

#endif
