// libdlkernels.so: kernels in a library that dlopen_host loads only after a
// tracer has attached, so the CUDA runtime, the fatbinary registration and
// the kernel names all arrive in a process the tracer is already watching.
// dl_run prints the calls.h line of every traced call it makes.
#include "calls.h"

#define ALPHA_NAME "_Z15dl_alpha_kernelPfi"
#define BETA_NAME  "_Z14dl_beta_kernelPi"
#define BUF_FLOATS 384 // covers beta's 3 x 128 threads

static const dim3 alpha_grid(1), alpha_block(32), beta_grid(3), beta_block(128);

__global__ void dl_alpha_kernel(float *buf, int n)
{
	buf[threadIdx.x] += (float)n;
}

__global__ void dl_beta_kernel(int *buf)
{
	buf[blockIdx.x * blockDim.x + threadIdx.x] ^= 1;
}

// Prints why and returns nonzero: a library reports failure, it does not exit.
static int failed(const char *what, cudaError_t e)
{
	printf("FAIL dl_run: %s -> %s\n", what, cudaGetErrorName(e));
	return 1;
}

static void launch_all(float *buf, int n)
{
	for (int i = 0; i < n; i++) {
		dl_alpha_kernel<<<alpha_grid, alpha_block>>>(buf, n);
		print_launch(ALPHA_NAME, alpha_grid, alpha_block, "default");
	}
	for (int i = 0; i < 2 * n; i++) {
		dl_beta_kernel<<<beta_grid, beta_block>>>((int *)buf);
		print_launch(BETA_NAME, beta_grid, beta_block, "default");
	}
}

// n alpha and 2n beta launches on the default stream; 0 on success.
extern "C" __attribute__((visibility("default"))) int dl_run(int n)
{
	float *buf;
	cudaError_t e = alloc_device(&buf, BUF_FLOATS * sizeof(float));
	if (e != cudaSuccess)
		return failed("cudaMalloc", e);
	launch_all(buf, n);
	cudaError_t launched = cudaGetLastError();
	cudaError_t synced = sync_device();
	e = free_device(buf);
	if (launched != cudaSuccess)
		return failed("launch", launched);
	if (synced != cudaSuccess)
		return failed("cudaDeviceSynchronize", synced);
	return e == cudaSuccess ? 0 : failed("cudaFree", e);
}
