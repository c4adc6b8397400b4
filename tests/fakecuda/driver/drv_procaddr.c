/* cuGetProcAddress: the way the runtime (and PyTorch, Triton, ...) find
 * driver entry points.  Like the real driver, lookups use the BASE name
 * ("cuMemAlloc") and pick the newest ABI version not newer than the caller's
 * CUDA version; CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM selects the
 * _ptds/_ptsz variant. */
#include "drv.h"

#include <string.h>

struct proc_entry {
	const char *name;
	int since; /* first CUDA version with this ABI */
	void *fn, *fn_per_thread;
};

#define P(name, since, fn)                                                                         \
	{                                                                                          \
		name, since, (void *)fn, (void *)fn                                                \
	}
#define PT(name, since, fn, fnpt)                                                                  \
	{                                                                                          \
		name, since, (void *)fn, (void *)fnpt                                              \
	}

static const struct proc_entry g_procs[] = {
    P("cuInit", 2000, cuInit),
    P("cuDriverGetVersion", 2020, cuDriverGetVersion),
    P("cuGetProcAddress", 11030, cuGetProcAddress),
    P("cuGetProcAddress", 12000, cuGetProcAddress_v2),
    P("cuGetErrorString", 6000, cuGetErrorString),
    P("cuGetErrorName", 6000, cuGetErrorName),
    P("cuDeviceGet", 2000, cuDeviceGet),
    P("cuDeviceGetCount", 2000, cuDeviceGetCount),
    P("cuDeviceGetName", 2000, cuDeviceGetName),
    P("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
    P("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
    P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    P("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
    P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    P("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
    P("cuCtxCreate", 3020, cuCtxCreate_v2),
    P("cuCtxCreate", 12050, cuCtxCreate_v4),
    P("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    P("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    P("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    P("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    P("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    P("cuCtxGetDevice", 2000, cuCtxGetDevice),
    P("cuCtxGetId", 12000, cuCtxGetId),
    P("cuCtxSynchronize", 2000, cuCtxSynchronize),
    P("cuModuleLoadData", 2000, cuModuleLoadData),
    P("cuModuleUnload", 2000, cuModuleUnload),
    P("cuModuleGetFunction", 2000, cuModuleGetFunction),
    P("cuLibraryLoadData", 12000, cuLibraryLoadData),
    P("cuLibraryUnload", 12000, cuLibraryUnload),
    P("cuLibraryGetKernel", 12000, cuLibraryGetKernel),
    P("cuKernelGetFunction", 12000, cuKernelGetFunction),
    P("cuFuncGetName", 12030, cuFuncGetName),
    PT("cuLaunchKernel", 4000, cuLaunchKernel, cuLaunchKernel_ptsz),
    PT("cuLaunchKernelEx", 11060, cuLaunchKernelEx, cuLaunchKernelEx_ptsz),
    P("cuMemAlloc", 3020, cuMemAlloc_v2),
    P("cuMemFree", 3020, cuMemFree_v2),
    P("cuMemAllocHost", 3020, cuMemAllocHost_v2),
    P("cuMemFreeHost", 2000, cuMemFreeHost),
    P("cuMemAllocManaged", 6000, cuMemAllocManaged),
    P("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    PT("cuMemAllocAsync", 11020, cuMemAllocAsync, cuMemAllocAsync_ptsz),
    PT("cuMemFreeAsync", 11020, cuMemFreeAsync, cuMemFreeAsync_ptsz),
    PT("cuMemcpy", 4000, cuMemcpy, cuMemcpy_ptds),
    PT("cuMemcpyAsync", 4000, cuMemcpyAsync, cuMemcpyAsync_ptsz),
    PT("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
    PT("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
    PT("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds),
    PT("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz),
    PT("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz),
    PT("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz),
    PT("cuMemsetD8", 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds),
    P("cuMemsetD16", 3020, cuMemsetD16_v2),
    PT("cuMemsetD32", 3020, cuMemsetD32_v2, cuMemsetD32_v2_ptds),
    PT("cuMemsetD8Async", 3020, cuMemsetD8Async, cuMemsetD8Async_ptsz),
    PT("cuMemsetD32Async", 3020, cuMemsetD32Async, cuMemsetD32Async_ptsz),
    P("cuStreamCreate", 2000, cuStreamCreate),
    P("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority),
    P("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    PT("cuStreamSynchronize", 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz),
    PT("cuStreamQuery", 2000, cuStreamQuery, cuStreamQuery_ptsz),
    PT("cuStreamWaitEvent", 3020, cuStreamWaitEvent, cuStreamWaitEvent_ptsz),
    PT("cuStreamGetId", 12000, cuStreamGetId, cuStreamGetId_ptsz),
    P("cuEventCreate", 2000, cuEventCreate),
    P("cuEventDestroy", 4000, cuEventDestroy_v2),
    PT("cuEventRecord", 2000, cuEventRecord, cuEventRecord_ptsz),
    PT("cuEventRecordWithFlags", 11010, cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz),
    P("cuEventQuery", 2000, cuEventQuery),
    P("cuEventSynchronize", 2000, cuEventSynchronize),
    P("cuEventElapsedTime", 2000, cuEventElapsedTime),
    P("cuEventElapsedTime", 12080, cuEventElapsedTime_v2),
    P("cuGraphCreate", 10000, cuGraphCreate),
    P("cuGraphAddKernelNode", 12000, cuGraphAddKernelNode_v2),
    P("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags),
    PT("cuGraphLaunch", 10000, cuGraphLaunch, cuGraphLaunch_ptsz),
    P("cuGraphExecDestroy", 10000, cuGraphExecDestroy),
    P("cuGraphDestroy", 10000, cuGraphDestroy),
};

CUresult fc_proc_lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
			CUdriverProcAddressQueryResult *st)
{
	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	const struct proc_entry *best = NULL;
	int known = 0;
	for (size_t i = 0; i < sizeof(g_procs) / sizeof(g_procs[0]); i++) {
		const struct proc_entry *e = &g_procs[i];
		if (strcmp(e->name, symbol) != 0)
			continue;
		known = 1;
		if (e->since <= version && (!best || e->since > best->since))
			best = e;
	}
	*pfn = NULL;
	if (st)
		*st = best    ? CU_GET_PROC_ADDRESS_SUCCESS
		      : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
			      : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (!best)
		return CUDA_ERROR_NOT_FOUND;
	*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? best->fn_per_thread
								       : best->fn;
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
					       cuuint64_t flags,
					       CUdriverProcAddressQueryResult *symbolStatus)
{
	FC_API(cuGetProcAddress_v2);
	FC_RETURN(fc_proc_lookup(symbol, pfn, cudaVersion, flags, symbolStatus));
}

FC_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
					    cuuint64_t flags)
{
	FC_API(cuGetProcAddress);
	FC_RETURN(fc_proc_lookup(symbol, pfn, cudaVersion, flags, NULL));
}
