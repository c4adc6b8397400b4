/* cuInit (with CUDA_INJECTION64_PATH), the single simulated device, and
 * contexts (primary and explicit) with the per-thread current-context stack. */
#include "drv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FC_DEVICE_NAME	 "FakeCUDA Simulated GPU (gpuspy)"
#define FC_TOTAL_MEM	 (80ull << 30)
#define FC_CTX_STACK_MAX 32

static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_init_state; /* 0 none, 1 running, 2 done */
static pthread_t g_init_thread;
static pthread_mutex_t g_ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUctx_st *g_contexts;
static struct CUctx_st *g_primary;
static int g_primary_refs;
static uint32_t g_next_ctx_id = 1;

static _Thread_local struct CUctx_st *t_stack[FC_CTX_STACK_MAX];
static _Thread_local int t_top;

int fc_initialized(void)
{
	return __atomic_load_n(&g_init_state, __ATOMIC_ACQUIRE) == 2;
}

/* Exactly what the real driver does with CUDA_INJECTION64_PATH: dlopen the
 * library during cuInit and call its InitializeInjection(). */
static void load_injection(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	if (!path || !*path)
		return;
	void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "fakecuda: cannot load CUDA_INJECTION64_PATH: %s\n", dlerror());
		return;
	}
	int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
	if (!init) {
		fprintf(stderr, "fakecuda: %s has no InitializeInjection\n", path);
		return;
	}
	init();
}

static CUresult do_init(unsigned int flags)
{
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_init_lock);
	if (g_init_state == 1 && pthread_equal(g_init_thread, pthread_self())) {
		pthread_mutex_unlock(&g_init_lock); /* re-entered from injection */
		return CUDA_SUCCESS;
	}
	int ran = 0;
	if (g_init_state == 0) {
		g_init_state = 1;
		g_init_thread = pthread_self();
		load_injection();
		__atomic_store_n(&g_init_state, 2, __ATOMIC_RELEASE);
		ran = 1;
	}
	pthread_mutex_unlock(&g_init_lock);
	/* the driver is initialised: CUPTI emits its device records now (cupti_activity.h:
	 * "Device records are emitted in CUPTI on CUDA driver initialization") */
	if (ran)
		fc_emit_initialized();
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuInit(unsigned int Flags)
{
	/* The injection must run before the first traced call it can observe,
	 * so cuInit itself is reported only after initialisation. */
	CUresult r = do_init(Flags);
	FC_API(cuInit);
	FC_RETURN(r);
}

FC_EXPORT CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
	FC_API(cuDriverGetVersion);
	if (!driverVersion)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	*driverVersion = FC_DRIVER_VERSION;
	FC_RETURN(CUDA_SUCCESS);
}

static CUresult check_device(CUdevice dev)
{
	if (!fc_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

int fc_device_count(void)
{
	return fc_initialized() ? 1 : 0;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	FC_API(cuDeviceGetCount);
	if (!fc_initialized())
		FC_RETURN(CUDA_ERROR_NOT_INITIALIZED);
	if (!count)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	*count = fc_device_count();
	FC_RETURN(CUDA_SUCCESS);
}

FC_EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	FC_API(cuDeviceGet);
	CUresult r = check_device(ordinal);
	if (r == CUDA_SUCCESS && !device)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*device = ordinal;
	FC_RETURN(r);
}

int fc_device_name(char *name, int len, int ordinal)
{
	CUresult r = check_device(ordinal);
	if (r == CUDA_SUCCESS && (!name || len <= 0))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		snprintf(name, (size_t)len, "%s", FC_DEVICE_NAME);
	return r;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
	FC_API(cuDeviceGetName);
	FC_RETURN((CUresult)fc_device_name(name, len, dev));
}

int fc_device_uuid(uint8_t uuid[16], int ordinal)
{
	CUresult r = check_device(ordinal);
	if (r == CUDA_SUCCESS && !uuid)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) /* fixed, recognisable: "fakecuda" + ordinal */
		memcpy(uuid, "fakecuda\0\0\0\0\0\0\0\0", 16);
	return r;
}

static CUresult get_uuid(CUuuid *uuid, CUdevice dev)
{
	_Static_assert(sizeof(uuid->bytes) == 16, "CUuuid");
	return (CUresult)fc_device_uuid(uuid ? (uint8_t *)uuid->bytes : NULL, dev);
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	FC_API(cuDeviceGetUuid);
	FC_RETURN(get_uuid(uuid, dev));
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	FC_API(cuDeviceGetUuid_v2);
	FC_RETURN(get_uuid(uuid, dev));
}

