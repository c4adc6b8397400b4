/* SPDX-License-Identifier: MIT */
/*
 * Kernel names in the trace: BPF's name records (from __cudaRegisterFunction,
 * cuModuleGetFunction, cuLibraryGetKernel) written compactly, and for a runtime launch of a
 * host stub that was registered before gpuspy attached, the stub's ELF symbol — nvcc gives
 * the host stub the kernel's own mangled name — read while the process still runs.
 */
#ifndef GPUSPY_CUDA_NAMES_H
#define GPUSPY_CUDA_NAMES_H

#include <stddef.h>
#include "bpf/records.h"

struct cuda_names;
struct pid_list;
struct trace_writer;

struct cuda_names *cuda_names_new(void);
void cuda_names_free(struct cuda_names *n);
/* BPF's fixed-size name record: checked, compacted, written, remembered. 0 or -errno. */
int cuda_names_from_bpf(struct cuda_names *n, struct trace_writer *w,
			const struct gs_cuda_name *rec);
/* Names the launch handles a running process obtained before gpuspy attached (nvcc's stubs
 * keep them in statics), while it is sure to exist. 0 or -errno (a write error). */
int cuda_names_scan_process(struct cuda_names *n, struct trace_writer *w, pid_t pid);
/* A call record just written: names its launch's host stub from ELF symbols when nothing
 * named it yet (tried once per stub). 0 or -errno (a write error). */
int cuda_names_note_call(struct cuda_names *n, struct trace_writer *w,
			 const struct gs_cuda_call *call);
/* Exited processes (record_exit.h): their handles are forgotten. */
void cuda_names_forget(struct cuda_names *n, const struct pid_list *dead);
/* Per-process entries kept: (process, handle) pairs known, processes scanned. */
size_t cuda_names_tracked(const struct cuda_names *n);

#endif /* GPUSPY_CUDA_NAMES_H */
