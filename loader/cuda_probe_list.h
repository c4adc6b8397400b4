/* The CUDA entry points gpuspy attaches uprobes to: the single source of
 * truth for the loader, and for the tests that check every name against
 * NVIDIA's own libraries (tests/fakecuda.bats parses this file).
 *
 * X-macro: define CUDA_PROBE(LIBRARY, SYMBOL) and include this file.
 *   LIBRARY  CUDART  libcudart.so.13 (symbols versioned "libcudart.so.13")
 *            CUDA    libcuda.so.1    (unversioned)
 *   SYMBOL   the exported name, exactly (e.g. the _v2/_ptsz ABI variant).
 * Keep it plain preprocessor: one CUDA_PROBE(...) per line, no other code. */
#ifndef CUDA_PROBE
#error "define CUDA_PROBE(LIBRARY, SYMBOL) before including cuda_probe_list.h"
#endif

/* Kernel launches.  nvcc's <<<>>> stubs call __cudaLaunchKernel (CUDA 13),
 * older code and frameworks call cudaLaunchKernel; everything reaches the
 * driver's cuLaunchKernel*, which is also what Triton, CuPy and PyTorch's
 * JIT call directly.  Graph launches submit many kernels at once. */
CUDA_PROBE(CUDART, __cudaLaunchKernel)
CUDA_PROBE(CUDART, __cudaLaunchKernel_ptsz)
CUDA_PROBE(CUDART, cudaLaunchKernel)
CUDA_PROBE(CUDART, cudaLaunchKernel_ptsz)
CUDA_PROBE(CUDA, cuLaunchKernel)
CUDA_PROBE(CUDA, cuLaunchKernel_ptsz)
CUDA_PROBE(CUDA, cuLaunchKernelEx)
CUDA_PROBE(CUDA, cuLaunchKernelEx_ptsz)
CUDA_PROBE(CUDA, cuGraphLaunch)
CUDA_PROBE(CUDA, cuGraphLaunch_ptsz)

/* Kernel names.  Launch arguments carry only handles; these calls bind a
 * handle (host stub, CUfunction, CUkernel) to its mangled device name. */
CUDA_PROBE(CUDART, __cudaRegisterFunction)
CUDA_PROBE(CUDA, cuModuleGetFunction)
CUDA_PROBE(CUDA, cuLibraryGetKernel)
CUDA_PROBE(CUDA, cuKernelGetFunction)

/* Copies and memsets: host-side cost and direction/size of data movement.
 * The runtime calls map onto these driver variants. */
CUDA_PROBE(CUDART, cudaMemcpy)
CUDA_PROBE(CUDART, cudaMemcpyAsync)
CUDA_PROBE(CUDART, cudaMemcpy_ptds)
CUDA_PROBE(CUDART, cudaMemcpyAsync_ptsz)
CUDA_PROBE(CUDART, cudaMemset)
CUDA_PROBE(CUDART, cudaMemsetAsync)
CUDA_PROBE(CUDA, cuMemcpy)
CUDA_PROBE(CUDA, cuMemcpyAsync)
CUDA_PROBE(CUDA, cuMemcpyHtoD_v2)
CUDA_PROBE(CUDA, cuMemcpyDtoH_v2)
CUDA_PROBE(CUDA, cuMemcpyDtoD_v2)
CUDA_PROBE(CUDA, cuMemcpyHtoDAsync_v2)
CUDA_PROBE(CUDA, cuMemcpyDtoHAsync_v2)
CUDA_PROBE(CUDA, cuMemcpyDtoDAsync_v2)
CUDA_PROBE(CUDA, cuMemcpyAsync_ptsz)
CUDA_PROBE(CUDA, cuMemcpyHtoDAsync_v2_ptsz)
CUDA_PROBE(CUDA, cuMemcpyDtoHAsync_v2_ptsz)
CUDA_PROBE(CUDA, cuMemsetD8_v2)
CUDA_PROBE(CUDA, cuMemsetD32_v2)
CUDA_PROBE(CUDA, cuMemsetD8Async)
CUDA_PROBE(CUDA, cuMemsetD32Async)

/* Allocation: memory footprint over time and allocator stalls (cudaFree
 * and synchronous frees can serialise the device). */
CUDA_PROBE(CUDART, cudaMalloc)
CUDA_PROBE(CUDART, cudaFree)
CUDA_PROBE(CUDART, cudaMallocAsync)
CUDA_PROBE(CUDART, cudaFreeAsync)
CUDA_PROBE(CUDART, cudaMallocHost)
CUDA_PROBE(CUDART, cudaFreeHost)
CUDA_PROBE(CUDART, cudaMallocManaged)
CUDA_PROBE(CUDA, cuMemAlloc_v2)
CUDA_PROBE(CUDA, cuMemFree_v2)
CUDA_PROBE(CUDA, cuMemAllocAsync)
CUDA_PROBE(CUDA, cuMemFreeAsync)
CUDA_PROBE(CUDA, cuMemAllocHost_v2)
CUDA_PROBE(CUDA, cuMemFreeHost)
CUDA_PROBE(CUDA, cuMemAllocManaged)

/* Synchronisation: where the host thread blocks waiting for the GPU; the
 * core of "why is my step slow" attribution. */
CUDA_PROBE(CUDART, cudaDeviceSynchronize)
CUDA_PROBE(CUDART, cudaStreamSynchronize)
CUDA_PROBE(CUDART, cudaEventSynchronize)
CUDA_PROBE(CUDART, cudaStreamWaitEvent)
CUDA_PROBE(CUDA, cuCtxSynchronize)
CUDA_PROBE(CUDA, cuStreamSynchronize)
CUDA_PROBE(CUDA, cuStreamSynchronize_ptsz)
CUDA_PROBE(CUDA, cuEventSynchronize)
CUDA_PROBE(CUDA, cuStreamWaitEvent)