int fc_device_total_mem(uint64_t *bytes, int ordinal)
{
	CUresult r = check_device(ordinal);
	if (r == CUDA_SUCCESS && !bytes)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*bytes = FC_TOTAL_MEM;
	return r;
}

FC_EXPORT CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	FC_API(cuDeviceTotalMem_v2);
	uint64_t total = 0;
	CUresult r = (CUresult)fc_device_total_mem(bytes ? &total : NULL, dev);
	if (r == CUDA_SUCCESS)
		*bytes = (size_t)total;
	FC_RETURN(r);
}

/* An H100-like sm_90 part; attributes not listed read as 0. */
static int attribute_value(CUdevice_attribute a)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
		return 64;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
		return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
		return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
		return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
		return 49152;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		return 32;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		return 132;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		return 9;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		return 0;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
		return 1;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
		return 2;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
		return 1;
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
		return 1;
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
		return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
		return 2048;
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
		return 2619000;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
		return 5120;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
		return 52428800;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
		return 65536;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
		return 65536;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
		return 1980000;
	case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
		return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
		return 233472;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
		return 65536;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
		return 232448;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
		return 32;
	default:
		return 0;
	}
}

int fc_device_attribute(int *value, int attrib, int ordinal)
{
	CUresult r = check_device(ordinal);
	if (r == CUDA_SUCCESS && (!value || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*value = attribute_value((CUdevice_attribute)attrib);
	return r;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	FC_API(cuDeviceGetAttribute);
	FC_RETURN((CUresult)fc_device_attribute(pi, (int)attrib, dev));
}

/* ---- contexts ---------------------------------------------------------- */

struct CUctx_st *fc_ctx_current(void)
{
	return t_top > 0 ? t_stack[t_top - 1] : NULL;
}

int fc_ctx_is_live(struct CUctx_st *c)
{
	pthread_mutex_lock(&g_ctx_lock);
	int live = 0;
	for (struct CUctx_st *x = g_contexts; x && !live; x = x->next)
		live = (x == c && x->valid);
	pthread_mutex_unlock(&g_ctx_lock);
	return live;
}

CUresult fc_ctx_require(struct CUctx_st **out)
{
	if (!fc_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	struct CUctx_st *c = fc_ctx_current();
	if (!c || !fc_ctx_is_live(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	*out = c;
	return CUDA_SUCCESS;
}

/* Caller holds g_ctx_lock. */
static struct CUctx_st *ctx_new(int primary, unsigned int flags)
{
	struct CUctx_st *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->id = g_next_ctx_id++;
	c->primary = primary;
	c->flags = flags;
	c->valid = 1;
	fc_lock();
	c->legacy = fc_legacy_stream_new(c);
	fc_unlock();
	if (!c->legacy) {
		free(c);
		return NULL;
	}
	c->next = g_contexts;
	g_contexts = c;
	return c;
}

/* Work still queued keeps running: destroying waits for it, as the real
 * driver does before tearing a context down. */
static void ctx_destroy_locked(struct CUctx_st *c)
{
	fc_lock();
	uint64_t tail = fc_ctx_tail(c);
	fc_unlock();
	fc_sleep_until(tail);
	fc_lock();
	fc_streams_drop_ctx(c);
	fc_unlock();
	for (struct CUctx_st **pp = &g_contexts; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	for (int i = 0; i < t_top; i++)
		if (t_stack[i] == c)
			t_stack[i] = NULL;
	free(c);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	FC_API(cuDevicePrimaryCtxRetain);
	CUresult r = check_device(dev);
	if (r == CUDA_SUCCESS && !pctx)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) {
		pthread_mutex_lock(&g_ctx_lock);
		if (!g_primary)
			g_primary = ctx_new(1, 0);
		if (g_primary) {
			g_primary_refs++;
			*pctx = g_primary;
		} else {
			r = CUDA_ERROR_OUT_OF_MEMORY;
		}
		pthread_mutex_unlock(&g_ctx_lock);
	}
	FC_RETURN(r);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	FC_API(cuDevicePrimaryCtxRelease_v2);
	CUresult r = check_device(dev);
	if (r == CUDA_SUCCESS) {
		pthread_mutex_lock(&g_ctx_lock);
		if (g_primary_refs <= 0) {
			r = CUDA_ERROR_INVALID_CONTEXT;
		} else if (--g_primary_refs == 0) {
			ctx_destroy_locked(g_primary);
			g_primary = NULL;
		}
		pthread_mutex_unlock(&g_ctx_lock);
	}
	FC_RETURN(r);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
						      int *active)
{
	FC_API(cuDevicePrimaryCtxGetState);
	CUresult r = check_device(dev);
	if (r == CUDA_SUCCESS && (!flags || !active))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) {
		pthread_mutex_lock(&g_ctx_lock);
		*flags = 0;
		*active = g_primary != NULL;
		pthread_mutex_unlock(&g_ctx_lock);
	}
	FC_RETURN(r);
}

static CUresult ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	CUresult r = check_device(dev);
	if (r != CUDA_SUCCESS)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (t_top >= FC_CTX_STACK_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&g_ctx_lock);
	struct CUctx_st *c = ctx_new(0, flags);
	pthread_mutex_unlock(&g_ctx_lock);
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	t_stack[t_top++] = c; /* a new context becomes current */
	*pctx = c;
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	FC_API(cuCtxCreate_v2);
	FC_RETURN(ctx_create(pctx, flags, dev));
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
					  unsigned int flags, CUdevice dev)
{
	FC_API(cuCtxCreate_v4);
	(void)params; /* affinity / CIG: not simulated */
	FC_RETURN(ctx_create(pctx, flags, dev));
}

FC_EXPORT CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
	FC_API(cuCtxDestroy_v2);
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&g_ctx_lock);
	int live = 0;
	for (struct CUctx_st *x = g_contexts; x; x = x->next)
		live |= (x == ctx && !x->primary);
	if (live)
		ctx_destroy_locked(ctx);
	else
		r = CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_unlock(&g_ctx_lock);
	if (live && t_top > 0 && t_stack[t_top - 1] == NULL)
		t_top--;
	FC_RETURN(r);
}

FC_EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	FC_API(cuCtxSetCurrent);
	if (!fc_initialized())
		FC_RETURN(CUDA_ERROR_NOT_INITIALIZED);
	if (ctx && !fc_ctx_is_live(ctx))
		FC_RETURN(CUDA_ERROR_INVALID_CONTEXT);
	if (t_top == 0) {
		if (ctx)
			t_stack[t_top++] = ctx;
	} else if (ctx) {
		t_stack[t_top - 1] = ctx;
	} else {
		t_top--;
	}
	FC_RETURN(CUDA_SUCCESS);
}

