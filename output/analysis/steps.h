/* SPDX-License-Identifier: MIT */
/*
 * Training steps (iterations) of each process, found without code changes, in this order of
 * preference: torch.profiler's ProfilerStep#N NVTX ranges, then the step loop in the Python
 * stacks (steps_py.c). `--steps-by` names the way instead: nvtx:NAME (ranges whose name starts
 * with NAME), py:FUNCTION (each call of a Python function) or op:NAME (from each call of a
 * PyTorch operator to the next).
 */
#ifndef GPUSPY_STEPS_H
#define GPUSPY_STEPS_H

#include <stddef.h>
#include "output/analysis/step_list.h"
#include "output/model/trace_model.h"

/* torch.profiler's step ranges (profiler.step()), which Lightning's and HF's loops mark too; the
 * Kineto export writes gpuspy's own steps under this name */
#define STEPS_PROFILER_STEP "ProfilerStep#"

/* Whether `by` is a --steps-by value steps_find() takes. */
bool steps_by_valid(const char *by);

/* The steps of every process of `m` (loaded with TRACE_MODEL_PY_STACKS), found `by` (NULL: the
 * preferred way per process). 0, or -1 with a message in err. */
int steps_find(const struct trace_model *m, const char *by, struct step_list *out, char *err,
	       size_t errlen);

#endif /* GPUSPY_STEPS_H */
