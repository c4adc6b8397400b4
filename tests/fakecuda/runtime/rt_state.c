/* Lazy initialisation (cuInit + primary context, on first use, as the real
 * runtime does), the per-thread "last error", and CUresult -> cudaError_t. */
#include "rt.h"

#include <pthread.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static cudaError_t g_init_error;
static CUcontext g_primary;
static _Thread_local cudaError_t t_last_error;
static _Thread_local int t_ctx_bound;
static _Thread_local int t_device;

cudaError_t rt_from_cu(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS:
		return cudaSuccess;
	case CUDA_ERROR_INVALID_VALUE:
		return cudaErrorInvalidValue;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return cudaErrorMemoryAllocation;
	case CUDA_ERROR_NOT_INITIALIZED:
		return cudaErrorInitializationError;
	case CUDA_ERROR_NO_DEVICE:
		return cudaErrorNoDevice;
	case CUDA_ERROR_INVALID_DEVICE:
		return cudaErrorInvalidDevice;
	case CUDA_ERROR_INVALID_IMAGE:
		return cudaErrorInvalidKernelImage;
	case CUDA_ERROR_INVALID_CONTEXT:
		return cudaErrorDeviceUninitialized;
	case CUDA_ERROR_INVALID_HANDLE:
		return cudaErrorInvalidResourceHandle;
	case CUDA_ERROR_NOT_FOUND:
		return cudaErrorSymbolNotFound;
	case CUDA_ERROR_NOT_READY:
		return cudaErrorNotReady;
	case CUDA_ERROR_LAUNCH_FAILED:
		return cudaErrorLaunchFailure;
	case CUDA_ERROR_NOT_SUPPORTED:
		return cudaErrorNotSupported;
	default:
		return cudaErrorUnknown;
	}
}

static void init_once(void)
{
	const struct rt_driver *d = rt_drv(0);
	if (!d) {
		g_init_error = cudaErrorInsufficientDriver;
		return;
	}
	CUresult r = d->cuInit(0);
	if (r == CUDA_SUCCESS)
		r = d->cuDevicePrimaryCtxRetain(&g_primary, 0);
	g_init_error = rt_from_cu(r);
}

cudaError_t rt_ctx(void)
{
	pthread_once(&g_once, init_once);
	if (g_init_error != cudaSuccess)
		return g_init_error;
	if (!t_ctx_bound) {
		cudaError_t e = rt_from_cu(rt_drv(0)->cuCtxSetCurrent(g_primary));
		if (e != cudaSuccess)
			return e;
		t_ctx_bound = 1;
	}
	return cudaSuccess;
}

cudaError_t rt_record(cudaError_t e)
{
	if (e != cudaSuccess)
		t_last_error = e;
	return e;
}

int rt_current_device(void)
{
	return t_device;
}
void rt_set_current_device(int dev)
{
	t_device = dev;
}

RT_EXPORT cudaError_t CUDARTAPI cudaGetLastError(void)
{
	RT_API(cudaGetLastError, v3020);
	cudaError_t e = t_last_error;
	t_last_error = cudaSuccess;
	RT_RETURN_QUIET(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaPeekAtLastError(void)
{
	RT_API(cudaPeekAtLastError, v3020);
	RT_RETURN_QUIET(t_last_error);
}