FC_EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	FC_API(cuCtxGetCurrent);
	if (!fc_initialized())
		FC_RETURN(CUDA_ERROR_NOT_INITIALIZED);
	if (!pctx)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	*pctx = fc_ctx_current();
	FC_RETURN(CUDA_SUCCESS);
}

FC_EXPORT CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
	FC_API(cuCtxPushCurrent_v2);
	if (!fc_initialized())
		FC_RETURN(CUDA_ERROR_NOT_INITIALIZED);
	if (!ctx || !fc_ctx_is_live(ctx))
		FC_RETURN(CUDA_ERROR_INVALID_CONTEXT);
	if (t_top >= FC_CTX_STACK_MAX)
		FC_RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	t_stack[t_top++] = ctx;
	FC_RETURN(CUDA_SUCCESS);
}

FC_EXPORT CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
	FC_API(cuCtxPopCurrent_v2);
	if (!fc_initialized())
		FC_RETURN(CUDA_ERROR_NOT_INITIALIZED);
	if (t_top == 0)
		FC_RETURN(CUDA_ERROR_INVALID_CONTEXT);
	struct CUctx_st *c = t_stack[--t_top];
	if (pctx)
		*pctx = c;
	FC_RETURN(CUDA_SUCCESS);
}

FC_EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
	FC_API(cuCtxGetDevice);
	struct CUctx_st *c;
	CUresult r = fc_ctx_require(&c);
	if (r == CUDA_SUCCESS && !device)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*device = 0;
	FC_RETURN(r);
}

FC_EXPORT CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
	FC_API(cuCtxGetId);
	if (!ctx)
		ctx = fc_ctx_current();
	if (!ctx || !fc_ctx_is_live(ctx))
		FC_RETURN(CUDA_ERROR_INVALID_CONTEXT);
	if (!ctxId)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	*ctxId = ctx->id;
	FC_RETURN(CUDA_SUCCESS);
}
