/* SPDX-License-Identifier: MIT */
/*
 * Source lines of CPython instructions, from a code object's line table as the loader copied
 * it (GS_REC_PY_CODE): co_lnotab (3.8, 3.9), co_linetable's (start, line) pairs (3.10) and the
 * location table (3.11+). The formats are those CPython documents in Objects/lnotab_notes.txt
 * and Objects/locations.md of each version.
 */
#ifndef GPUSPY_PY_LINES_H
#define GPUSPY_PY_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The line of instruction `lasti` (code units of 2 bytes) of a code object of CPython
 * 3.<minor>; 0 when unknown: lasti < 0, an instruction with no line, a corrupt table, or one
 * `cut` (the loader copies at most so many bytes) before the instruction. */
int py_line_at(unsigned minor, const uint8_t *table, size_t len, bool cut, int firstlineno,
	       int32_t lasti);

#endif /* GPUSPY_PY_LINES_H */
