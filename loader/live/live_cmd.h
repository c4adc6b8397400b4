/* SPDX-License-Identifier: MIT */
/*
 * The driver that `gpuspy top` and `gpuspy serve` share: their common options and command-line
 * handling, the checks before any BPF work, and a recording set up to feed a live_model instead
 * of a file (system-wide unless -p; statistics checkpointed each interval; span records only
 * for a view that asks for them: top's wait column). A view describes itself in a struct live_cmd.
 */
#ifndef GPUSPY_LIVE_CMD_H
#define GPUSPY_LIVE_CMD_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "loader/live/gpu_sample.h"

struct live_model;
struct recorder;

struct live_opts {
	pid_t *pids; /* -p; none: the whole host */
	size_t npids;
	uint64_t duration_ns; /* -d; 0: until a signal */
	uint64_t interval_ns; /* --interval */
	uint64_t grace_ns;    /* how long an exited process stays */
	bool cupti, inject;
	uint32_t ringbuf_bytes;
	/* syscalls and off-CPU intervals at least this long are recorded as spans (a ring-buffer
	 * record each), for a view that sorts time by them; 0: none, counts and totals only */
	uint64_t span_threshold_ns;
	bool syscall_counts;	      /* count syscalls, time none (serve's default: osrt.bpf.c) */
	struct gpu_sample gpu_sample; /* --gpu-sample */
};

/* getopt codes of the shared long options (beyond single letters -p, -d, -v, -h) */
enum {
	LIVE_OPT_INTERVAL = 300,
	LIVE_OPT_NO_CUPTI,
	LIVE_OPT_NO_INJECT,
	LIVE_OPT_BUFFER_SIZE,
	LIVE_OPT_GRACE,
	LIVE_OPT_GPU_SAMPLE,
	LIVE_OPT_FIRST_OWN, /* the commands' own options start here */
};

/* What a view's parse_one returns when it does not return an exit code. */
enum {
	LIVE_OPT_TAKEN = -1,	/* the option and its value are stored */
	LIVE_OPT_NOT_MINE = -2, /* not one of its options: an unknown one, said by the driver */
};

/* The shared options, which a view's short option string and long option table begin with
 * (':' first: the driver says a missing value itself). --grace is a view's choice. */
#define LIVE_SHORT_OPTS ":p:d:vh"
/* one option per line, which clang-format cannot keep in a macro */
/* clang-format off */
#define LIVE_LONG_OPTS                                                                             \
	{"pid", required_argument, NULL, 'p'},                                                     \
	{"duration", required_argument, NULL, 'd'},                                                \
	{"verbose", no_argument, NULL, 'v'},                                                       \
	{"interval", required_argument, NULL, LIVE_OPT_INTERVAL},                                  \
	{"no-cupti", no_argument, NULL, LIVE_OPT_NO_CUPTI},                                        \
	{"gpu-sample", required_argument, NULL, LIVE_OPT_GPU_SAMPLE},                              \
	{"no-inject", no_argument, NULL, LIVE_OPT_NO_INJECT},                                      \
	{"buffer-size", required_argument, NULL, LIVE_OPT_BUFFER_SIZE},                            \
	{"help", no_argument, NULL, 'h'}
/* The --help lines of the shared options that every view describes alike (-p, --interval, -d
 * and --grace it words itself), listed after its own; `pad`, spaces, moves their text from
 * column 24 to the view's column. */
#define LIVE_USAGE_OPTS(pad)                                                                       \
	"      --gpu-sample ON/PERIOD\n"                                                           \
	"                        " pad "kernel records (GPU busy, kernels) for ON of every PERIOD,\n"  \
	"                        " pad "e.g. 1s/10s, whole intervals: estimates, marked sampled;\n"   \
	"                        " pad "always (default: exact, CUPTI's cost on every kernel) or\n"   \
	"                        " pad "off (as --no-cupti); launches and API calls stay exact\n"     \
	"      --no-cupti        " pad "no GPU times: do not turn on CUPTI bridges\n"                \
	"      --no-inject       " pad "do not load the bridge into running CUDA processes\n"        \
	"      --buffer-size MIB " pad "ring buffer, a power of two (default 16)\n"                  \
	"  -v, --verbose         " pad "libbpf and attach messages\n"                                \
	"  -h, --help            " pad "this help\n"
/* clang-format on */

/* A live view, as the driver runs it. `view` in the hooks is the command's own state. */
struct live_cmd {
	const char *name;		/* "top": in messages */
	const char *usage;		/* what --help prints */
	const char *short_opts;		/* LIVE_SHORT_OPTS, then its own letters */
	const struct option *long_opts; /* LIVE_LONG_OPTS, then its own, ended by {0} */
	const char *args_hint;		/* after "NAME takes no arguments ('ARG')", or "" */
	uint64_t interval_ns;		/* the default of --interval */
	uint64_t grace_ns;		/* the default of --grace, for a view that offers it */
	/* One of its own options: an exit code for a bad value (message printed), else
	 * LIVE_OPT_TAKEN or LIVE_OPT_NOT_MINE. */
	int (*parse_one)(void *view, int c, const char *arg);
	/* Optional: its options checked against the host, before the privilege checks; 0 or an
	 * exit code (message printed). */
	int (*check)(const void *view);
	/* Once the command line is checked: sets its model up, calls live_cmd_record(), frees
	 * what it set up; an exit code. */
	int (*run_view)(void *view, struct live_opts *o);
};

/* A live view's whole command: options (defaults from `cmd`), checks, then cmd->run_view.
 * An exit code; --help's is 0. */
int live_cmd_main(const struct live_cmd *cmd, int argc, char **argv, void *view);
/* The recording that feeds `lm`, from the probes' start until a signal, -d or on_tick's stop
 * (recorder.h; r->live is `view`), with the signal handlers installed. Takes the -p pids over
 * (o->pids is NULL after). An exit code. */
int live_cmd_record(struct live_opts *o, struct live_model *lm,
		    int (*on_tick)(struct recorder *r, uint64_t now), void *view);

#endif /* GPUSPY_LIVE_CMD_H */
