/* SPDX-License-Identifier: MIT */
/* The reports of the host: OS runtime, off-CPU time, processes, losses, Python and PyTorch
 * operators: one file each in this folder. */
#ifndef GPUSPY_HOST_REPORTS_H
#define GPUSPY_HOST_REPORTS_H

#include "output/report/base/report.h"

extern const struct report_def report_losses;
extern const struct report_def report_offcpu;
extern const struct report_def report_ops;
extern const struct report_def report_osrt_sum;
extern const struct report_def report_osrt_thread;
extern const struct report_def report_processes;
extern const struct report_def report_python;
extern const struct report_def report_python_stacks;
extern const struct report_def report_stalls;
extern const struct report_def report_summary;
extern const struct report_def report_steps;

#endif /* GPUSPY_HOST_REPORTS_H */
