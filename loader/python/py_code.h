/* SPDX-License-Identifier: MIT */
/*
 * Code objects read from a live process (/proc/PID/mem through process_vm_readv): the names,
 * first line and line table of a code object a Python stack showed, as a GS_REC_PY_CODE record.
 *
 * A stack names a code object by address and stamp (its co_filename and co_name pointers as BPF
 * read them). By the time the record is read the object may be gone and another one may live
 * at the address: then the stamp recomputed here differs, and a record flagged
 * GS_PY_CODE_STALE with empty names is written instead, so the frame reads as unknown rather
 * than as some other function, and the address is not read again for that stamp.
 */
#ifndef GPUSPY_PY_CODE_H
#define GPUSPY_PY_CODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "loader/python/py_runtime.h"

struct trace_writer;

#define PY_CODE_NAME_MAX     1024 /* bytes of a qualified name kept */
#define PY_CODE_FILENAME_MAX 4096
#define PY_CODE_TABLE_MAX    8192 /* line-table bytes kept (GS_PY_CODE_CUT beyond) */

/* A str object as UTF-8, cut to fit `len` with its NUL. 0, or -errno (-EINVAL: not a str or
 * not a compact one; -EFAULT: unreadable). */
int py_read_str(pid_t pid, const struct py_runtime *rt, uint64_t obj, char *buf, size_t len);

/* Reads code object `code` of `pid`, seen with `stamp`, and appends its GS_REC_PY_CODE record
 * with timestamp `ts`. The object is read from the first of the `nfrom` processes `from` that
 * is still alive: `pid` itself, then the processes it was forked from, which hold the same
 * objects at the same addresses for code that existed at the fork (the stamp is checked as
 * ever), so the last stacks of a short-lived worker are named even once it is gone. Nothing is
 * written when they are all gone. 0, or -errno from the writer. */
int py_code_write(struct trace_writer *w, const struct py_runtime *rt, pid_t pid, const pid_t *from,
		  size_t nfrom, uint64_t code, uint32_t stamp, uint64_t ts);

#endif /* GPUSPY_PY_CODE_H */
