// libsteps_kernels.so: the GPU side of the stall workloads (tests/targets/stalls/*.py), loaded
// through ctypes as a PyTorch extension would be. Python decides when to launch, synchronise or
// read back; this library only makes the CUDA calls, so every CUDA call is made from a Python
// line the workload can name.
//
// Three kernels with distinct names, so a report can tell them apart: tiny_kernel (launch-bound
// steps), work_kernel (ordinary step work) and long_kernel (steps the GPU limits). Each spins on
// the GPU's global timer for the duration it is given, so it really takes that long on a GPU;
// on the simulator (docs/FAKECUDA.md) the same durations come from FAKECUDA_KERNEL_NS, which
// steps_init sets before the first launch.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace
{

__device__ void spin(long long ns)
{
	unsigned long long start, now;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	} while ((long long)(now - start) < ns);
}

} // namespace

// Outside the anonymous namespace: their mangled names (_Z11tiny_kernelPfx, ...) are what
// FAKECUDA_KERNEL_NS and the reports name.
__global__ void tiny_kernel(float *out, long long ns)
{
	spin(ns);
	if (threadIdx.x == 0 && out)
		out[0] += 1.0f;
}

__global__ void work_kernel(float *out, long long ns)
{
	spin(ns);
	if (threadIdx.x == 0 && out)
		out[0] += 1.0f;
}

__global__ void long_kernel(float *out, long long ns)
{
	spin(ns);
	if (threadIdx.x == 0 && out)
		out[0] += 1.0f;
}

namespace
{

enum kernel_kind { K_TINY, K_WORK, K_LONG, K_COUNT };

const char *const mangled[K_COUNT] = {"_Z11tiny_kernelPfx", "_Z11work_kernelPfx",
				      "_Z11long_kernelPfx"};
long long durations[K_COUNT];
float *device_buf;
const int N_EVENTS = 8;
cudaEvent_t events[N_EVENTS];

} // namespace

// Sets the three kernels' durations (ns) and initialises CUDA; must come before any launch,
// since the simulator reads FAKECUDA_KERNEL_NS at its first kernel. Durations already in the
// environment for these names win (the simulator takes the first one given for a name, and ours
// are appended). Returns a cudaError_t.
EXPORT int steps_init(long long tiny_ns, long long work_ns, long long long_ns)
{
	durations[K_TINY] = tiny_ns;
	durations[K_WORK] = work_ns;
	durations[K_LONG] = long_ns;
	char spec[512];
	const char *old = getenv("FAKECUDA_KERNEL_NS");
	int n = snprintf(spec, sizeof(spec), "%s%s%s=%lld,%s=%lld,%s=%lld", old ? old : "",
			 old && *old ? "," : "", mangled[K_TINY], tiny_ns, mangled[K_WORK], work_ns,
			 mangled[K_LONG], long_ns);
	if (n < 0 || n >= (int)sizeof(spec))
		return cudaErrorInvalidValue;
	setenv("FAKECUDA_KERNEL_NS", spec, 1);
	cudaError_t err = cudaSetDevice(0);
	if (err == cudaSuccess)
		err = cudaMalloc(&device_buf, 4096);
	if (err == cudaSuccess)
		err = cudaMemset(device_buf, 0, 4096);
	for (int i = 0; i < N_EVENTS && err == cudaSuccess; i++)
		err = cudaEventCreateWithFlags(&events[i], cudaEventDisableTiming);
	return err;
}

// Launches `count` kernels of one kind (0 tiny, 1 work, 2 long) on the legacy default stream,
// asynchronously. Returns a cudaError_t.
EXPORT int steps_launch(int kind, int count)
{
	if (kind < 0 || kind >= K_COUNT || count < 0)
		return cudaErrorInvalidValue;
	for (int i = 0; i < count; i++) {
		switch (kind) {
		case K_TINY:
			tiny_kernel<<<1, 32>>>(device_buf, durations[K_TINY]);
			break;
		case K_WORK:
			work_kernel<<<1, 32>>>(device_buf, durations[K_WORK]);
			break;
		default:
			long_kernel<<<1, 32>>>(device_buf, durations[K_LONG]);
			break;
		}
		cudaError_t err = cudaGetLastError();
		if (err != cudaSuccess)
			return err;
	}
	return cudaSuccess;
}

// Waits for everything launched so far (cudaDeviceSynchronize).
EXPORT int steps_sync(void)
{
	return cudaDeviceSynchronize();
}

// Reads a 4-byte scalar back into `*out` with a blocking device-to-host cudaMemcpy, as
// PyTorch's Tensor.item() does: it waits for every kernel before it on the default stream.
EXPORT int steps_item(float *out)
{
	return cudaMemcpy(out, device_buf, sizeof(float), cudaMemcpyDeviceToHost);
}

// Records event `slot` (0..7) after the work launched so far, and waits for it: a pipeline that
// keeps a step queued ahead of the GPU waits for the step before the last one this way.
EXPORT int steps_record_event(int slot)
{
	if (slot < 0 || slot >= N_EVENTS)
		return cudaErrorInvalidValue;
	return cudaEventRecord(events[slot], 0);
}

EXPORT int steps_wait_event(int slot)
{
	if (slot < 0 || slot >= N_EVENTS)
		return cudaErrorInvalidValue;
	return cudaEventSynchronize(events[slot]);
}

// NVTX push/pop ranges (header-only NVTX: they reach a tool through NVTX_INJECTION64_PATH), as
// torch.cuda.nvtx.range_push/range_pop make them.
EXPORT void steps_range_push(const char *name)
{
	nvtxRangePushA(name);
}

EXPORT void steps_range_pop(void)
{
	nvtxRangePop();
}

// Waits for the GPU and frees what steps_init allocated. Returns the first cudaError_t.
EXPORT int steps_finish(void)
{
	cudaError_t err = cudaDeviceSynchronize();
	for (int i = 0; i < N_EVENTS; i++)
		if (events[i])
			cudaEventDestroy(events[i]);
	cudaError_t free_err = cudaFree(device_buf);
	device_buf = NULL;
	return err != cudaSuccess ? err : free_err;
}
