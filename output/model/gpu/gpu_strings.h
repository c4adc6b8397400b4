/* SPDX-License-Identifier: MIT */
/* Names of the CUPTI enumerations the GPU records carry, as nsys and Kineto print them
 * (gpu_strings.c). */
#ifndef GPUSPY_GPU_STRINGS_H
#define GPUSPY_GPU_STRINGS_H

#include <stddef.h>
#include <stdint.h>

const char *gpu_copy_kind_name(uint32_t kind);	 /* "Host-to-Device", as nsys */
const char *gpu_copy_kind_short(uint32_t kind);	 /* "HtoD", as Kineto */
const char *gpu_memory_kind_name(uint32_t kind); /* "Pageable", "Device", ... */
const char *gpu_sync_type_name(uint32_t type);	 /* "Stream Sync", ... */
const char *gpu_nvtx_style_name(uint32_t kind);	 /* "PushPop", "StartEnd", "Mark" */
/* A CUPTI callback name without its version suffix: "cudaMalloc_v3020" -> "cudaMalloc". */
void gpu_api_function(const char *cupti_name, char *buf, size_t len);

#endif /* GPUSPY_GPU_STRINGS_H */
