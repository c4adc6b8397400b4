/* Prints, for every device, what cudaGetDeviceProperties() reports under the keys PyTorch's
 * Kineto writes in a trace's deviceProperties (libkineto's DeviceProperties.cpp reads the same
 * cudaDeviceProp fields), one JSON object a line:
 *   DEVICE {"id": 0, "name": "...", "totalGlobalMem": ..., ...}
 * then runs one kernel on each, so a recording has GPU work on every device it lists. The
 * oracle for the Kineto export's deviceProperties (tests/cupti.bats): the runtime's answer,
 * not CUPTI's. */
#include "common.h"

__global__ void touch_kernel(int *p)
{
	if (p)
		p[threadIdx.x] = 0;
}

/* A device name holds no quote or backslash on any NVIDIA part, but print it as JSON anyway. */
static void print_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int n = 0;
	CHECK(cudaGetDeviceCount(&n));
	EXPECT(n >= 1, "no device");
	for (int i = 0; i < n; i++) {
		cudaDeviceProp p;
		CHECK(cudaGetDeviceProperties(&p, i));
		printf("DEVICE {\"id\": %d, \"name\": ", i);
		print_json_string(p.name);
		printf(", \"totalGlobalMem\": %zu, \"computeMajor\": %d, \"computeMinor\": %d, "
		       "\"maxThreadsPerBlock\": %d, \"maxThreadsPerMultiprocessor\": %d, "
		       "\"regsPerBlock\": %d, \"regsPerMultiprocessor\": %d, \"warpSize\": %d, "
		       "\"sharedMemPerBlock\": %zu, \"sharedMemPerMultiprocessor\": %zu, "
		       "\"numSms\": %d, \"sharedMemPerBlockOptin\": %zu}\n",
		       p.totalGlobalMem, p.major, p.minor, p.maxThreadsPerBlock,
		       p.maxThreadsPerMultiProcessor, p.regsPerBlock, p.regsPerMultiprocessor,
		       p.warpSize, p.sharedMemPerBlock, p.sharedMemPerMultiprocessor,
		       p.multiProcessorCount, p.sharedMemPerBlockOptin);
	}
	for (int i = 0; i < n; i++) {
		dim3 g(1), b(32);
		CHECK(cudaSetDevice(i));
		touch_kernel<<<g, b>>>(NULL);
		CHECK(cudaGetLastError());
		print_launch("_Z12touch_kernelPi", g, b, "default");
		CHECK(sync_device());
	}
	printf("DONE ok\n");
	return 0;
}
