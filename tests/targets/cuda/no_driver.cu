// Calls one probed function of each kind and reports what each returned, whatever it
// returned: on the simulator every call succeeds; with NVIDIA's own libcudart and no driver
// each fails (cudaErrorInsufficientDriver or similar), which is what the test of gpuspy's
// probes on the real runtime needs.  Prints "RESULT api=<function> error=<name>" per call.
#include <cuda_runtime.h>
#include <stdio.h>

__global__ void lonely_kernel(int *p)
{
	if (p)
		*p = 1;
}

static void result(const char *api, cudaError_t e)
{
	printf("RESULT api=%s error=%s\n", api, cudaGetErrorName(e));
}

int main(void)
{
	void *d = NULL;
	char h[64] = {0};

	setvbuf(stdout, NULL, _IOLBF, 0);
	result("cudaMalloc", cudaMalloc(&d, sizeof(h)));
	result("cudaMemcpy", cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
	lonely_kernel<<<1, 1>>>((int *)d);
	result("__cudaLaunchKernel", cudaGetLastError());
	result("cudaDeviceSynchronize", cudaDeviceSynchronize());
	result("cudaFree", cudaFree(d));
	printf("DONE ok\n");
	return 0;
}
