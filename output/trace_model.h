/* SPDX-License-Identifier: MIT */
/*
 * What reports need from a trace, gathered in one streaming pass: the recording's settings,
 * processes and threads with their names and lifecycle, exact per-thread statistics and the
 * loss counters, the CUDA API calls (cuda_model.h), the CUPTI bridge's GPU records
 * (gpu_model.h) and the PyTorch operator calls (op_model.h). Spans are not kept: the exporter
 * streams them separately, and the GPU join and gpu_idle read the file again (`path`).
 */
#ifndef GPUSPY_TRACE_MODEL_H
#define GPUSPY_TRACE_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include "cuda_model.h"
#include "gpu_model.h"
#include "histogram.h"
#include "key_index.h"
#include "op_model.h"
#include "py_model.h"
#include "trace_format.h"

struct model_thread {
	uint32_t pid, tid;
	char comm[GS_COMM_LEN];
};

struct model_process {
	uint32_t pid, ppid;
	char comm[GS_COMM_LEN];
	char exe[GS_FILENAME_LEN]; /* from exec, when seen */
	uint64_t start_ts, end_ts; /* 0: before / after the recording */
	int32_t exit_code;
	bool exited;
	uint32_t threads;
};

struct model_syscall {
	uint32_t pid, tid, nr;
	struct duration_stats stats;
};

struct model_offcpu {
	uint32_t pid, tid;
	uint64_t ns[GS_OFFCPU_NREASONS];
	uint64_t count[GS_OFFCPU_NREASONS];
};

struct model_fd {
	uint32_t pid, fd;
	uint64_t ino;
	char *name;
};

struct trace_model {
	char *path; /* the trace file, for the passes that read it again */
	struct gs_file_header header;
	char command[1024];
	uint64_t osrt_threshold_ns, offcpu_threshold_ns;
	uint32_t mode;
	bool follow;
	uint64_t start_ts, end_ts;
	bool complete;
	uint64_t records, spans, offcpu_spans;
	uint64_t losses[2 * GS_LOSS_SLOTS]; /* GS_REC_LOSS, then GS_REC_LOSS_MORE */

	struct model_thread *threads;
	size_t nthreads, threads_cap;
	struct model_process *procs;
	size_t nprocs, procs_cap;
	struct model_syscall *syscalls;
	size_t nsyscalls, syscalls_cap;
	struct model_offcpu *offcpu;
	size_t noffcpu, offcpu_cap;
	struct model_fd *fds;
	size_t nfds, fds_cap;
	uint64_t stats_ts; /* when the statistics were last checkpointed; 0: none in the file */

	struct key_index ix_threads, ix_procs, ix_syscalls, ix_offcpu, ix_fds;
	struct cuda_model cuda;
	struct gpu_model gpu;
	struct op_model ops; /* PyTorch operator calls */
	struct py_model py;  /* Python interpreters, code objects and stacks */
};

/* 0, or -1 with a one-line message in err (a corrupt file; nothing is left to free). A
 * truncated file loads with model->complete false. */
int trace_model_load(const char *path, struct trace_model *m, char *err, size_t errlen);
void trace_model_free(struct trace_model *m);
const char *trace_model_thread_name(const struct trace_model *m, uint32_t pid, uint32_t tid);
const struct model_process *trace_model_process(const struct trace_model *m, uint32_t pid);
/* Every event counted lost, the GPU records' losses included. */
uint64_t trace_model_loss_total(const struct trace_model *m);
/* The name of `fd` in `pid` when it referred to inode `ino`, or NULL. */
const char *trace_model_fd_name(const struct trace_model *m, uint32_t pid, uint32_t fd,
				uint64_t ino);

#endif /* GPUSPY_TRACE_MODEL_H */
