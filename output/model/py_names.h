/* SPDX-License-Identifier: MIT */
/*
 * Python frames as people read them, shared by the python report, the collapsed (flame graph)
 * output and the timeline: a function's identity across processes and code objects, and a
 * frame's label "qualname (file:line)" with the file shortened as py-spy shortens it.
 */
#ifndef GPUSPY_PY_NAMES_H
#define GPUSPY_PY_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include "output/model/py_model.h"

/* A function: its qualname and file (names pool ids of the model) and first line. Every frame
 * without a code record is the one function "<unknown>". */
struct py_func_key {
	uint64_t k1, k2; /* for key_index: (qualname << 32 | filename), firstlineno */
};

struct py_func_key py_frame_func(const struct py_model *pm, const struct py_frame *f);

/* The part of a source path worth showing, as py-spy shows it: what follows site-packages/ or
 * dist-packages/, or a lib/pythonX.Y/ directory (the standard library), else the file name
 * ("pkg/__init__.py" for a package's __init__.py or __main__.py). */
const char *py_short_path(const char *path);

/* "qualname (short file:line)", or "qualname (short file)" when the line is unknown, into buf
 * (cut to fit). Returns buf. */
const char *py_frame_label(const struct py_model *pm, const struct py_frame *f, char *buf,
			   size_t len);

#endif /* GPUSPY_PY_NAMES_H */
