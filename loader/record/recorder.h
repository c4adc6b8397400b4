/* SPDX-License-Identifier: MIT */
/* The state of one `gpuspy record` run (or of a live view's recording), shared by its modules:
 * record_cmd.c (checks, lifecycle and event loop), record_trace.c (what goes into the trace file
 * besides BPF records), record_targets.c (which processes are traced) and record_bridges.c
 * (the CUPTI bridge per target). Each declares its functions in its own header. */
#ifndef GPUSPY_RECORDER_H
#define GPUSPY_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/key_index.h"
#include "loader/record/launch.h"
#include "loader/record/record_opts.h"
#include "loader/record/target_watch.h"
#include "output/trace/trace_format.h"

struct bpf_session;
struct cuda_names;
struct cuda_probes;
struct cupti_link;
struct fd_names;
struct late_bridges;
struct op_probes;
struct proc_attrs;
struct py_stacks;
struct step_window;
struct trace_writer;

/* The loss counters as LOSS, LOSS_MORE and GPU_LOSS records hold them. */
struct loss_counts {
	uint64_t counts[GS_LOSS_NKINDS];
	uint64_t gpu_batches, gpu_records, gpu_gaps;
};

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
	pid_t *torch_pids;	   /* processes to load the PyTorch observer into at the attach */
	size_t ntorch_pids, torch_pids_cap;
	struct key_index torch_done; /* pid -> how its operators are seen (record_torch.c) */
	struct launched_cmd cmd;
	struct target_watch watch;
	struct step_window *window;   /* record --steps; NULL: everything is recorded */
	struct loss_counts loss_base; /* losses before a step window: not the window's */
	/* live views (top, serve): after each statistics checkpoint; <0 an error, 1 stop */
	int (*on_tick)(struct recorder *r, uint64_t now);
	void *live; /* the live command's own state */
	uint64_t
	    last_sweep_ns; /* statistics of exited threads last looked for (checkpoint_stats) */
	uint64_t events;
	int write_err;
	int child_status;
	bool child_reaped;
};

#endif /* GPUSPY_RECORDER_H */
