/* SPDX-License-Identifier: MIT */
/* The reports of CUDA API calls and GPU activity, as nsys stats names and shapes them: one file
 * each in this folder. */
#ifndef GPUSPY_CUDA_REPORTS_H
#define GPUSPY_CUDA_REPORTS_H

#include "output/report/base/report.h"

extern const struct report_def report_cuda_api_errors;
extern const struct report_def report_cuda_api_sum;
extern const struct report_def report_cuda_copies;
extern const struct report_def report_cuda_gpu_kern_sum;
extern const struct report_def report_cuda_gpu_mem_time_sum;
extern const struct report_def report_cuda_gpu_mem_size_sum;
extern const struct report_def report_cuda_gpu_trace;
extern const struct report_def report_cuda_launches;
extern const struct report_def report_cuda_libs;
extern const struct report_def report_nvtx_sum;

#endif /* GPUSPY_CUDA_REPORTS_H */
