// Memory API: allocations, synchronous and asynchronous copies in every
// direction, memsets, stream-ordered allocation, and the errors a GPU reports
// for bad frees and bad arguments.  Data is checked only through copies and
// memsets (the simulator does not execute kernels).
#include <string.h>

#include "common.h"

#define BIG   (8u << 20) // 8 MiB: long enough to time
#define SMALL (64u << 10)

static void check_round_trip(void)
{
	unsigned char *h_in = (unsigned char *)malloc(BIG), *h_out = (unsigned char *)malloc(BIG);
	for (size_t i = 0; i < BIG; i++)
		h_in[i] = (unsigned char)(i * 7 + 3);
	void *d_a, *d_b;
	CHECK(alloc_device(&d_a, BIG));
	CHECK(alloc_device(&d_b, BIG));
	long long t0 = now_ns();
	CHECK(copy_sync(d_a, h_in, BIG, cudaMemcpyHostToDevice));
	printf("TIMING htod_sync_ns=%lld\n", now_ns() - t0);
	CHECK(copy_sync(d_b, d_a, BIG, cudaMemcpyDeviceToDevice));
	t0 = now_ns();
	CHECK(copy_sync(h_out, d_b, BIG, cudaMemcpyDeviceToHost));
	printf("TIMING dtoh_sync_ns=%lld\n", now_ns() - t0);
	EXPECT(memcmp(h_in, h_out, BIG) == 0, "HtoD->DtoD->DtoH round trip differs");
	printf("CHECK round trip %u bytes ok\n", BIG);

	CHECK(fill_sync(d_b, 0xAB, SMALL));
	CHECK(copy_sync(h_out, d_b, SMALL, cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < SMALL; i++)
		EXPECT(h_out[i] == 0xAB, "memset byte %zu is 0x%02x", i, h_out[i]);
	EXPECT(memcmp(h_out + SMALL, h_in + SMALL, 16) == 0, "memset overran");
	printf("CHECK memset ok\n");
	CHECK(free_device(d_a));
	CHECK(free_device(d_b));
	free(h_in);
	free(h_out);
}

static void check_async(void)
{
	cudaStream_t s;
	CHECK(cudaStreamCreate(&s));
	unsigned char *h_pin, *h_back;
	CHECK(alloc_host(&h_pin, BIG));
	CHECK(alloc_host(&h_back, BIG));
	for (size_t i = 0; i < BIG; i++)
		h_pin[i] = (unsigned char)(i ^ 0x5a);
	void *d;
	CHECK(alloc_async(&d, BIG, s));
	long long t0 = now_ns();
	CHECK(copy_async(d, h_pin, BIG, cudaMemcpyHostToDevice, s, "s"));
	long long issued = now_ns() - t0;
	CHECK(fill_async(d, 0x11, SMALL, s, "s"));
	CHECK(copy_async(h_back, d, BIG, cudaMemcpyDeviceToHost, s, "s"));
	CHECK(free_async(d, s));
	CHECK(sync_stream(s));
	long long done = now_ns() - t0;
	printf("TIMING async_issue_ns=%lld\nTIMING async_total_ns=%lld\n", issued, done);
	for (size_t i = 0; i < BIG; i++) {
		unsigned char want = i < SMALL ? 0x11 : (unsigned char)(i ^ 0x5a);
		EXPECT(h_back[i] == want, "async byte %zu is 0x%02x, want 0x%02x", i, h_back[i],
		       want);
	}
	printf("CHECK async copies in stream order ok\n");
	CHECK(free_host(h_pin));
	CHECK(free_host(h_back));
	CHECK(cudaStreamDestroy(s));
}

static void check_errors(void)
{
	void *d;
	CHECK(alloc_device(&d, SMALL));
	CHECK(free_device(d));
	EXPECT_ERR_AS("cudaFree(d)", free_device(d), cudaErrorInvalidValue); // double free
	EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue);		     // sticky until read
	EXPECT_ERR(cudaGetLastError(), cudaSuccess);
	EXPECT_ERR_AS("cudaFree((void *)0x1234)", free_device((void *)0x1234),
		      cudaErrorInvalidValue); // never allocated
	EXPECT_ERR(cudaPeekAtLastError(), cudaErrorInvalidValue);
	EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
	EXPECT_ERR_AS("cudaFree(NULL)", free_device(NULL), cudaSuccess);
	EXPECT_ERR(cudaSetDevice(4096), cudaErrorInvalidDevice);
	char h[16];
	void *d2;
	CHECK(alloc_device(&d2, 16));
	EXPECT_ERR_AS("cudaMemcpy(h, d2, 16, (cudaMemcpyKind)42)",
		      copy_sync(h, d2, 16, (cudaMemcpyKind)42), cudaErrorInvalidMemcpyDirection);
	CHECK(free_device(d2));
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
	CHECK(sync_device());
	printf("DONE ok\n");
	return 0;
}
