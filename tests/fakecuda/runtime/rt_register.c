/* What nvcc-generated host code calls: fatbinary and kernel registration
 * (run from static constructors, before main), the <<<>>> call
 * configuration stack, and host stub -> CUkernel resolution.
 *
 * __cudaRegisterFunction maps each host stub address to the mangled device
 * name (e.g. _Z11axpy_kernelPfPKffi); launches resolve that name in a
 * CUlibrary loaded lazily from the fatbinary (CUDA_MODULE_LOADING=LAZY
 * behaviour), so the driver and CUPTI see the real mangled kernel name.
 * Registration itself is not traced: no tool can be subscribed that early
 * (injection happens at cuInit). */
#include "rt.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define RT_MAX_CALL_CONFIGS 16

struct rt_fatbin {
	void *handle;	   /* &handle is the void** nvcc keeps */
	const void *image; /* nvcc's __fatBinC_Wrapper_t */
	CUlibrary lib;
	struct rt_fatbin *next;
};

struct rt_func {
	const void *host_fn;
	const char *device_name;
	struct rt_fatbin *fb;
	CUkernel kernel;
	struct rt_func *next;
};

struct call_config {
	dim3 grid, block;
	size_t shared;
	cudaStream_t stream;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_fatbin *g_fatbins;
static struct rt_func *g_funcs;
static _Thread_local struct call_config t_configs[RT_MAX_CALL_CONFIGS];
static _Thread_local int t_nconfigs;

static struct rt_fatbin *fatbin_of(void **handle)
{
	return (struct rt_fatbin *)(void *)handle; /* handle is the 1st member */
}

RT_EXPORT void **CUDARTAPI __cudaRegisterFatBinary(void *fatCubin)
{
	struct rt_fatbin *fb = calloc(1, sizeof(*fb));
	if (!fb)
		return NULL;
	fb->image = fatCubin;
	pthread_mutex_lock(&g_lock);
	fb->next = g_fatbins;
	g_fatbins = fb;
	pthread_mutex_unlock(&g_lock);
	return &fb->handle;
}

RT_EXPORT void CUDARTAPI __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
	(void)fatCubinHandle; /* loading is lazy, see above */
}

RT_EXPORT void CUDARTAPI __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
						char *deviceFun, const char *deviceName,
						int thread_limit, uint3 *tid, uint3 *bid,
						dim3 *bDim, dim3 *gDim, int *wSize)
{
	(void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim;
	(void)wSize;
	if (!fatCubinHandle || !hostFun || !deviceName)
		return;
	struct rt_func *f = calloc(1, sizeof(*f));
	if (!f)
		return;
	f->host_fn = hostFun;
	f->device_name = deviceName;
	f->fb = fatbin_of(fatCubinHandle);
	pthread_mutex_lock(&g_lock);
	f->next = g_funcs;
	g_funcs = f;
	pthread_mutex_unlock(&g_lock);
}

/* Runs from atexit: drop the registrations of this fatbinary. */
RT_EXPORT void CUDARTAPI __cudaUnregisterFatBinary(void **fatCubinHandle)
{
	struct rt_fatbin *fb = fatbin_of(fatCubinHandle);
	CUlibrary lib = NULL;
	pthread_mutex_lock(&g_lock);
	for (struct rt_func **pp = &g_funcs; *pp;) {
		struct rt_func *f = *pp;
		if (f->fb == fb) {
			*pp = f->next;
			free(f);
		} else {
			pp = &f->next;
		}
	}
	for (struct rt_fatbin **pp = &g_fatbins; *pp; pp = &(*pp)->next)
		if (*pp == fb) {
			*pp = fb->next;
			lib = fb->lib;
			free(fb);
			break;
		}
	pthread_mutex_unlock(&g_lock);
	if (lib && rt_drv(0))
		rt_drv(0)->cuLibraryUnload(lib);
}

/* g_lock held. */
static cudaError_t load_library(struct rt_fatbin *fb)
{
	if (fb->lib)
		return cudaSuccess;
	cudaError_t e = rt_ctx();
	if (e != cudaSuccess)
		return e;
	return rt_from_cu(
	    rt_drv(0)->cuLibraryLoadData(&fb->lib, fb->image, NULL, NULL, 0, NULL, NULL, 0));
}

RT_EXPORT char CUDARTAPI __cudaInitModule(void **fatCubinHandle)
{
	RT_API(__cudaInitModule, v13000);
	pthread_mutex_lock(&g_lock);
	cudaError_t e = load_library(fatbin_of(fatCubinHandle));
	pthread_mutex_unlock(&g_lock);
	rt_api_end(&rt_frame_, rt_record(e));
	return e == cudaSuccess;
}

cudaError_t rt_kernel_for_host_fn(const void *host_fn, cudaKernel_t *out)
{
	cudaError_t e = cudaErrorInvalidDeviceFunction;
	pthread_mutex_lock(&g_lock);
	for (struct rt_func *f = g_funcs; f; f = f->next) {
		if (f->host_fn != host_fn)
			continue;
		e = f->kernel ? cudaSuccess : load_library(f->fb);
		if (e == cudaSuccess && !f->kernel)
			e = rt_from_cu(
			    rt_drv(0)->cuLibraryGetKernel(&f->kernel, f->fb->lib, f->device_name));
		if (e == cudaSuccess)
			*out = (cudaKernel_t)f->kernel;
		break;
	}
	pthread_mutex_unlock(&g_lock);
	return e;
}

const char *rt_kernel_name(cudaKernel_t k)
{
	const char *name = NULL;
	pthread_mutex_lock(&g_lock);
	for (struct rt_func *f = g_funcs; f && !name; f = f->next)
		if (k && (cudaKernel_t)f->kernel == k)
			name = f->device_name;
	pthread_mutex_unlock(&g_lock);
	return name;
}

const char *rt_host_fn_name(const void *host_fn)
{
	const char *name = NULL;
	pthread_mutex_lock(&g_lock);
	for (struct rt_func *f = g_funcs; f && !name; f = f->next)
		if (f->host_fn == host_fn)
			name = f->device_name;
	pthread_mutex_unlock(&g_lock);
	return name;
}

RT_EXPORT cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
	RT_API_SYM(__cudaGetKernel, v13000, rt_host_fn_name(hostFun));
	if (!kernel)
		RT_RETURN(cudaErrorInvalidValue);
	RT_RETURN(rt_kernel_for_host_fn(hostFun, kernel));
}

RT_EXPORT unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
							 size_t sharedMem,
							 struct CUstream_st *stream)
{
	RT_API(__cudaPushCallConfiguration, v13000);
	if (t_nconfigs >= RT_MAX_CALL_CONFIGS) {
		rt_api_end(&rt_frame_, rt_record(cudaErrorInvalidConfiguration));
		return 1;
	}
	t_configs[t_nconfigs++] = (struct call_config){gridDim, blockDim, sharedMem, stream};
	rt_api_end(&rt_frame_, cudaSuccess);
	return 0;
}

RT_EXPORT cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
							   size_t *sharedMem, void *stream)
{
	RT_API(__cudaPopCallConfiguration, v13000);
	if (t_nconfigs == 0)
		RT_RETURN(cudaErrorMissingConfiguration);
	struct call_config c = t_configs[--t_nconfigs];
	*gridDim = c.grid;
	*blockDim = c.block;
	*sharedMem = c.shared;
	memcpy(stream, &c.stream, sizeof(c.stream));
	RT_RETURN(cudaSuccess);
}
