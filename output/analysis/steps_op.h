/* SPDX-License-Identifier: MIT */
/* Training steps from a PyTorch operator the user names (--steps-by op:NAME): each call of it
 * starts a step, as an optimizer's step or a record_function range marks an iteration. */
#ifndef GPUSPY_STEPS_OP_H
#define GPUSPY_STEPS_OP_H

#include "output/analysis/step_list.h"
#include "output/model/op_model.h"

/* Appends, per process, the steps marked by the outermost calls of operator `name` (its exact
 * name, "aten::mm", "Optimizer.step#SGD.step") on the thread that made most of them: a step
 * from one call's start to the next's, the last one to its call's end. 0, or -1 when out of
 * memory. The model must keep its calls (TRACE_MODEL_OP_CALLS). */
int steps_op_find(const struct op_model *om, const char *name, struct step_list *out);

#endif /* GPUSPY_STEPS_OP_H */
