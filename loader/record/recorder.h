/* SPDX-License-Identifier: MIT */
/* The state of one `gpuspy record` run, shared by its modules: record_cmd.c (checks,
 * lifecycle and event loop), record_trace.c (what goes into the trace file besides BPF
 * records) and record_targets.c (which processes are traced). */
#ifndef GPUSPY_RECORDER_H
#define GPUSPY_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "loader/record/launch.h"
#include "loader/record/record_opts.h"
#include "loader/record/target_watch.h"

struct bpf_session;
struct cuda_names;
struct cuda_probes;
struct cupti_link;
struct fd_names;
struct late_bridges;
struct op_probes;
struct proc_attrs;
struct py_stacks;
struct trace_writer;

struct recorder {
	struct record_opts opts;
	struct trace_writer *writer;
	struct bpf_session *session;
	struct fd_names *fd_names;
	struct cuda_probes *cuda;      /* NULL with --no-cuda */
	struct cuda_names *cuda_names; /* NULL with --no-cuda */
	struct cupti_link *cupti;      /* NULL with --no-cupti */
	struct op_probes *ops;	       /* NULL with --no-ops */
	struct py_stacks *py;	       /* NULL with --no-python */
	struct proc_attrs *attrs;      /* users and cgroups of the traced processes */
	uint64_t holds_cut_short;      /* holds the watchdog ended before the loader (losses) */
	pid_t *bridge_pids;	       /* running CUDA processes to load the CUPTI bridge into */
	size_t nbridge_pids, bridge_pids_cap;
	struct late_bridges *late; /* processes that start CUDA later; NULL: not loaded */
	struct launched_cmd cmd;
	struct target_watch watch;
	/* live views (top, serve): after each statistics checkpoint; <0 an error, 1 stop */
	int (*on_tick)(struct recorder *r, uint64_t now);
	void *live; /* the live command's own state */
	uint64_t events;
	int write_err;
	int child_status;
	bool child_reaped;
};

/* record_cmd.c */
/* What must hold before any BPF work, for record and the live views alike: privileges, BTF,
 * and -p pids that exist and are processes, not threads. `verb` says what a missing pid
 * refuses ("attach to": "cannot attach to pid N: no such process"). 0, or an exit code
 * (message printed). */
int recorder_check_environment(const pid_t *pids, size_t npids, const char *verb);
/* A recording into the writer the caller opened (a sink, for live views): targets, probes,
 * the poll loop until a signal, -d or the targets' exit, calling on_tick after each
 * checkpoint, then detach and the final statistics. An exit code; the caller frees with
 * recorder_cleanup(). */
int recorder_run_live(struct recorder *r);
void recorder_cleanup(struct recorder *r);
void recorder_install_signal_handlers(void);

/* record_trace.c */
/* Creates the trace file with its header and TRACE_INFO record; prints why on failure. */
int recorder_open_trace(struct recorder *r, uint64_t now);
/* Writes the loss counters (a cumulative LOSS record); `warn` prints each nonzero one. */
int recorder_write_losses(struct recorder *r, uint64_t ts, bool warn);
/* A thread's name as a COMM record; a procfs_thread_fn. */
int recorder_write_comm(void *recorder, pid_t pid, pid_t tid, const char *comm);

/* record_targets.c */
/* Registers the -p pids (with their existing descendants) in BPF's traced set, or with -a
 * names every process; writes the names of what is traced. */
int recorder_add_targets(struct recorder *r);

/* record_bridges.c */
/* A target's CUDA libraries (gs_cuda_lib_role bits) were found at attach: its bridge is noted
 * as present, or it is queued for recorder_load_bridges(). 0 or -ENOMEM/write error. */
int recorder_note_cuda_process(struct recorder *r, pid_t pid, int roles);
/* A target whose maps gpuspy may not read (ptrace access refused): said and recorded. */
int recorder_note_unreadable(struct recorder *r, pid_t pid);
/* Loads the bridge into the queued processes (after the probes are attached). */
int recorder_load_bridges(struct recorder *r);
/* Starts loading the bridge into processes whose first CUDA call comes later (late_bridges.h),
 * unless --no-cupti, --no-inject or no bridge. 0 or -errno, said. */
int recorder_start_late_bridges(struct recorder *r);
/* The late loads finished since the last call: recorded, new bridges turned on. */
int recorder_take_late_bridges(struct recorder *r);

#endif /* GPUSPY_RECORDER_H */
