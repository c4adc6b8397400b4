/* SPDX-License-Identifier: MIT */
/*
 * The Chrome trace in Kineto's dialect (PyTorch profiler's JSON), for Holistic Trace Analysis
 * and TensorBoard: streamed like the Chrome export, from the same events.
 */
#ifndef GPUSPY_EXPORT_KINETO_H
#define GPUSPY_EXPORT_KINETO_H

#include <stdio.h>
#include "output/export/export_chrome.h"

/* 0, or -1 with a message in err (a corrupt trace). */
int export_kineto(const char *path, const struct export_opts *opts, FILE *out, char *err,
		  size_t errlen);

#endif /* GPUSPY_EXPORT_KINETO_H */
