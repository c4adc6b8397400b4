/* SPDX-License-Identifier: MIT */
/* Building the CUDA part of the trace model (cuda_model_types.h) from the trace's records. */
#ifndef GPUSPY_CUDA_MODEL_H
#define GPUSPY_CUDA_MODEL_H

#include "output/model/gpu/cuda_model_types.h"
#include "output/trace/trace_format.h"

/* Takes GS_REC_CUDA_CALL, _NAME and _LIB records in file order; 0, or -1 when out of memory. */
int cuda_model_apply(struct cuda_model *cm, const struct gs_hdr *h);
/* After the last record: resolves kernel names, sorts durations. 0, or -1 out of memory. */
int cuda_model_finish(struct cuda_model *cm);
void cuda_model_free(struct cuda_model *cm);

#endif /* GPUSPY_CUDA_MODEL_H */
