/* SPDX-License-Identifier: MIT */
/*
 * Where in a Python stack a stall sits, as a user fixes it: the innermost frame of the user's
 * own code (not the standard library, not an installed package), since "train (x.py:42)" is the
 * line to change while "wait (threading.py:320)" is only how the wait happened.
 */
#ifndef GPUSPY_PY_WHERE_H
#define GPUSPY_PY_WHERE_H

#include <stdbool.h>
#include <stddef.h>
#include "output/model/py_model.h"

/* Whether a source file is library code: Python's standard library (lib/python3.X/, frozen
 * modules) or an installed package (site-packages, dist-packages). */
bool py_where_is_library(const char *filename);

/* The innermost frame of the user's code, else the leaf (a stack entirely in libraries); NULL
 * for a stack without frames. */
const struct py_frame *py_where_frame(const struct py_model *pm, const struct py_stack *s);

/* "function (file:line)" of py_where_frame() into buf, or "" without a stack. Returns buf. */
const char *py_where_label(const struct py_model *pm, const struct py_stack *s, char *buf,
			   size_t len);

/* Whether any frame of the stack runs in the DataLoader (torch/utils/data/). */
bool py_where_in_data_loader(const struct py_model *pm, const struct py_stack *s);

#endif /* GPUSPY_PY_WHERE_H */
