/* Kernel launches: runtime validation, then cuKernelGetFunction +
 * cuLaunchKernel(_ptsz) on the driver, like the real runtime. */
#include "rt.h"

static int config_ok(dim3 g, dim3 b)
{
	unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
	return g.x && g.y && g.z && b.x && b.y && b.z && b.x <= 1024 && b.y <= 1024 && b.z <= 64 &&
	       threads <= 1024 && g.y <= 65535 && g.z <= 65535;
}

cudaError_t rt_launch(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t shared,
		      cudaStream_t s, int per_thread)
{
	if (!k)
		return cudaErrorInvalidDeviceFunction;
	if (!config_ok(grid, block))
		return cudaErrorInvalidConfiguration;
	cudaError_t e = rt_ctx();
	if (e != cudaSuccess)
		return e;
	const struct rt_driver *d = rt_drv(per_thread);
	CUfunction f;
	e = rt_from_cu(d->cuKernelGetFunction(&f, (CUkernel)k));
	if (e != cudaSuccess)
		return e == cudaErrorInvalidResourceHandle ? cudaErrorInvalidDeviceFunction : e;
	return rt_from_cu(d->cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
					    (unsigned int)shared, (CUstream)s, args, NULL));
}

RT_EXPORT cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
						   void **args, size_t sharedMem,
						   cudaStream_t stream)
{
	RT_API_SYM(__cudaLaunchKernel, v13000, rt_kernel_name(kernel));
	RT_RETURN(rt_launch(kernel, gridDim, blockDim, args, sharedMem, stream, 0));
}

RT_EXPORT cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
							dim3 blockDim, void **args,
							size_t sharedMem, cudaStream_t stream)
{
	RT_API_SYM(__cudaLaunchKernel_ptsz, v13000, rt_kernel_name(kernel));
	RT_RETURN(rt_launch(kernel, gridDim, blockDim, args, sharedMem, stream, 1));
}

static cudaError_t launch_host_fn(const void *func, dim3 g, dim3 b, void **args, size_t shared,
				  cudaStream_t s, int per_thread)
{
	cudaKernel_t k = NULL;
	cudaError_t e = rt_kernel_for_host_fn(func, &k);
	return e != cudaSuccess ? e : rt_launch(k, g, b, args, shared, s, per_thread);
}

RT_EXPORT cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
						 void **args, size_t sharedMem, cudaStream_t stream)
{
	RT_API_SYM(cudaLaunchKernel, v7000, rt_host_fn_name(func));
	RT_RETURN(launch_host_fn(func, gridDim, blockDim, args, sharedMem, stream, 0));
}

RT_EXPORT cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
						      void **args, size_t sharedMem,
						      cudaStream_t stream)
{
	RT_API_SYM(cudaLaunchKernel_ptsz, v7000, rt_host_fn_name(func));
	RT_RETURN(launch_host_fn(func, gridDim, blockDim, args, sharedMem, stream, 1));
}
