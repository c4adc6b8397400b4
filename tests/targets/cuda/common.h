/* Shared helpers for the CUDA target programs.
 *
 * The programs print what they do so tests can compare it with what a tracer
 * (or CUPTI) saw:
 *   LAUNCH name=<mangled> grid=x,y,z block=x,y,z stream=<label>
 *   MEMCPY kind=<HtoD|DtoH|DtoD> bytes=<n> stream=<label>
 *   MEMSET bytes=<n> stream=<label>
 *   CHECK <what> ... ok            (a verified expectation)
 *   TIMING <what>_ns=<n>           (a measured wall time, for the tests)
 * and exit 1 at the first failed expectation ("FAIL ...").  They only check
 * what holds on a real GPU as well as on the simulator: error codes, data
 * round trips through copies/memsets, ordering and event timing of kernels
 * that spin for a known time.  Device-side arithmetic is never checked. */
#ifndef TARGETS_CUDA_COMMON_H
#define TARGETS_CUDA_COMMON_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(call)                                                                                \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			printf("FAIL %s:%d %s -> %s\n", __FILE__, __LINE__, #call,                 \
			       cudaGetErrorName(e_));                                              \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s:%d ", __FILE__, __LINE__);                                 \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define EXPECT_ERR(call, want)                                                                     \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		EXPECT(e_ == (want), "%s -> %s, want %s", #call, cudaGetErrorName(e_),             \
		       cudaGetErrorName(want));                                                    \
		printf("CHECK error %s = %s ok\n", #call, cudaGetErrorName(e_));                   \
	} while (0)

static inline long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Busy-wait on the GPU's global timer for `ns` nanoseconds, so the kernel
 * really takes that long on hardware.  The simulator gets the same duration
 * from FAKECUDA_KERNEL_NS (see use_spin_duration). */
__global__ void spin_kernel(long long ns)
{
	unsigned long long start, now;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	} while ((long long)(now - start) < ns);
}
#define SPIN_NAME "_Z11spin_kernelx"

/* Tell the simulator how long spin_kernel runs (ignored by real CUDA).  An
 * explicit FAKECUDA_KERNEL_NS from the environment wins. */
static inline void use_spin_duration(long long ns)
{
	char spec[64];
	snprintf(spec, sizeof(spec), "%s=%lld", SPIN_NAME, ns);
	setenv("FAKECUDA_KERNEL_NS", spec, 0);
}

static inline void print_launch(const char *name, dim3 g, dim3 b, const char *stream)
{
	printf("LAUNCH name=%s grid=%u,%u,%u block=%u,%u,%u stream=%s\n", name, g.x, g.y, g.z, b.x,
	       b.y, b.z, stream);
}

#endif
