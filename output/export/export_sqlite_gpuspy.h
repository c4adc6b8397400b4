/* SPDX-License-Identifier: MIT */
/* gpuspy's own tables in the SQLite export (export_sqlite_gpuspy.c): what nsys has no table
 * for. */
#ifndef GPUSPY_EXPORT_SQLITE_GPUSPY_H
#define GPUSPY_EXPORT_SQLITE_GPUSPY_H

#include "output/export/export_sqlite_db.h"
#include "output/model/trace_model.h"

/* PYTORCH_OPS, PYTHON_STACKS, STEPS and STALLS (steps found `steps_by`, NULL: gpuspy's way).
 * 0, or -1 with d's err set. */
int sqlite_gpuspy_tables(struct sqlite_db *d, const struct trace_model *m, const char *steps_by);

#endif /* GPUSPY_EXPORT_SQLITE_GPUSPY_H */
