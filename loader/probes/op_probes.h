/* SPDX-License-Identifier: MIT */
/*
 * Finds the libraries a process maps that define PyTorch operators (at::_ops::<op>::call,
 * loader/probes/op_symbols.h) and attaches the operator component's uprobe session program to all
 * of them with one link per library file: once per (device, inode), for every process that maps the
 * file, since BPF filters by the traced set. Each operator name gets a global index, the probes'
 * cookie, written once as a GS_REC_OP_NAME record. Before any operator of a process is probed, the
 * C++ unwinder it maps is hooked (bpf/ops.bpf.c: op_unwind; op_probes_unwind()).
 *
 * Libraries loaded later (`import torch` after attach) are found when ld.so reports them: the
 * process is held stopped by bpf/cuda.bpf.c until cuda_probes_libs_changed() resumes it, so
 * op_probes_scan() must run before that.
 */
#ifndef GPUSPY_OP_PROBES_H
#define GPUSPY_OP_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct gs_hdr;
struct ops_bpf;
struct link_batch;
struct op_probes;
struct pid_list;
struct trace_writer;

/* `quiet`: no "probing N PyTorch operators" lines on stderr (-q). 0 or -errno. */
int op_probes_new(struct ops_bpf *skel, struct trace_writer *w, bool quiet, struct op_probes **out);
/* Probes the operator libraries `pid` maps now (files not seen before); says so once per
 * process and library. Returns how many operator libraries it maps, or -errno (-ENOENT: the
 * process is gone; -ENOMEM; a trace write error). A library that cannot be probed is warned
 * about and skipped. */
int op_probes_scan(struct op_probes *op, pid_t pid);
/* A GS_REC_OP_UNWIND record: thread rec->tid of rec->pid, which BPF stopped, is about to
 * unwind its stack for a C++ exception; puts back the return addresses the kernel's return
 * probes replaced (bpf/ops.bpf.c: op_unwind), then resumes the process. Also after detach. */
void op_probes_unwind(struct op_probes *op, const struct gs_hdr *rec);
/* Exited processes (record_exit.h): what was said about them is forgotten. */
void op_probes_forget(struct op_probes *op, const struct pid_list *dead);
/* Per-process entries kept: (process, library) pairs said, processes warned about. */
size_t op_probes_tracked(const struct op_probes *op);
/* Hands the operators' probes to `batch` to detach (NULL: detached here); later scans do
 * nothing. The unwinder hooks stay until op_probes_detach_unwinders(), once those are gone. */
void op_probes_detach(struct op_probes *op, struct link_batch *batch);
void op_probes_detach_unwinders(struct op_probes *op, struct link_batch *batch);
void op_probes_free(struct op_probes *op);

#endif /* GPUSPY_OP_PROBES_H */
