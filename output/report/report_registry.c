// SPDX-License-Identifier: MIT
/* The list of reports (report_registry.h). */
#include <string.h>
#include "output/report/cuda/cuda_reports.h"
#include "output/report/gpu/gpu_reports.h"
#include "output/report/host/host_reports.h"
#include "output/report/report_registry.h"

const struct report_def *const report_all[] = {
    &report_summary,
    &report_osrt_sum,
    &report_osrt_thread,
    &report_offcpu,
    &report_processes,
    &report_losses,
    &report_cuda_api_sum,
    &report_cuda_api_errors,
    &report_cuda_launches,
    &report_cuda_copies,
    &report_gpu_mem,
    &report_gpu_mem_blocks,
    &report_cuda_libs,
    &report_cuda_gpu_kern_sum,
    &report_cuda_gpu_mem_time_sum,
    &report_cuda_gpu_mem_size_sum,
    &report_cuda_gpu_trace,
    &report_nvtx_sum,
    &report_gpu_util,
    &report_gpu_idle,
    &report_gpu_mode,
    &report_gpu_unmatched,
    &report_ops,
    &report_python,
    &report_python_stacks,
    &report_steps,
    &report_stalls,
    NULL,
};

const struct report_def *report_find(const char *name)
{
	for (size_t i = 0; report_all[i]; i++)
		if (!strcmp(report_all[i]->name, name))
			return report_all[i];
	return NULL;
}
