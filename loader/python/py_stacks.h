/* SPDX-License-Identifier: MIT */
/*
 * The recording's Python module. It finds the CPython interpreter of each traced process
 * (py_runtime.h) and hands its layout to BPF (py_procs), which then walks the Python stack
 * wherever one is wanted (bpf/py_stack.bpf.h): over long syscalls, outermost CUDA calls and
 * operators, and in CPU samples (a cpu-clock perf event per CPU, attached here). It writes the
 * stacks to the trace with the code objects they name (py_code.h), each (process, code
 * object, stamp) once, and a GS_REC_PY_PROC record per interpreter found, traced or refused.
 *
 * Processes are looked at when the recording attaches to them, when they exec (retried while
 * the new interpreter starts up, for a few seconds), when ld.so maps new objects (a libpython
 * loaded by dlopen), and inherit their parent's entry when they fork.
 */
#ifndef GPUSPY_PY_STACKS_H
#define GPUSPY_PY_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/records.h"

struct bpf_session;
struct link_batch;
struct pid_list;
struct py_stacks;
struct trace_writer;

/* `quiet`: no line on stderr per interpreter found (-q). 0 or -errno. */
int py_stacks_new(struct bpf_session *s, struct trace_writer *w, bool quiet,
		  struct py_stacks **out);
/* Looks for the interpreter of a process that is already running (-p targets, their
 * children, every process with -a). 0, or -errno for a write error or no memory; a process
 * without Python, or gone, is not an error. */
int py_stacks_scan(struct py_stacks *ps, pid_t pid);
/* Takes a ring-buffer record: writes GS_REC_PY_STACK records itself (with the GS_REC_PY_CODE
 * records of code objects new to the trace, right after it); notes GS_REC_FORK, GS_REC_EXEC,
 * GS_REC_EXIT and GS_REC_LIBS_CHANGED, which the caller writes. 0 or -errno (write error). */
int py_stacks_on_record(struct py_stacks *ps, const struct gs_hdr *rec);
/* Retries the processes whose interpreter was not up yet; call it from the poll loop. */
int py_stacks_tick(struct py_stacks *ps, uint64_t now);
/* Exited processes (record_exit.h): each was forgotten at its exit record already (a gone
 * child's entry in BPF's map too); the slots they left are dropped here. */
void py_stacks_forget(struct py_stacks *ps, const struct pid_list *dead);
/* Per-process entries kept (processes watched or traced, and slots not yet dropped). */
size_t py_stacks_tracked(const struct py_stacks *ps);
/* Starts the CPU sampler: a cpu-clock perf event per online CPU, every 1/hz s. 0 or -errno. */
int py_stacks_attach_sampler(struct py_stacks *ps, uint32_t hz);
/* Stops the sampler, its links handed to `batch` (NULL: closed here); records already in the
 * ring buffer are still taken. */
void py_stacks_detach(struct py_stacks *ps, struct link_batch *batch);
void py_stacks_free(struct py_stacks *ps);

#endif /* GPUSPY_PY_STACKS_H */
