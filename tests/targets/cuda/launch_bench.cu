// Kernel-launch throughput, for benchmarking a tracer's per-call overhead.
// Usage: launch_bench N
// Launches the empty bench_kernel N times on a non-blocking stream and prints
//   launches=N seconds=S ns_per_launch=X
// The launches print nothing, so the loop measures only the CUDA calls (and
// whatever probes sit on them).
#include "common.h"

#define BENCH_NAME "_Z12bench_kernelv"
#define SYNC_EVERY 1024 // bounds the queue on a real GPU

__global__ void bench_kernel(void)
{
}

static long parse_count(int argc, char **argv)
{
	char *end = NULL;
	long n = argc == 2 ? strtol(argv[1], &end, 10) : 0;
	if (argc != 2 || *end != '\0' || n < 1) {
		fprintf(stderr, "usage: %s N (N >= 1 launches)\n", argv[0]);
		exit(2);
	}
	return n;
}

// Loads the module and creates the context outside the measured loop.
static void warm_up(cudaStream_t s)
{
	bench_kernel<<<1, 32, 0, s>>>();
	CHECK(cudaGetLastError());
	CHECK(cudaStreamSynchronize(s));
}

static long long timed_launches(cudaStream_t s, long n)
{
	long long t0 = now_ns();
	for (long i = 1; i <= n; i++) {
		bench_kernel<<<1, 32, 0, s>>>();
		if (i % SYNC_EVERY == 0)
			CHECK(cudaStreamSynchronize(s));
	}
	CHECK(cudaStreamSynchronize(s));
	long long elapsed = now_ns() - t0;
	CHECK(cudaGetLastError()); // a failed launch only shows here
	return elapsed;
}

int main(int argc, char **argv)
{
	long n = parse_count(argc, argv);
	// The simulator takes 0 literally: the device is never the bottleneck.
	use_kernel_duration(BENCH_NAME, 0);
	cudaStream_t s;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	warm_up(s);
	long long ns = timed_launches(s, n);
	printf("launches=%ld seconds=%.6f ns_per_launch=%.1f\n", n, ns / 1e9, (double)ns / n);
	CHECK(cudaStreamDestroy(s));
	return 0;
}
