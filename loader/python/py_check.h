/* SPDX-License-Identifier: MIT */
/*
 * The checks a process's interpreter passes before BPF walks its stacks (py_runtime.h): the
 * layout of py_offsets.h against what the running interpreter says about itself
 * (_Py_DebugOffsets on 3.13, PyCode_Type's size and members), then a walk of its threads from
 * userspace by the very method BPF uses: each thread state found through its pthread TSD slot,
 * each frame's code object of type PyCode_Type with str names.
 */
#ifndef GPUSPY_PY_CHECK_H
#define GPUSPY_PY_CHECK_H

#include <sys/types.h>
#include "loader/python/py_runtime.h"

/* Sets rt->state to READY, NOT_READY (the interpreter is not initialised yet, or changed while
 * it was read) or REFUSED, with rt->message. 0, or -errno (-ENOENT: the process is gone). */
int py_check(pid_t pid, struct py_runtime *rt);

#endif /* GPUSPY_PY_CHECK_H */
