/* The CUDA entry points gpuspy attaches uprobes to: the single source of
 * truth for the loader, and for the tests that check every name against
 * NVIDIA's own libraries (tests/fakecuda.bats parses this file).
 *
 * X-macro: define CUDA_PROBE(LIBRARY, SYMBOL, CLASS) and include this file.
 *   LIBRARY  CUDART  libcudart.so.13 (symbols versioned "libcudart.so.13")
 *            CUDA    libcuda.so.1    (unversioned)
 *   SYMBOL   the exported name, exactly (e.g. the _v2/_ptsz ABI variant).
 *   CLASS    how its arguments are read: GS_CUDA_<CLASS> in output/trace/cuda_api.h, which also
 *            says what BPF captures for it (stack arguments, out pointers, names).
 * Keep it plain preprocessor: one CUDA_PROBE(...) per line, no other code. */
#ifndef CUDA_PROBE
#error "define CUDA_PROBE(LIBRARY, SYMBOL, CLASS) before including cuda_probe_list.h"
#endif

/* Kernel launches.  nvcc's <<<>>> stubs call __cudaLaunchKernel (CUDA 13),
 * older code and frameworks call cudaLaunchKernel; everything reaches the
 * driver's cuLaunchKernel*, which is also what Triton, CuPy and PyTorch's
 * JIT call directly.  Graph launches submit many kernels at once. */
CUDA_PROBE(CUDART, __cudaLaunchKernel, LAUNCH_RT)
CUDA_PROBE(CUDART, __cudaLaunchKernel_ptsz, LAUNCH_RT)
CUDA_PROBE(CUDART, cudaLaunchKernel, LAUNCH_RT)
CUDA_PROBE(CUDART, cudaLaunchKernel_ptsz, LAUNCH_RT)
CUDA_PROBE(CUDA, cuLaunchKernel, LAUNCH_DRV)
CUDA_PROBE(CUDA, cuLaunchKernel_ptsz, LAUNCH_DRV)
CUDA_PROBE(CUDA, cuLaunchKernelEx, LAUNCH_EX)
CUDA_PROBE(CUDA, cuLaunchKernelEx_ptsz, LAUNCH_EX)
CUDA_PROBE(CUDA, cuGraphLaunch, GRAPH_LAUNCH)
CUDA_PROBE(CUDA, cuGraphLaunch_ptsz, GRAPH_LAUNCH)

/* Kernel names.  Launch arguments carry only handles; these calls bind a
 * handle (host stub, CUfunction, CUkernel) to its mangled device name, or
 * one handle to another: nvcc 13's stubs launch the cudaKernel_t that
 * __cudaGetKernel returns for the host stub, not the stub itself. */
CUDA_PROBE(CUDART, __cudaRegisterFunction, NAME_STUB)
CUDA_PROBE(CUDART, __cudaGetKernel, KERNEL_FUNCTION)
CUDA_PROBE(CUDA, cuModuleGetFunction, NAME_FUNCTION)
CUDA_PROBE(CUDA, cuLibraryGetKernel, NAME_KERNEL)
CUDA_PROBE(CUDA, cuKernelGetFunction, KERNEL_FUNCTION)

/* Copies and memsets: host-side cost and direction/size of data movement.
 * The runtime calls map onto these driver variants. */
