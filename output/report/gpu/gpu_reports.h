/* SPDX-License-Identifier: MIT */
/* The reports of the GPU seen whole: utilisation, idle time and its causes, memory, the recording
 * mode: one file each in this folder. */
#ifndef GPUSPY_GPU_REPORTS_H
#define GPUSPY_GPU_REPORTS_H

#include "output/report/base/report.h"

extern const struct report_def report_gpu_idle;
extern const struct report_def report_gpu_mem;
extern const struct report_def report_gpu_mem_blocks;
extern const struct report_def report_gpu_mode;
extern const struct report_def report_gpu_unmatched;
extern const struct report_def report_gpu_util;

#endif /* GPUSPY_GPU_REPORTS_H */
