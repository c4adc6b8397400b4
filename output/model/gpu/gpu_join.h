/* SPDX-License-Identifier: MIT */
/* The GPU join's second pass (gpu_join.c): CUPTI's API records to the uprobe spans of the same
 * calls, read from the file again. */
#ifndef GPUSPY_GPU_JOIN_H
#define GPUSPY_GPU_JOIN_H

#include <stddef.h>
#include "output/model/gpu/gpu_model.h"

/* For gpu_model_finish(); 0, or -1 with a message in err. */
int gpu_join_calls(struct gpu_model *g, const char *path, char *err, size_t errlen);

#endif /* GPUSPY_GPU_JOIN_H */
