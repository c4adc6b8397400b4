/* SPDX-License-Identifier: MIT */
/*
 * Where CPython 3.8-3.13 keep what the stack walker reads, x86_64, non-debug GIL builds.
 * Computed with offsetof() against each version's internal headers and cross-checked live
 * (../shared/docs/CPYTHON.md §2-3); equal across the patch releases measured (3.11.2 and 3.11.7).
 * Internal structs may still move in a patch release, so py_runtime.c checks every process
 * before use: PyCode_Type's size and members, _Py_DebugOffsets on 3.13, and a walk of its
 * threads.
 */
#ifndef GPUSPY_PY_OFFSETS_H
#define GPUSPY_PY_OFFSETS_H

#include <stdbool.h>
#include <stddef.h>

#define PY_MINOR_MIN 8
#define PY_MINOR_MAX 13

/* -1: the version has no such field. */
struct py_layout {
	unsigned minor;
	/* _PyRuntime */
	int rt_autotss;	    /* Py_tss_t autoTSSkey: {int initialized; pthread_key_t key} */
	int rt_interp_head; /* interpreters.head */
	/* PyInterpreterState */
	int is_threads_head;
	/* PyThreadState */
	int ts_next, ts_thread_id, ts_frame, ts_cframe, cframe_current;
	/* frames: PyFrameObject (<= 3.10) or _PyInterpreterFrame */
	int fr_back, fr_code, fr_instr, fr_owner;
	bool instr_is_ptr; /* fr_instr is prev_instr / instr_ptr, not f_lasti */
	bool lasti_bytes;  /* f_lasti counts bytes (3.8, 3.9) */
	/* PyCodeObject */
	int co_firstlineno, co_filename, co_name, co_qualname, co_lines;
	int code_basicsize;	  /* PyCode_Type.tp_basicsize; = co_code_adaptive on 3.11+ */
	const char *lines_member; /* the line table's PyMemberDef name */
	/* PyASCIIObject / PyCompactUnicodeObject sizes: where a compact string's data starts */
	int str_ascii_data, str_compact_data;
};

/* PyObject, PyVarObject, PyBytesObject, PyTypeObject, PyMemberDef: the same in 3.8-3.13. */
#define PY_OB_TYPE	  8
#define PY_STR_LENGTH	  16
#define PY_STR_STATE	  32
#define PY_BYTES_SIZE	  16
#define PY_BYTES_DATA	  32
#define PY_TP_BASICSIZE	  32
#define PY_TP_MEMBERS	  240
#define PY_MEMBERDEF_SIZE 40
#define PY_MEMBERDEF_OFF  16
/* glibc 2.21-2.39 x86_64: struct pthread.specific_1stblock (16-byte {seq, data} entries) */
#define PY_GLIBC_TSD_BLOCK 0x310
/* the largest frame field read (3.8 f_lasti at 104, 4 bytes), rounded to 8 */
#define PY_FRAME_READ_MAX 112

