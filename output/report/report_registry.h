/* SPDX-License-Identifier: MIT */
/* Every report gpuspy has, by name (report_registry.c lists them in `gpuspy --help` order). */
#ifndef GPUSPY_REPORT_REGISTRY_H
#define GPUSPY_REPORT_REGISTRY_H

#include "output/report/base/report.h"

const struct report_def *report_find(const char *name);
/* The registered reports, NULL-terminated. */
extern const struct report_def *const report_all[];

#endif /* GPUSPY_REPORT_REGISTRY_H */