CUDA_PROBE(CUDART, cudaMemcpy, MEMCPY_RT)
CUDA_PROBE(CUDART, cudaMemcpyAsync, MEMCPY_RT_ASYNC)
CUDA_PROBE(CUDART, cudaMemcpy_ptds, MEMCPY_RT)
CUDA_PROBE(CUDART, cudaMemcpyAsync_ptsz, MEMCPY_RT_ASYNC)
CUDA_PROBE(CUDART, cudaMemset, MEMSET_RT)
CUDA_PROBE(CUDART, cudaMemsetAsync, MEMSET_RT_ASYNC)
CUDA_PROBE(CUDA, cuMemcpy, MEMCPY_DRV)
CUDA_PROBE(CUDA, cuMemcpyAsync, MEMCPY_DRV_ASYNC)
CUDA_PROBE(CUDA, cuMemcpyHtoD_v2, MEMCPY_HTOD)
CUDA_PROBE(CUDA, cuMemcpyDtoH_v2, MEMCPY_DTOH)
CUDA_PROBE(CUDA, cuMemcpyDtoD_v2, MEMCPY_DTOD)
CUDA_PROBE(CUDA, cuMemcpyHtoDAsync_v2, MEMCPY_HTOD_ASYNC)
CUDA_PROBE(CUDA, cuMemcpyDtoHAsync_v2, MEMCPY_DTOH_ASYNC)
CUDA_PROBE(CUDA, cuMemcpyDtoDAsync_v2, MEMCPY_DTOD_ASYNC)
CUDA_PROBE(CUDA, cuMemcpyAsync_ptsz, MEMCPY_DRV_ASYNC)
CUDA_PROBE(CUDA, cuMemcpyHtoDAsync_v2_ptsz, MEMCPY_HTOD_ASYNC)
CUDA_PROBE(CUDA, cuMemcpyDtoHAsync_v2_ptsz, MEMCPY_DTOH_ASYNC)
CUDA_PROBE(CUDA, cuMemsetD8_v2, MEMSET_D8)
CUDA_PROBE(CUDA, cuMemsetD32_v2, MEMSET_D32)
CUDA_PROBE(CUDA, cuMemsetD8Async, MEMSET_D8_ASYNC)
CUDA_PROBE(CUDA, cuMemsetD32Async, MEMSET_D32_ASYNC)

/* Allocation: memory footprint over time and allocator stalls (cudaFree
 * and synchronous frees can serialise the device). */
CUDA_PROBE(CUDART, cudaMalloc, ALLOC_DEVICE)
CUDA_PROBE(CUDART, cudaFree, FREE_DEVICE)
CUDA_PROBE(CUDART, cudaMallocAsync, ALLOC_DEVICE)
CUDA_PROBE(CUDART, cudaFreeAsync, FREE_DEVICE)
CUDA_PROBE(CUDART, cudaMallocHost, ALLOC_HOST)
CUDA_PROBE(CUDART, cudaFreeHost, FREE_HOST)
CUDA_PROBE(CUDART, cudaMallocManaged, ALLOC_MANAGED)
CUDA_PROBE(CUDA, cuMemAlloc_v2, ALLOC_DEVICE)
CUDA_PROBE(CUDA, cuMemFree_v2, FREE_DEVICE)
CUDA_PROBE(CUDA, cuMemAllocAsync, ALLOC_DEVICE)
CUDA_PROBE(CUDA, cuMemFreeAsync, FREE_DEVICE)
CUDA_PROBE(CUDA, cuMemAllocHost_v2, ALLOC_HOST)
CUDA_PROBE(CUDA, cuMemFreeHost, FREE_HOST)
CUDA_PROBE(CUDA, cuMemAllocManaged, ALLOC_MANAGED)

/* Synchronisation: where the host thread blocks waiting for the GPU; the
 * core of "why is my step slow" attribution. */
CUDA_PROBE(CUDART, cudaDeviceSynchronize, SYNC_DEVICE)
CUDA_PROBE(CUDART, cudaStreamSynchronize, SYNC_STREAM)
CUDA_PROBE(CUDART, cudaEventSynchronize, SYNC_EVENT)
CUDA_PROBE(CUDART, cudaStreamWaitEvent, STREAM_WAIT_EVENT)
CUDA_PROBE(CUDA, cuCtxSynchronize, SYNC_DEVICE)
CUDA_PROBE(CUDA, cuStreamSynchronize, SYNC_STREAM)
CUDA_PROBE(CUDA, cuStreamSynchronize_ptsz, SYNC_STREAM)
CUDA_PROBE(CUDA, cuEventSynchronize, SYNC_EVENT)
CUDA_PROBE(CUDA, cuStreamWaitEvent, STREAM_WAIT_EVENT)
