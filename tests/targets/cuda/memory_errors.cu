// Memory API: allocations, synchronous and asynchronous copies in every
// direction, memsets, stream-ordered allocation, and the errors a GPU reports
// for bad frees and bad arguments.  Data is checked only through copies and
// memsets (the simulator does not execute kernels).
#include <string.h>

#include "common.h"

#define BIG   (8u << 20) // 8 MiB: long enough to time
#define SMALL (64u << 10)

static void memcpy_line(const char *kind, size_t bytes, const char *stream)
{
	printf("MEMCPY kind=%s bytes=%zu stream=%s\n", kind, bytes, stream);
}

static void check_round_trip(void)
{
	unsigned char *h_in = (unsigned char *)malloc(BIG), *h_out = (unsigned char *)malloc(BIG);
	for (size_t i = 0; i < BIG; i++)
		h_in[i] = (unsigned char)(i * 7 + 3);
	void *d_a, *d_b;
	CHECK(cudaMalloc(&d_a, BIG));
	CHECK(cudaMalloc(&d_b, BIG));
	long long t0 = now_ns();
	CHECK(cudaMemcpy(d_a, h_in, BIG, cudaMemcpyHostToDevice));
	printf("TIMING htod_sync_ns=%lld\n", now_ns() - t0);
	memcpy_line("HtoD", BIG, "default");
	CHECK(cudaMemcpy(d_b, d_a, BIG, cudaMemcpyDeviceToDevice));
	memcpy_line("DtoD", BIG, "default");
	t0 = now_ns();
	CHECK(cudaMemcpy(h_out, d_b, BIG, cudaMemcpyDeviceToHost));
	printf("TIMING dtoh_sync_ns=%lld\n", now_ns() - t0);
	memcpy_line("DtoH", BIG, "default");
	EXPECT(memcmp(h_in, h_out, BIG) == 0, "HtoD->DtoD->DtoH round trip differs");
	printf("CHECK round trip %u bytes ok\n", BIG);

	CHECK(cudaMemset(d_b, 0xAB, SMALL));
	printf("MEMSET bytes=%u stream=default\n", SMALL);
	CHECK(cudaMemcpy(h_out, d_b, SMALL, cudaMemcpyDeviceToHost));
	memcpy_line("DtoH", SMALL, "default");
	for (size_t i = 0; i < SMALL; i++)
		EXPECT(h_out[i] == 0xAB, "memset byte %zu is 0x%02x", i, h_out[i]);
	EXPECT(memcmp(h_out + SMALL, h_in + SMALL, 16) == 0, "memset overran");
	printf("CHECK memset ok\n");
	CHECK(cudaFree(d_a));
	CHECK(cudaFree(d_b));
	free(h_in);
	free(h_out);
}

static void check_async(void)
{
	cudaStream_t s;
	CHECK(cudaStreamCreate(&s));
	unsigned char *h_pin, *h_back;
	CHECK(cudaMallocHost((void **)&h_pin, BIG));
	CHECK(cudaMallocHost((void **)&h_back, BIG));
	for (size_t i = 0; i < BIG; i++)
		h_pin[i] = (unsigned char)(i ^ 0x5a);
	void *d;
	CHECK(cudaMallocAsync(&d, BIG, s));
	long long t0 = now_ns();
	CHECK(cudaMemcpyAsync(d, h_pin, BIG, cudaMemcpyHostToDevice, s));
	long long issued = now_ns() - t0;
	memcpy_line("HtoD", BIG, "s");
	CHECK(cudaMemsetAsync(d, 0x11, SMALL, s));
	printf("MEMSET bytes=%u stream=s\n", SMALL);
	CHECK(cudaMemcpyAsync(h_back, d, BIG, cudaMemcpyDeviceToHost, s));
	memcpy_line("DtoH", BIG, "s");
	CHECK(cudaFreeAsync(d, s));
	CHECK(cudaStreamSynchronize(s));
	long long done = now_ns() - t0;
	printf("TIMING async_issue_ns=%lld\nTIMING async_total_ns=%lld\n", issued, done);
	for (size_t i = 0; i < BIG; i++) {
		unsigned char want = i < SMALL ? 0x11 : (unsigned char)(i ^ 0x5a);
		EXPECT(h_back[i] == want, "async byte %zu is 0x%02x, want 0x%02x", i, h_back[i],
		       want);
	}
	printf("CHECK async copies in stream order ok\n");
	CHECK(cudaFreeHost(h_pin));
	CHECK(cudaFreeHost(h_back));
	CHECK(cudaStreamDestroy(s));
}

static void check_errors(void)
{
	void *d;
	CHECK(cudaMalloc(&d, SMALL));
	CHECK(cudaFree(d));
	EXPECT_ERR(cudaFree(d), cudaErrorInvalidValue);	       // double free
	EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue); // sticky until read
	EXPECT_ERR(cudaGetLastError(), cudaSuccess);
	EXPECT_ERR(cudaFree((void *)0x1234), cudaErrorInvalidValue); // never allocated
	EXPECT_ERR(cudaPeekAtLastError(), cudaErrorInvalidValue);
	EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
	EXPECT_ERR(cudaFree(NULL), cudaSuccess);
	EXPECT_ERR(cudaSetDevice(4096), cudaErrorInvalidDevice);
	char h[16];
	void *d2;
	CHECK(cudaMalloc(&d2, 16));
	EXPECT_ERR(cudaMemcpy(h, d2, 16, (cudaMemcpyKind)42), cudaErrorInvalidMemcpyDirection);
	CHECK(cudaFree(d2));
	cudaEvent_t a, b;
	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	float ms;
	EXPECT_ERR(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
	CHECK(cudaEventDestroy(a));
	CHECK(cudaEventDestroy(b));
	cudaGetLastError();
	printf("CHECK error strings: %s / %s ok\n", cudaGetErrorString(cudaErrorInvalidValue),
	       cudaGetErrorName(cudaErrorInvalidValue));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int n = 0, version = 0;
	CHECK(cudaGetDeviceCount(&n));
	EXPECT(n >= 1, "no device");
	CHECK(cudaDriverGetVersion(&version));
	cudaDeviceProp prop;
	CHECK(cudaGetDeviceProperties(&prop, 0));
	printf("CHECK device %s sm_%d%d driver %d ok\n", prop.name, prop.major, prop.minor,
	       version);
	check_round_trip();
	check_async();
	check_errors();
	CHECK(cudaDeviceSynchronize());
	printf("DONE ok\n");
	return 0;
}
