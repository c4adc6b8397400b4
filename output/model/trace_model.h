/* SPDX-License-Identifier: MIT */
/*
 * What reports need from a trace, gathered in one streaming pass: the recording's settings,
 * processes and threads with their names and lifecycle, exact per-thread statistics and the
 * loss counters, the CUDA API calls (cuda_model.h), the CUPTI bridge's GPU records
 * (gpu_model.h) and the PyTorch operator calls (op_model.h). Spans are not kept: the exporter
 * streams them separately, and the GPU join and gpu_idle read the file again (`path`).
 *
 * Memory does not grow with syscall and off-CPU spans. It grows with what reports must hold:
 * about 80 bytes per (process, thread, syscall) key plus 8 per nonzero histogram bucket, a few
 * hundred bytes per thread and process, an index entry per (process, fd, file) name (each name
 * stored once), 8 bytes per CUDA API call (exact medians), GPU records, and, when a load keeps
 * them (TRACE_MODEL_*), 52 bytes per Python stack (frames stored once per distinct stack) and
 * 64 per PyTorch operator call.
 */
#ifndef GPUSPY_TRACE_MODEL_H
#define GPUSPY_TRACE_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/key_index.h"
#include "lib/string_pool.h"
#include "output/model/gpu/cuda_model.h"
#include "output/model/gpu/gpu_model.h"
#include "output/model/histogram.h"
#include "output/model/op_model.h"
#include "output/model/py_model.h"
#include "output/trace/pid_filter.h"
#include "output/trace/trace_format.h"

struct model_thread {
	uint32_t pid, tid;
	char comm[GS_COMM_LEN];
	uint32_t syscalls; /* while loading: its first syscalls[] entry + 1, chained by `next` */
};

struct model_process {
	uint32_t pid, ppid;
	char comm[GS_COMM_LEN];
	char exe[GS_FILENAME_LEN]; /* from exec, when seen */
	uint64_t start_ts, end_ts; /* 0: before / after the recording */
	int32_t exit_code;
	bool exited;
	uint32_t threads;
	uint64_t syscalls; /* calls counted over its threads */
	/* GS_REC_PROC_INFO, or the parent's at fork: ids in trace_model.attr_strings */
	bool has_attr;
	uint32_t uid, euid;
	uint32_t user, cgroup;
	/* GS_REC_PROC_ENV, or the parent's at fork: -1 where that variable was unset */
	bool has_rank;
	int32_t rank, local_rank, world_size;
};

/*
 * Statistics records are checkpoints (cumulative, the later replaces the earlier) and, with
 * GS_STATS_FINAL, a thread's final totals at its exit, after which its key left the BPF map and
 * a later record of the key is a new thread that reused the tid. A key's statistics are the sum
 * of its FINAL records plus its live checkpoint: the latest one not older than the latest FINAL
 * (an older one was that thread's, superseded by its final totals).
 */

/* A (process, thread, syscall) key: 80 bytes, plus 8 per nonzero histogram bucket. */
struct model_syscall {
	uint32_t pid, tid, nr;
	uint32_t next;		/* while loading: the thread's next entry + 1; 0: none */
	uint64_t ts;		/* while loading: its checkpoint's, or its latest FINAL's */
	struct key_stats stats; /* buckets in trace_model.hist; trace_model_syscall_stats() */
};

struct model_offcpu {
	uint32_t pid, tid;
	uint64_t ns[GS_OFFCPU_NREASONS];    /* once loaded: the thread's totals */
	uint64_t count[GS_OFFCPU_NREASONS]; /* (while loading, its FINAL records' sum) */
	uint64_t ckpt_ns[GS_OFFCPU_NREASONS], ckpt_count[GS_OFFCPU_NREASONS];
	uint64_t ckpt_ts, final_ts;
	bool has_ckpt, has_final; /* while loading */
};

struct trace_model {
	char *path;    /* the trace file, for the passes that read it again */
	unsigned kept; /* TRACE_MODEL_* parts loaded */
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
	struct hist_pool hist; /* the syscall keys' histogram buckets */
	struct model_offcpu *offcpu;
	size_t noffcpu, offcpu_cap;
	/* file names by (pid << 32 | fd, inode): one entry per (process, fd, file), the names
	 * stored once each */
	struct string_pool fd_names;
	uint64_t stats_ts; /* the last statistics record's time; 0: none in the file */
	struct string_pool attr_strings; /* user names and cgroup paths */
	const struct pid_filter *filter; /* the processes read (NULL: all); outlives the model */

	struct key_index ix_threads, ix_procs, ix_offcpu, ix_fds; /* syscalls: by thread */
	struct cuda_model cuda;
	struct gpu_model gpu;
	struct op_model ops; /* PyTorch operator calls */
	struct py_model py;  /* Python interpreters, code objects and stacks */
};

/* What a load may leave out, for reports that do not need it: memory that grows with the
 * recording's length. Counts (py.counts) are kept either way. */
#define TRACE_MODEL_PY_STACKS 1u /* every Python stack: python, python_stacks, ops by stack */
#define TRACE_MODEL_OP_CALLS  2u /* every PyTorch operator call (ops.calls_seen counts them) */
#define TRACE_MODEL_ALL	      (TRACE_MODEL_PY_STACKS | TRACE_MODEL_OP_CALLS)

/* 0, or -1 with a one-line message in err (a corrupt file; nothing is left to free). A
 * truncated file loads with model->complete false. */
int trace_model_load(const char *path, struct trace_model *m, char *err, size_t errlen);
/* The same keeping only what `keep` (TRACE_MODEL_* bits) names of the optional parts. */
int trace_model_load_only(const char *path, struct trace_model *m, unsigned keep, char *err,
			  size_t errlen);
/* The same for the processes `filter` keeps (pid_filter.h), as if they were the whole trace;
 * the model and the passes that read the file again use it until the model is freed. */
int trace_model_load_filtered(const char *path, struct trace_model *m, unsigned keep,
			      const struct pid_filter *filter, char *err, size_t errlen);
void trace_model_free(struct trace_model *m);
/* A process's user name and cgroup path as recorded; "" when the trace has none (recorded
 * before gpuspy wrote them, or the process was never read). */
const char *trace_model_process_user(const struct trace_model *m, const struct model_process *p);
const char *trace_model_process_cgroup(const struct trace_model *m, const struct model_process *p);
/* Adds key `s`'s statistics to `into` (a report row's). */
void trace_model_syscall_stats(const struct trace_model *m, const struct model_syscall *s,
			       struct duration_stats *into);
const char *trace_model_thread_name(const struct trace_model *m, uint32_t pid, uint32_t tid);
const struct model_process *trace_model_process(const struct trace_model *m, uint32_t pid);
/* Every event counted lost, the GPU records' losses included. */
uint64_t trace_model_loss_total(const struct trace_model *m);
/* The name of `fd` in `pid` when it referred to inode `ino`, or NULL. */
const char *trace_model_fd_name(const struct trace_model *m, uint32_t pid, uint32_t fd,
				uint64_t ino);

#endif /* GPUSPY_TRACE_MODEL_H */
