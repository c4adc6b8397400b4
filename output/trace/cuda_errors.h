/* SPDX-License-Identifier: MIT */
/* cudaError_t and CUresult names, generated from NVIDIA's headers
 * (output/trace/gen_cuda_errors.sh); each table ends with {-1, NULL}. */
#ifndef GPUSPY_CUDA_ERRORS_H
#define GPUSPY_CUDA_ERRORS_H

struct gs_cuda_error {
	int code;
	const char *name;
};

extern const struct gs_cuda_error gs_cudart_errors[];
extern const struct gs_cuda_error gs_cuda_driver_errors[];

#endif /* GPUSPY_CUDA_ERRORS_H */
