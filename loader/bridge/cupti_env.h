/* SPDX-License-Identifier: MIT */
/* The environment that makes a launched command load gpuspy's CUPTI bridge: the CUDA driver
 * loads CUDA_INJECTION64_PATH at cuInit, NVTX loads NVTX_INJECTION64_PATH at its first call. */
#ifndef GPUSPY_CUPTI_ENV_H
#define GPUSPY_CUPTI_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* Sets both variables in gpuspy's own environment (the command inherits it) to the bridge
 * next to the gpuspy executable, or $GPUSPY_CUPTI_BRIDGE. A value already set is kept and
 * reported. Returns whether gpuspy's bridge will be loaded. */
bool cupti_env_prepare(bool quiet);
/* gpuspy's library `name` next to the gpuspy executable, or the path in $`env_var`: whether
 * it is readable. */
bool gpuspy_library_path(const char *name, const char *env_var, char *path, size_t len);
/* The bridge next to the gpuspy executable, or $GPUSPY_CUPTI_BRIDGE: whether it is readable. */
bool cupti_bridge_path(char *path, size_t len);

#endif /* GPUSPY_CUPTI_ENV_H */
