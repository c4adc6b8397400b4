/* SPDX-License-Identifier: MIT */
/*
 * The Python part of the trace model: the interpreters found (GS_REC_PY_PROC), the code objects
 * the loader read (GS_REC_PY_CODE) and every captured stack (GS_REC_PY_STACK), resolved once the
 * whole file is read (code records may come before or after the stacks that name them).
 *
 * A stack record says "thread T ran under these frames over [ts, end_ts]": a syscall, off-CPU
 * span, CUDA call or operator of T inside that interval ran under it. py_model_stack_at() finds
 * that stack for any such event.
 */
#ifndef GPUSPY_PY_MODEL_H
#define GPUSPY_PY_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/key_index.h"
#include "lib/string_pool.h"
#include "output/trace/trace_format.h"

#define PY_NONE UINT32_MAX

/* One GS_REC_PY_CODE record: a code object of one process, as the loader read it. */
struct py_code {
	uint64_t code; /* its address in the process */
	uint32_t pid, stamp;
	int32_t firstlineno;
	uint32_t minor;	   /* 3.<minor>: the line table's format */
	uint32_t flags;	   /* GS_PY_CODE_CUT, GS_PY_CODE_STALE (then names are unknown) */
	uint32_t qualname; /* names' pool ids: co_qualname (3.11+) or co_name */
	uint32_t filename;
	uint8_t *linetable; /* co_linetable / co_lnotab bytes, possibly cut (then lines may be 0) */
	size_t linetable_len;
};

/* One frame of a stack, resolved. */
struct py_frame {
	uint64_t addr;	/* the code object's address, as BPF read it */
	uint32_t stamp; /* ... and its stamp */
	int32_t lasti;	/* instruction index in code units; -1 unknown */
	uint32_t code;	/* codes[] index, or PY_NONE: no code record (names unknown) */
	int32_t line;	/* source line; 0 unknown */
};

/* One GS_REC_PY_STACK record. */
struct py_stack {
	uint64_t ts, end_ts;
	uint32_t pid, tid;
	uint32_t kind;	  /* enum gs_py_stack_kind */
	uint32_t flags;	  /* GS_PY_TRUNCATED, GS_PY_NO_THREAD */
	uint32_t nframes; /* leaf first: frames[first .. first + nframes), shared by the stacks */
	uint32_t first;	  /* of a process with the same frames (a loop's stack repeats) */
};

/* One GS_REC_PY_PROC record: an interpreter found in a process, traced or refused. */
struct py_proc {
	uint32_t pid;
	uint32_t state;	      /* enum gs_py_proc_state */
	uint32_t version_hex; /* PY_VERSION_HEX; 0 unknown */
	uint64_t ts;
	char *message;
};

struct py_model {
	struct py_code *codes; /* in file order */
	size_t ncodes, codes_cap;
	struct py_stack *stacks; /* sorted by ts once loaded */
	size_t nstacks, stacks_cap;
	struct py_frame *frames; /* the stacks' frames, each stack's contiguous */
	size_t nframes, frames_cap;
	struct key_index ix_runs; /* while loading: (frames' hash, pid << 32 | n) -> first */
	struct py_proc *procs;	  /* in file order; a process may have several (exec) */
	size_t nprocs, procs_cap;
	struct string_pool names;	   /* qualnames and file names */
	uint64_t counts[GS_PY_SAMPLE + 1]; /* stacks by kind */

	/* after py_model_finish() */
	uint32_t *by_thread;	     /* stacks[] indices sorted by (pid, tid, ts) */
	uint64_t *max_end;	     /* max end_ts over by_thread[run start .. i], for stack_at */
	struct key_index ix_codes;   /* (pid << 32 | stamp, code) -> codes[] */
	struct key_index ix_threads; /* (pid, tid) -> first by_thread[] position of the thread */
	struct key_index ix_procs;   /* pid -> the last procs[] entry of the process */
};

/* Whether py_model_apply() takes this record type. */
bool py_model_takes(uint16_t type);
/* A GS_REC_PY_STACK record counted in `counts` and not kept (a load that needs no stacks). */
void py_model_count_stack(struct py_model *pm, const struct gs_py_stack *s);
/* Takes GS_REC_PY_* records in file order; 0, or -1 when out of memory. */
int py_model_apply(struct py_model *pm, const struct gs_hdr *h);
/* After the last record: sorts the stacks, resolves frames to code records and lines. 0, or
 * -1 when out of memory. */
int py_model_finish(struct py_model *pm);
void py_model_free(struct py_model *pm);

static inline size_t py_model_stack_count(const struct py_model *pm)
{
	return pm->nstacks;
}

/* The i-th stack in time order (start ts). */
static inline const struct py_stack *py_model_stack(const struct py_model *pm, size_t i)
{
	return &pm->stacks[i];
}

/* Frame j of a stack; 0 is the leaf (innermost call). */
static inline const struct py_frame *py_stack_frame(const struct py_model *pm,
						    const struct py_stack *s, size_t j)
{
	return &pm->frames[s->first + j];
}

/* The code record of a frame, or NULL when the trace has none for it (the process exited or
 * the object was freed before gpuspy read it). */
const struct py_code *py_frame_code(const struct py_model *pm, const struct py_frame *f);

/* A frame's names and line: 0; or -1 when no code record was written for it (qualname
 * "<unknown>", filename "?", line 0). Any output pointer may be NULL. */
int py_frame_symbol(const struct py_model *pm, const struct py_frame *f, const char **qualname,
		    const char **filename, int *line);

/* The stack that thread (pid, tid) ran under at ts: the latest-starting stack of kind syscall,
 * CUDA or operator whose [ts, end_ts] covers ts, else a CPU sample whose period covers it, else
 * NULL. O(log n) for the usual case (stacks nested in time, as a thread's calls are). */
const struct py_stack *py_model_stack_at(const struct py_model *pm, uint32_t pid, uint32_t tid,
					 uint64_t ts);

/* The last interpreter record of a process, or NULL. */
const struct py_proc *py_model_proc(const struct py_model *pm, uint32_t pid);

/* "syscall", "cuda", "op", "sample" */
const char *py_stack_kind_name(uint32_t kind);

/* Line of instruction `lasti` (code units) in a code object, from its line table: 0 unknown.
 * (output/model/py_lines.h does the decoding.) */
int py_code_line(const struct py_code *c, int32_t lasti);

#endif /* GPUSPY_PY_MODEL_H */
