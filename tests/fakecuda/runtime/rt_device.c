/* Device selection and queries, device-wide synchronisation. */
#include "rt.h"

#include <string.h>

RT_EXPORT cudaError_t CUDARTAPI cudaGetDeviceCount(int *count)
{
	RT_API(cudaGetDeviceCount, v3020);
	if (!count)
		RT_RETURN(cudaErrorInvalidValue);
	cudaError_t e = rt_ctx();
	if (e == cudaSuccess)
		e = rt_from_cu(rt_drv(0)->cuDeviceGetCount(count));
	RT_RETURN(e);
}

/* The runtime is initialised and `device` names one of the driver's devices. */
static cudaError_t check_device(int device)
{
	cudaError_t e = rt_ctx();
	int n = 0;
	if (e == cudaSuccess)
		e = rt_from_cu(rt_drv(0)->cuDeviceGetCount(&n));
	if (e == cudaSuccess && (device < 0 || device >= n))
		e = cudaErrorInvalidDevice;
	return e;
}

RT_EXPORT cudaError_t CUDARTAPI cudaSetDevice(int device)
{
	RT_API(cudaSetDevice, v3020);
	cudaError_t e = check_device(device);
	if (e == cudaSuccess)
		rt_set_current_device(device);
	RT_RETURN(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaGetDevice(int *device)
{
	RT_API(cudaGetDevice, v3020);
	if (!device)
		RT_RETURN(cudaErrorInvalidValue);
	*device = rt_current_device();
	RT_RETURN(cudaSuccess);
}

RT_EXPORT cudaError_t CUDARTAPI cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr,
						       int device)
{
	RT_API(cudaDeviceGetAttribute, v5000);
	cudaError_t e = rt_ctx();
	/* cudaDeviceAttr values are the CUdevice_attribute values. */
	if (e == cudaSuccess)
		e = rt_from_cu(
		    rt_drv(0)->cuDeviceGetAttribute(value, (CUdevice_attribute)attr, device));
	RT_RETURN(e);
}

static int attr(int dev, CUdevice_attribute a)
{
	int v = 0;
	rt_drv(0)->cuDeviceGetAttribute(&v, a, dev);
	return v;
}

static void fill_props(struct cudaDeviceProp *p, int dev)
{
	const struct rt_driver *d = rt_drv(0);
	memset(p, 0, sizeof(*p));
	d->cuDeviceGetName(p->name, (int)sizeof(p->name), dev);
	d->cuDeviceGetUuid((CUuuid *)&p->uuid, dev);
	d->cuDeviceTotalMem(&p->totalGlobalMem, dev);
	p->major = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	p->minor = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	p->multiProcessorCount = attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	p->warpSize = attr(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
	p->maxThreadsPerBlock = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
	p->maxThreadsDim[0] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
	p->maxThreadsDim[1] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
	p->maxThreadsDim[2] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
	p->maxGridSize[0] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
	p->maxGridSize[1] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
	p->maxGridSize[2] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
	p->sharedMemPerBlock = (size_t)attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
	p->regsPerBlock = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
	p->totalConstMem = (size_t)attr(dev, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
	p->l2CacheSize = attr(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
	p->memoryBusWidth = attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
	p->concurrentKernels = attr(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
	p->asyncEngineCount = attr(dev, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
	p->unifiedAddressing = attr(dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
	p->managedMemory = attr(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
	p->maxThreadsPerMultiProcessor =
	    attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
	p->regsPerMultiprocessor = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
	p->sharedMemPerMultiprocessor =
	    (size_t)attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
	p->sharedMemPerBlockOptin =
	    (size_t)attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
	p->maxBlocksPerMultiProcessor =
	    attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
	p->ECCEnabled = attr(dev, CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
}

RT_EXPORT cudaError_t CUDARTAPI cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	RT_API(cudaGetDeviceProperties, v12000);
	if (!prop)
		RT_RETURN(cudaErrorInvalidValue);
	cudaError_t e = check_device(device);
	if (e == cudaSuccess)
		fill_props(prop, device);
	RT_RETURN(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaDriverGetVersion(int *driverVersion)
{
	RT_API(cudaDriverGetVersion, v3020);
	if (!driverVersion)
		RT_RETURN(cudaErrorInvalidValue);
	const struct rt_driver *d = rt_drv(0);
	*driverVersion = 0; /* 0 = no driver, as documented */
	RT_RETURN(d ? rt_from_cu(d->cuDriverGetVersion(driverVersion)) : cudaSuccess);
}

RT_EXPORT cudaError_t CUDARTAPI cudaRuntimeGetVersion(int *runtimeVersion)
{
	RT_API(cudaRuntimeGetVersion, v3020);
	if (!runtimeVersion)
		RT_RETURN(cudaErrorInvalidValue);
	*runtimeVersion = CUDART_VERSION;
	RT_RETURN(cudaSuccess);
}

RT_EXPORT cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
	RT_API(cudaDeviceSynchronize, v3020);
	cudaError_t e = rt_ctx();
	RT_RETURN(e != cudaSuccess ? e : rt_from_cu(rt_drv(0)->cuCtxSynchronize()));
}
