/* Shared helpers for the CUDA target programs.
 *
 * The programs print what they do so tests can compare it with what a tracer
 * (or CUPTI) saw: one LAUNCH/MEMCPY/MEMSET/ALLOC/FREE/SYNC line (or its
 * *_FAILED form) per call of those kinds, made through calls.h, and
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

#include "calls.h"

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

/* EXPECT_ERR_AS names the check `what`: a call made through a calls.h wrapper
 * still reads as the CUDA call it makes, which is what the tests look for. */
#define EXPECT_ERR_AS(what, call, want)                                                            \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		EXPECT(e_ == (want), "%s -> %s, want %s", what, cudaGetErrorName(e_),              \
		       cudaGetErrorName(want));                                                    \
		printf("CHECK error %s = %s ok\n", what, cudaGetErrorName(e_));                    \
	} while (0)
#define EXPECT_ERR(call, want) EXPECT_ERR_AS(#call, call, want)

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

/* Tell the simulator how long a kernel runs (ignored by real CUDA).  An
 * explicit FAKECUDA_KERNEL_NS from the environment wins.  0 is taken
 * literally: the kernel ends as it starts. */
static inline void use_kernel_duration(const char *mangled, long long ns)
{
	char spec[256];
	snprintf(spec, sizeof(spec), "%s=%lld", mangled, ns);
	setenv("FAKECUDA_KERNEL_NS", spec, 0);
}

static inline void use_spin_duration(long long ns)
{
	use_kernel_duration(SPIN_NAME, ns);
}

#endif
