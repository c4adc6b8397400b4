/* SPDX-License-Identifier: MIT */
/* The clocks gpuspy reads: CLOCK_MONOTONIC (the kernel's bpf_ktime_get_ns(), so the time of
 * every record) and CLOCK_REALTIME (wall time, for file names and metadata). */
#ifndef GPUSPY_CLOCKS_H
#define GPUSPY_CLOCKS_H

#include <stdint.h>

uint64_t gs_monotonic_ns(void);
uint64_t gs_realtime_ns(void);

#endif /* GPUSPY_CLOCKS_H */
