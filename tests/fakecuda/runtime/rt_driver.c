/* Loading the driver the way NVIDIA's runtime does: dlopen("libcuda.so.1"),
 * then cuGetProcAddress for every entry point.  The private hooks symbol is
 * looked up in the same handle (optional: absent with a real driver). */
#include "rt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
				CUdriverProcAddressQueryResult *);

static struct rt_driver g_tables[2];
static const struct fakecuda_hooks *g_hooks;
static int g_loaded;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* clang-format off: one entry per line, which clang-format 14 cannot keep */
#define RT_DRIVER_FUNCS(X)                                                                         \
	X(cuInit)                                                                                  \
	X(cuDriverGetVersion)                                                                      \
	X(cuDeviceGetCount)                                                                        \
	X(cuDeviceGet)                                                                             \
	X(cuDeviceGetName)                                                                         \
	X(cuDeviceGetUuid)                                                                         \
	X(cuDeviceTotalMem)                                                                        \
	X(cuDeviceGetAttribute)                                                                    \
	X(cuDevicePrimaryCtxRetain)                                                                \
	X(cuCtxGetCurrent)                                                                         \
	X(cuCtxSetCurrent)                                                                         \
	X(cuCtxSynchronize)                                                                        \
	X(cuLibraryLoadData)                                                                       \
	X(cuLibraryUnload)                                                                         \
	X(cuLibraryGetKernel)                                                                      \
	X(cuKernelGetFunction)                                                                     \
	X(cuLaunchKernel)                                                                          \
	X(cuMemAlloc)                                                                              \
	X(cuMemFree)                                                                               \
	X(cuMemAllocHost)                                                                          \
	X(cuMemFreeHost)                                                                           \
	X(cuMemAllocManaged)                                                                       \
	X(cuMemAllocAsync)                                                                         \
	X(cuMemFreeAsync)                                                                          \
	X(cuMemGetInfo)                                                                            \
	X(cuMemcpy)                                                                                \
	X(cuMemcpyHtoD)                                                                            \
	X(cuMemcpyDtoH)                                                                            \
	X(cuMemcpyDtoD)                                                                            \
	X(cuMemcpyAsync)                                                                           \
	X(cuMemcpyHtoDAsync)                                                                       \
	X(cuMemcpyDtoHAsync)                                                                       \
	X(cuMemcpyDtoDAsync)                                                                       \
	X(cuMemsetD8)                                                                              \
	X(cuMemsetD8Async)                                                                         \
	X(cuStreamCreate)                                                                          \
	X(cuStreamCreateWithPriority)                                                              \
	X(cuStreamDestroy)                                                                         \
	X(cuStreamSynchronize)                                                                     \
	X(cuStreamQuery)                                                                           \
	X(cuStreamWaitEvent)                                                                       \
	X(cuStreamGetId)                                                                           \
	X(cuEventCreate)                                                                           \
	X(cuEventDestroy)                                                                          \
	X(cuEventRecord)                                                                           \
	X(cuEventQuery)                                                                            \
	X(cuEventSynchronize)                                                                      \
	X(cuEventElapsedTime)
/* clang-format on */

static int resolve(get_proc_fn get, struct rt_driver *t, cuuint64_t flags)
{
	int ok = 1;
	CUdriverProcAddressQueryResult st;
#define RT_RESOLVE(name)                                                                           \
	if (get(#name, (void **)&t->name, RT_CUDA_VERSION, flags, &st) != CUDA_SUCCESS) {          \
		fprintf(stderr, "fakecuda runtime: driver lacks %s\n", #name);                     \
		ok = 0;                                                                            \
	}
	RT_DRIVER_FUNCS(RT_RESOLVE)
#undef RT_RESOLVE
	return ok;
}

static void load(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!h)
		return;
	get_proc_fn get = (get_proc_fn)dlsym(h, "cuGetProcAddress_v2");
	if (!get)
		return;
	g_hooks = dlsym(h, FAKECUDA_HOOKS_SYMBOL);
	if (g_hooks && g_hooks->version != FAKECUDA_HOOKS_VERSION)
		g_hooks = NULL;
	g_loaded = resolve(get, &g_tables[0], CU_GET_PROC_ADDRESS_LEGACY_STREAM) &&
		   resolve(get, &g_tables[1], CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
}

const struct rt_driver *rt_drv(int per_thread)
{
	pthread_once(&g_once, load);
	return g_loaded ? &g_tables[per_thread ? 1 : 0] : NULL;
}

const struct fakecuda_hooks *rt_hooks(void)
{
	pthread_once(&g_once, load);
	return g_hooks;
}

void rt_api_begin(struct rt_frame *fr, uint32_t cbid, const char *name, const char *symbol)
{
	const struct fakecuda_hooks *h = rt_hooks();
	fr->active = h != NULL;
	if (h)
		h->api_begin(&fr->f, FC_DOMAIN_RUNTIME, cbid, name, symbol);
}

cudaError_t rt_api_end(struct rt_frame *fr, cudaError_t e)
{
	if (fr->active)
		rt_hooks()->api_end(&fr->f, (int)e);
	return e;
}
