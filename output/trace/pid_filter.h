/* SPDX-License-Identifier: MIT */
/*
 * Reading a trace for some processes only: the records of other processes are skipped as the
 * file is read, so every report and pass built on the reader (the GPU join, gpu_idle, the
 * Python pass) sees one group of processes as if it were the whole recording. Records that
 * belong to no process (the recording's settings, loss counters, operator names, the trailer)
 * are always kept. `report --group-by` reads the trace once per group this way.
 */
#ifndef GPUSPY_PID_FILTER_H
#define GPUSPY_PID_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/records.h"

struct pid_filter {
	const uint32_t *pids; /* sorted ascending */
	size_t n;
};

/* Whether a reader filtered by `f` hands out `h`; a NULL filter keeps everything. */
bool pid_filter_keeps(const struct pid_filter *f, const struct gs_hdr *h);

#endif /* GPUSPY_PID_FILTER_H */
