/* SPDX-License-Identifier: MIT */
/* `gpuspy record` options, parsed and checked before anything is attached. */
#ifndef GPUSPY_RECORD_OPTS_H
#define GPUSPY_RECORD_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "loader/record/run_as.h"

/* How PyTorch operators are seen (--ops). */
enum ops_mode {
	OPS_AUTO,      /* in-process where the observer loads and starts, else uprobes */
	OPS_UPROBES,   /* uprobes on at::_ops::<op>::call only */
	OPS_INPROCESS, /* the in-process observer only: nothing where it cannot be used */
};

struct record_opts {
	const char *output;
	char default_output[64];
	bool overwrite;
	bool quiet;
	bool trace_all;
	bool follow;
	bool cuda;	     /* probe CUDA libraries (--no-cuda turns it off) */
	bool cupti;	     /* GPU activity through the CUPTI bridge (--no-cupti, or --no-cuda) */
	bool live;	     /* top, serve: their CUDA probe set (live_cmd.c) */
	bool syscall_counts; /* count syscalls, time none (serve's default) */
	bool python;	     /* Python stacks and CPU samples (--no-python turns them off) */
	bool ops;	     /* PyTorch operator calls (--no-ops turns them off) */
	enum ops_mode ops_mode; /* --ops */
	bool ops_mode_set;
	bool record_shapes;   /* --record-shapes: operators' input shapes (in-process) */
	bool inject;	      /* load the bridge into running CUDA processes (--no-inject) */
	uint32_t sample_hz;   /* CPU samples per second per thread of Python processes; 0: none */
	uint64_t duration_ns; /* 0: until the targets exit or a signal */
	uint64_t osrt_threshold_ns;
	uint64_t offcpu_threshold_ns;
	uint64_t stats_interval_ns; /* statistics checkpoints; 0: only at the end */
	uint32_t ringbuf_bytes;
	uint32_t max_stat_keys;
	uint64_t steps;	     /* --steps: record this many training steps, then stop; 0: no window */
	uint64_t skip_steps; /* --skip-steps: after this many (warm-up) */
	bool skip_steps_set;
	const char *steps_by; /* --steps-by nvtx:NAME or py:FUNCTION; NULL: as the steps report */
	pid_t *pids;
	size_t npids;
	char **command;	  /* NULL-terminated argv after "--" */
	bool run_as_user; /* --user: the command runs as run_as, not as the caller */
	struct run_as run_as;
};

/* Returns -1 to go on, or an exit code (help printed: 0, bad usage: GS_EXIT_USAGE). */
int record_opts_parse(int argc, char **argv, struct record_opts *o);
void record_opts_free(struct record_opts *o);

#endif /* GPUSPY_RECORD_OPTS_H */
