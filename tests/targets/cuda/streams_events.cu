// Several kernels on two streams and the default stream, events, queries and
// synchronisation.  Expectations hold on a real GPU and on the simulator:
// spin_kernel runs SPIN_NS on both (see common.h).
#include "common.h"

#define SPIN_NS 20000000LL // 20 ms
#define MS(ns)	((double)(ns) / 1e6)

__global__ void axpy_kernel(float *y, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}

__global__ void scale2d_kernel(float *m, int w, int h)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < w && y < h)
		m[y * w + x] *= 2.0f;
}

static cudaStream_t s1, s2;
static float *d_x, *d_y;
static const int N = 1 << 16;

static void spin(cudaStream_t s, const char *label)
{
	spin_kernel<<<1, 32, 0, s>>>(SPIN_NS);
	print_launch(SPIN_NAME, dim3(1), dim3(32), label);
}

static void axpy(dim3 g, dim3 b, cudaStream_t s, const char *label)
{
	axpy_kernel<<<g, b, 0, s>>>(d_y, d_x, 2.0f, N);
	print_launch("_Z11axpy_kernelPfPKffi", g, b, label);
}

// Lazy module loading happens on first use; keep it out of the timings.
static void warm_up(void)
{
	spin_kernel<<<1, 1, 0, s1>>>(0);
	print_launch(SPIN_NAME, dim3(1), dim3(1), "s1");
	axpy(dim3(1), dim3(32), 0, "default");
	scale2d_kernel<<<dim3(1, 1), dim3(8, 8)>>>(d_y, 8, 8);
	print_launch("_Z14scale2d_kernelPfii", dim3(1), dim3(8, 8), "default");
	CHECK(sync_device());
}

static void check_overlap(void)
{
	long long t0 = now_ns();
	spin(s1, "s1");
	spin(s2, "s2");
	long long launched = now_ns() - t0;
	CHECK(sync_device());
	long long total = now_ns() - t0;
	printf("TIMING overlap_launch_ns=%lld\nTIMING overlap_sync_ns=%lld\n", launched, total);
	EXPECT(launched < SPIN_NS / 4, "launches blocked for %.3f ms", MS(launched));
	EXPECT(total >= SPIN_NS && total < SPIN_NS * 7 / 4,
	       "two streams took %.3f ms, want overlap (~%.0f ms)", MS(total), MS(SPIN_NS));
	printf("CHECK two streams overlap %.3f ms ok\n", MS(total));
}

static void check_fifo_and_events(void)
{
	cudaEvent_t a, b;
	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	long long t0 = now_ns();
	CHECK(cudaEventRecord(a, s1));
	spin(s1, "s1");
	spin(s1, "s1");
	CHECK(cudaEventRecord(b, s1));
	EXPECT_ERR(cudaEventQuery(b), cudaErrorNotReady);
	CHECK(sync_event(b));
	long long waited = now_ns() - t0;
	float ms = 0;
	CHECK(cudaEventElapsedTime(&ms, a, b));
	printf("TIMING fifo_sync_ns=%lld\nTIMING fifo_event_ms=%.3f\n", waited, ms);
	EXPECT(waited >= 2 * SPIN_NS, "event sync returned after %.3f ms", MS(waited));
	EXPECT(ms >= 2 * MS(SPIN_NS) * 0.98 && ms < 2 * MS(SPIN_NS) * 1.5,
	       "elapsed %.3f ms between events around two %.0f ms kernels", ms, MS(SPIN_NS));
	printf("CHECK stream is FIFO, events %.3f ms ok\n", ms);
	CHECK(cudaEventDestroy(a));
	CHECK(cudaEventDestroy(b));
}

static void check_queries(void)
{
	cudaEvent_t e;
	CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	spin(s2, "s2");
	CHECK(cudaEventRecord(e, s2));
	EXPECT_ERR(cudaStreamQuery(s2), cudaErrorNotReady);
	EXPECT_ERR(cudaEventQuery(e), cudaErrorNotReady);
	long long t0 = now_ns();
	CHECK(sync_stream(s2));
	printf("TIMING stream_sync_ns=%lld\n", now_ns() - t0);
	EXPECT_ERR(cudaStreamQuery(s2), cudaSuccess);
	EXPECT_ERR(cudaEventQuery(e), cudaSuccess);
	// Not-ready is a status, not an error: it must not stick.
	EXPECT_ERR(cudaGetLastError(), cudaSuccess);
	CHECK(cudaEventDestroy(e));
}

static void check_cross_stream_wait(void)
{
	cudaEvent_t e;
	CHECK(cudaEventCreate(&e));
	long long t0 = now_ns();
	spin(s1, "s1");
	CHECK(cudaEventRecord(e, s1));
	CHECK(wait_event(s2, e));
	spin(s2, "s2");
	CHECK(sync_stream(s2));
	long long waited = now_ns() - t0;
	printf("TIMING wait_event_ns=%lld\n", waited);
	EXPECT(waited >= 2 * SPIN_NS, "s2 did not wait for s1: %.3f ms", MS(waited));
	printf("CHECK stream waits for event %.3f ms ok\n", MS(waited));
	CHECK(cudaEventDestroy(e));
}

static void launch_mix(void)
{
	axpy(dim3(4), dim3(256), s1, "s1");
	scale2d_kernel<<<dim3(8, 4, 1), dim3(16, 16, 1), 0, s2>>>(d_y, 128, 64);
	print_launch("_Z14scale2d_kernelPfii", dim3(8, 4, 1), dim3(16, 16, 1), "s2");
	axpy(dim3(2), dim3(128), 0, "default");
	CHECK(sync_device());
	printf("CHECK kernel mix ok\n");
}

static void check_bad_launch(void)
{
	// 2048 threads per block is over every GPU's limit: nothing runs.
	axpy_kernel<<<1, 2048>>>(d_y, d_x, 1.0f, N);
	EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidConfiguration);
	print_launch_failed("_Z11axpy_kernelPfPKffi", cudaErrorInvalidConfiguration, dim3(1),
			    dim3(2048), "default");
	EXPECT_ERR(cudaGetLastError(), cudaSuccess);
}

int main(void)
{
	use_spin_duration(SPIN_NS);
	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreate(&s1));
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CHECK(alloc_device(&d_x, N * sizeof(float)));
	CHECK(alloc_device(&d_y, N * sizeof(float)));
	CHECK(fill_sync(d_x, 0, N * sizeof(float)));
	CHECK(fill_sync(d_y, 0, N * sizeof(float)));
	warm_up();
	check_overlap();
	check_fifo_and_events();
	check_queries();
	check_cross_stream_wait();
	launch_mix();
	check_bad_launch();
	CHECK(free_device(d_x));
	CHECK(free_device(d_y));
	CHECK(cudaStreamDestroy(s1));
	CHECK(cudaStreamDestroy(s2));
	printf("DONE ok\n");
	return 0;
}
