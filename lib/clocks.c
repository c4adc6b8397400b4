// SPDX-License-Identifier: MIT
/* The two clocks gpuspy reads (clocks.h). */
#include <time.h>
#include "lib/clocks.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t gs_monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t gs_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}
