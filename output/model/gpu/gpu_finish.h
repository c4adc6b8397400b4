/* SPDX-License-Identifier: MIT */
/* What the GPU model computes once every record is read (gpu_finish.c): the joins, the
 * statistics, and what did not join. */
#ifndef GPUSPY_GPU_FINISH_H
#define GPUSPY_GPU_FINISH_H

#include <stddef.h>
#include "lib/key_index.h"
#include "output/model/gpu/gpu_model.h"

/* After the last record: joins (reading `path` again when there are API records; `threads`
 * is the trace model's (pid, tid) index, to tell whether CUPTI's thread ids are OS thread
 * ids), counts what did not join, sorts the statistics. 0, or -1 with a message in err. */
int gpu_model_finish(struct gpu_model *g, const char *path, const struct key_index *threads,
		     char *err, size_t errlen);
/* Everything the join could not pair, in time order (a new array in *out, for the caller to
 * free): GPU records without an API record, API records of probed functions without a uprobe
 * span, launches without a GPU record. 0, or -1 when out of memory. */
int gpu_model_unmatched(const struct gpu_model *g, struct gpu_unmatched **out, size_t *n);
/* qsort_r order of apis[] indices (the model is the argument) in which the join pairs GPU
 * records with API records: by (pid, correlation); of one id, the longest first, then the
 * first read. The exporters follow it to show the record the join chose. */
int gpu_api_cmp_correlation(const void *a, const void *b, void *model);

#endif /* GPUSPY_GPU_FINISH_H */