static const struct py_layout py_layouts[] = {
    {.minor = 8,
     .rt_autotss = 1392,
     .rt_interp_head = 32,
     .is_threads_head = 8,
     .ts_next = 8,
     .ts_thread_id = 176,
     .ts_frame = 24,
     .ts_cframe = -1,
     .cframe_current = -1,
     .fr_back = 24,
     .fr_code = 32,
     .fr_instr = 104,
     .fr_owner = -1,
     .lasti_bytes = true,
     .co_firstlineno = 40,
     .co_filename = 104,
     .co_name = 112,
     .co_qualname = -1,
     .co_lines = 120,
     .code_basicsize = 176,
     .lines_member = "co_lnotab",
     .str_ascii_data = 48,
     .str_compact_data = 72},
    {.minor = 9,
     .rt_autotss = 584,
     .rt_interp_head = 32,
     .is_threads_head = 8,
     .ts_next = 8,
     .ts_thread_id = 176,
     .ts_frame = 24,
     .ts_cframe = -1,
     .cframe_current = -1,
     .fr_back = 24,
     .fr_code = 32,
     .fr_instr = 104,
     .fr_owner = -1,
     .lasti_bytes = true,
     .co_firstlineno = 40,
     .co_filename = 104,
     .co_name = 112,
     .co_qualname = -1,
     .co_lines = 120,
     .code_basicsize = 176,
     .lines_member = "co_lnotab",
     .str_ascii_data = 48,
     .str_compact_data = 72},
    {.minor = 10,
     .rt_autotss = 584,
     .rt_interp_head = 32,
     .is_threads_head = 8,
     .ts_next = 8,
     .ts_thread_id = 176,
     .ts_frame = 24,
     .ts_cframe = -1,
     .cframe_current = -1,
     .fr_back = 24,
     .fr_code = 32,
     .fr_instr = 96,
     .fr_owner = -1,
     .co_firstlineno = 40,
     .co_filename = 104,
     .co_name = 112,
     .co_qualname = -1,
     .co_lines = 120,
     .code_basicsize = 176,
     .lines_member = "co_linetable",
     .str_ascii_data = 48,
     .str_compact_data = 72},
    {.minor = 11,
     .rt_autotss = 592,
     .rt_interp_head = 40,
     .is_threads_head = 16,
     .ts_next = 8,
     .ts_thread_id = 152,
     .ts_frame = -1,
     .ts_cframe = 56,
     .cframe_current = 8,
     .fr_back = 48,
     .fr_code = 32,
     .fr_instr = 56,
     .fr_owner = 69,
     .instr_is_ptr = true,
     .co_firstlineno = 72,
     .co_filename = 112,
     .co_name = 120,
     .co_qualname = 128,
     .co_lines = 136,
     .code_basicsize = 184,
     .lines_member = "co_linetable",
     .str_ascii_data = 48,
     .str_compact_data = 72},
    {.minor = 12,
     .rt_autotss = 1544,
     .rt_interp_head = 40,
     .is_threads_head = 72,
     .ts_next = 8,
     .ts_thread_id = 136,
     .ts_frame = -1,
     .ts_cframe = 56,
     .cframe_current = 0,
     .fr_back = 8,
     .fr_code = 0,
     .fr_instr = 56,
     .fr_owner = 70,
     .instr_is_ptr = true,
     .co_firstlineno = 68,
     .co_filename = 112,
     .co_name = 120,
     .co_qualname = 128,
     .co_lines = 136,
     .code_basicsize = 192,
     .lines_member = "co_linetable",
     .str_ascii_data = 40,
     .str_compact_data = 56},
    {.minor = 13,
     .rt_autotss = 2160,
     .rt_interp_head = 632,
     .is_threads_head = 7344,
     .ts_next = 8,
     .ts_thread_id = 152,
     .ts_frame = 72,
     .ts_cframe = -1,
     .cframe_current = -1,
     .fr_back = 8,
     .fr_code = 0,
     .fr_instr = 56,
     .fr_owner = 70,
     .instr_is_ptr = true,
     .co_firstlineno = 68,
     .co_filename = 112,
     .co_name = 120,
     .co_qualname = 128,
     .co_lines = 136,
     .code_basicsize = 200,
     .lines_member = "co_linetable",
     .str_ascii_data = 40,
     .str_compact_data = 56},
};

static inline const struct py_layout *py_layout_find(unsigned minor)
{
	for (size_t i = 0; i < sizeof(py_layouts) / sizeof(py_layouts[0]); i++)
		if (py_layouts[i].minor == minor)
			return &py_layouts[i];
	return NULL;
}

/* 3.13's _Py_DebugOffsets (at the start of _PyRuntime), read as 8-byte words: the index of
 * each field it publishes that gpuspy also takes from the table above. */
enum py_debug_word {
	PY_DBG_VERSION = 1,
	PY_DBG_FREE_THREADED = 2,
	PY_DBG_INTERP_HEAD = 5,
	PY_DBG_THREADS_HEAD = 9,
	PY_DBG_TS_NEXT = 21,
	PY_DBG_TS_CURRENT_FRAME = 23,
	PY_DBG_TS_THREAD_ID = 24,
	PY_DBG_FR_PREVIOUS = 29,
	PY_DBG_FR_EXECUTABLE = 30,
	PY_DBG_FR_INSTR_PTR = 31,
	PY_DBG_FR_OWNER = 33,
	PY_DBG_CO_FILENAME = 35,
	PY_DBG_CO_NAME = 36,
	PY_DBG_CO_QUALNAME = 37,
	PY_DBG_CO_LINETABLE = 38,
	PY_DBG_CO_FIRSTLINENO = 39,
	PY_DBG_CO_CODE_ADAPTIVE = 43,
	PY_DBG_WORDS = 44,
};
#define PY_DEBUG_COOKIE "xdebugpy"

#endif /* GPUSPY_PY_OFFSETS_H */
