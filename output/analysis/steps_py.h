/* SPDX-License-Identifier: MIT */
/* Training steps found in the Python stacks: the step loop of each process, or each call of a
 * function the user names (steps_py.c says how). */
#ifndef GPUSPY_STEPS_PY_H
#define GPUSPY_STEPS_PY_H

#include <stddef.h>
#include <stdint.h>
#include "output/model/py_model.h"
#include "output/analysis/step_list.h"

/* Appends the steps of every process with Python stacks but those of `skip_pids` (whose steps
 * were found otherwise): of its step loop (function NULL), or each outermost call of
 * `function` (a qualname). 0, or -1 out of memory. */
int steps_py_find(const struct py_model *pm, const char *function, const uint32_t *skip_pids,
		  size_t nskip, struct step_list *out);

#endif /* GPUSPY_STEPS_PY_H */
