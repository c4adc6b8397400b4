// Several kernels on two streams and the default stream, events, queries and
// synchronisation.  Expectations hold on a real GPU and on the simulator:
// spin_kernel runs SPIN_NS on both (see common.h).  They are orderings and device
// times between events, never the host's wall clock, so they hold on a loaded machine.
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

// How many times a check that needs the host to be quicker than a kernel queues its work
// again when it was not (a loaded machine): the answer of a query made right after queueing
// says which case it was, so no wall-clock limit is needed.
#define ATTEMPTS 10

static void again_or_fail(int attempt, const char *what)
{
	EXPECT(attempt < ATTEMPTS, "%s, %d times in a row", what, ATTEMPTS);
	printf("RETRY %s\n", what);
}

static void destroy_events(cudaEvent_t *e, int n)
{
	for (int i = 0; i < n; i++)
		CHECK(cudaEventDestroy(e[i]));
}

// Two kernels on two streams run at once. The second is queued while the first still runs
// (its end event not reached yet when queried after the second launch returned: an
// ordering, which also shows that launches do not block), so on streams that overlap it
// starts at once: the second stream's start event comes before the first's end event, and
// the second kernel ends less than a kernel's time after the first (device time, between
// events).
static void check_overlap(void)
{
	cudaEvent_t ev[4]; // first start, first end, second start, second end
	cudaError_t first = cudaSuccess;
	float started, ended;

	for (int i = 0; i < 4; i++)
		CHECK(cudaEventCreate(&ev[i]));
	for (int attempt = 1;; attempt++) {
		CHECK(cudaEventRecord(ev[0], s1));
		spin(s1, "s1");
		CHECK(cudaEventRecord(ev[1], s1));
		CHECK(cudaEventRecord(ev[2], s2));
		spin(s2, "s2");
		CHECK(cudaEventRecord(ev[3], s2));
		first = cudaEventQuery(ev[1]);
		CHECK(sync_device());
		EXPECT(first == cudaErrorNotReady || first == cudaSuccess, "cudaEventQuery -> %s",
		       cudaGetErrorName(first));
		if (first == cudaErrorNotReady)
			break;
		again_or_fail(attempt,
			      "overlap: the first kernel ended before the second was queued");
	}
	CHECK(cudaEventElapsedTime(&started, ev[2], ev[1]));
	CHECK(cudaEventElapsedTime(&ended, ev[1], ev[3]));
	printf("TIMING overlap_second_start_before_first_end_ms=%.3f\n", started);
	printf("TIMING overlap_second_end_after_first_end_ms=%.3f\n", ended);
	EXPECT(started > 0 && ended < MS(SPIN_NS),
	       "the second stream's kernel ran after the first: started %.3f ms before its end, "
	       "ended %.3f ms after it",
	       started, ended);
	printf("CHECK two streams overlap ok\n");
	destroy_events(ev, 4);
}

// One stream is FIFO: of two kernels queued on it, the second starts once the first ended,
// and an event after them is reached only when both are done (device time between events).
static void check_fifo_and_events(void)
{
	cudaEvent_t ev[3]; // before, between and after the two kernels
	float first, second;

	for (int i = 0; i < 3; i++)
		CHECK(cudaEventCreate(&ev[i]));
	CHECK(cudaEventRecord(ev[0], s1));
	spin(s1, "s1");
	CHECK(cudaEventRecord(ev[1], s1));
	spin(s1, "s1");
	CHECK(cudaEventRecord(ev[2], s1));
	CHECK(sync_event(ev[2]));
	EXPECT_ERR(cudaStreamQuery(s1), cudaSuccess);
	CHECK(cudaEventElapsedTime(&first, ev[0], ev[1]));
	CHECK(cudaEventElapsedTime(&second, ev[1], ev[2]));
	printf("TIMING fifo_event_ms=%.3f\n", first + second);
	EXPECT(first >= MS(SPIN_NS) && second >= MS(SPIN_NS),
	       "%.3f ms and %.3f ms between events around two %.0f ms kernels", first, second,
	       MS(SPIN_NS));
	printf("CHECK stream is FIFO, events %.3f ms ok\n", first + second);
	destroy_events(ev, 3);
}

// A query of unfinished work answers cudaErrorNotReady, a status that does not stick, and
// cudaSuccess once the work is done. The kernel must still run when queried: if the host was
// slower than it, it is queued again.
static void check_queries(void)
{
	cudaEvent_t e;
	cudaError_t event, stream;

	CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	for (int attempt = 1;; attempt++) {
		spin(s2, "s2");
		CHECK(cudaEventRecord(e, s2));
		event = cudaEventQuery(e);
		stream = cudaStreamQuery(s2);
		CHECK(sync_stream(s2));
		if (stream == cudaErrorNotReady)
			break;
		EXPECT(stream == cudaSuccess, "cudaStreamQuery(s2) -> %s",
		       cudaGetErrorName(stream));
		again_or_fail(attempt, "queries: the kernel ended before it was queried");
	}
	// the event follows the kernel the stream was still running after it was queried
	EXPECT_ERR_AS("cudaEventQuery(e)", event, cudaErrorNotReady);
	EXPECT_ERR_AS("cudaStreamQuery(s2)", stream, cudaErrorNotReady);
	EXPECT_ERR(cudaStreamQuery(s2), cudaSuccess);
	EXPECT_ERR(cudaEventQuery(e), cudaSuccess);
	// Not-ready is a status, not an error: it must not stick.
	EXPECT_ERR(cudaGetLastError(), cudaSuccess);
	CHECK(cudaEventDestroy(e));
}

// A stream that waits for another stream's event starts its next work only once that event is
// reached: in device time, after the wait s2 is no earlier than s1's kernel's end.
static void check_cross_stream_wait(void)
{
	cudaEvent_t ev[3]; // s1's kernel's end, s2 past the wait, s2's kernel's end
	float waited, ran;

	for (int i = 0; i < 3; i++)
		CHECK(cudaEventCreate(&ev[i]));
	spin(s1, "s1");
	CHECK(cudaEventRecord(ev[0], s1));
	CHECK(wait_event(s2, ev[0]));
	CHECK(cudaEventRecord(ev[1], s2));
	spin(s2, "s2");
	CHECK(cudaEventRecord(ev[2], s2));
	CHECK(sync_stream(s2));
	EXPECT_ERR(cudaEventQuery(ev[0]), cudaSuccess);
	CHECK(cudaEventElapsedTime(&waited, ev[0], ev[1]));
	CHECK(cudaEventElapsedTime(&ran, ev[1], ev[2]));
	printf("TIMING wait_event_ms=%.3f\n", waited);
	EXPECT(waited >= 0 && ran >= MS(SPIN_NS),
	       "s2 did not wait for s1: past the wait %.3f ms after s1's kernel ended, then ran "
	       "%.3f ms",
	       waited, ran);
	printf("CHECK stream waits for event ok\n");
	destroy_events(ev, 3);
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
