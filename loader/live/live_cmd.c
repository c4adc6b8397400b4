// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/exit_codes.h"
#include "lib/messages.h"
#include "lib/value_parse.h"
#include "loader/bridge/cupti_link.h"
#include "loader/live/live_cmd.h"
#include "loader/live/live_model.h"
#include "loader/probes/cuda_probes.h"
#include "loader/record/record_cmd.h"
#include "loader/record/recorder.h"
#include "loader/session/bpf_session.h"
#include "output/trace/trace_writer.h"

static void live_opts_defaults(struct live_opts *o, uint64_t interval_ns, uint64_t grace_ns)
{
	memset(o, 0, sizeof(*o));
	o->interval_ns = interval_ns;
	o->grace_ns = grace_ns;
	o->cupti = true;
	o->inject = true;
	o->ringbuf_bytes = 16u << 20;
	gpu_sample_parse("always", &o->gpu_sample);
}

/* A shared option: an exit code for a bad value, else LIVE_OPT_TAKEN or LIVE_OPT_NOT_MINE. */
static int live_opts_parse_one(int c, const char *arg, struct live_opts *o)
{
	uint64_t v;

	switch (c) {
	case 'p':
		free(o->pids);
		o->pids = NULL;
		if (gs_parse_pid_list(arg, &o->pids, &o->npids))
			return gs_bad_value("--pid", arg, "a comma-separated list of process ids");
		return LIVE_OPT_TAKEN;
	case 'd':
		if (gs_parse_duration_ns(arg, &o->duration_ns) || !o->duration_ns)
			return gs_bad_value("--duration", arg,
					    "a duration such as 10s, 500ms or 2m");
		return LIVE_OPT_TAKEN;
	case 'v':
		gs_verbose = true;
		return LIVE_OPT_TAKEN;
	case LIVE_OPT_INTERVAL:
		if (gs_parse_duration_ns(arg, &o->interval_ns) || o->interval_ns < 100000000ULL ||
		    o->interval_ns > 3600000000000ULL)
			return gs_bad_value("--interval", arg, "a duration from 100ms to 1h");
		return LIVE_OPT_TAKEN;
	case LIVE_OPT_GRACE:
		if (gs_parse_duration_ns(arg, &o->grace_ns) || o->grace_ns > 86400000000000ULL)
			return gs_bad_value("--grace", arg, "a duration such as 60s or 5m");
		return LIVE_OPT_TAKEN;
	case LIVE_OPT_NO_CUPTI:
		o->cupti = false;
		return LIVE_OPT_TAKEN;
	case LIVE_OPT_GPU_SAMPLE:
		if (gpu_sample_parse(arg, &o->gpu_sample))
			return gs_bad_value(
			    "--gpu-sample", arg,
			    "ON/PERIOD durations with ON <= PERIOD (1s/10s), always "
			    "or off");
		return LIVE_OPT_TAKEN;
	case LIVE_OPT_NO_INJECT:
		o->inject = false;
		return LIVE_OPT_TAKEN;
	case LIVE_OPT_BUFFER_SIZE:
		if (gs_parse_u64(arg, 1, 1024, &v) || (v & (v - 1)))
			return gs_bad_value("--buffer-size", arg,
					    "a power of two from 1 to 1024 (MiB)");
		o->ringbuf_bytes = (uint32_t)(v << 20);
		return LIVE_OPT_TAKEN;
	default:
		return LIVE_OPT_NOT_MINE;
	}
}

static void live_opts_free(struct live_opts *o)
{
	free(o->pids);
	o->pids = NULL;
}

/* The recorder for a live view: records go to `lm`. Takes the -p pids over. 0 or an exit
 * code. */
static int live_recorder_init(struct recorder *r, struct live_opts *o, struct live_model *lm)
{
	struct record_opts *ro = &r->opts;

	memset(ro, 0, sizeof(*ro));
	ro->output = "(live view)";
	ro->quiet = !gs_verbose; /* the view is the output: no status line, no summary */
	ro->trace_all = !o->npids;
	ro->follow = true;
	ro->cuda = true;
	ro->live = true; /* what the views show, and no more: the fewest traps per hot call */
	ro->syscall_counts = o->syscall_counts;
	ro->cupti = o->cupti;
	ro->inject = o->inject;
	/* counts and totals need no spans, which cost a ring-buffer record each: statistics are
	 * exact without them */
	ro->osrt_threshold_ns = o->span_threshold_ns ?: UINT64_MAX;
	ro->offcpu_threshold_ns = o->span_threshold_ns ?: UINT64_MAX;
	ro->stats_interval_ns = o->interval_ns;
	ro->duration_ns = o->duration_ns;
	ro->ringbuf_bytes = o->ringbuf_bytes;
	ro->max_stat_keys = 16384;
	/* the recorder owns the pids from here (recorder_cleanup frees them) */
	ro->pids = o->pids;
	ro->npids = o->npids;
	o->pids = NULL;
	if (trace_writer_open_sink(live_model_take, lm, &r->writer)) {
		gs_error("cannot set up the live view: out of memory");
		return GS_EXIT_FAILURE;
	}
	return 0;
}

/* One option of the command line: a shared one, --help, or the view's own. An exit code, or
 * LIVE_OPT_TAKEN. */
static int parse_option(const struct live_cmd *cmd, int c, char **argv, struct live_opts *o,
			void *view)
{
	int ret = live_opts_parse_one(c, optarg, o);

	if (ret != LIVE_OPT_NOT_MINE)
		return ret;
	if (c == 'h') {
		fputs(cmd->usage, stdout);
		return GS_EXIT_OK;
	}
	ret = cmd->parse_one(view, c, optarg);
	return ret == LIVE_OPT_NOT_MINE ? gs_option_error(cmd->name, c, argv) : ret;
}

/* -1 to go on; --help's 0, like a usage error, is an exit code: nothing may start after it */
static int parse_args(const struct live_cmd *cmd, int argc, char **argv, struct live_opts *o,
		      void *view)
{
	int c, ret;

	optind = 1;
	opterr = 0; /* gs_option_error() says it in one line */
	while ((c = getopt_long(argc, argv, cmd->short_opts, cmd->long_opts, NULL)) != -1) {
		ret = parse_option(cmd, c, argv, o, view);
		if (ret != LIVE_OPT_TAKEN)
			return ret;
	}
	if (optind < argc) {
		gs_error("%s takes no arguments ('%s')%s", cmd->name, argv[optind], cmd->args_hint);
		return GS_EXIT_USAGE;
	}
	/* after the loop: --interval may come after --gpu-sample */
	if (gpu_sample_fit(&o->gpu_sample, o->interval_ns))
		return gs_bad_value("--gpu-sample", o->gpu_sample.label,
				    "ON and PERIOD in whole --interval steps");
	/* one word for "no kernel records" in what the views show, whichever option said it */
	if (o->gpu_sample.mode == GPU_SAMPLE_OFF || !o->cupti) {
		o->cupti = false;
		gpu_sample_parse("off", &o->gpu_sample);
	}
	return -1;
}

/* The view's own check first: a usage problem is said before a missing privilege. */
static int check_can_start(const struct live_cmd *cmd, const struct live_opts *o, const void *view)
{
	int err = cmd->check ? cmd->check(view) : 0;

	return err ?: recorder_check_environment(o->pids, o->npids, "watch");
}

int live_cmd_main(const struct live_cmd *cmd, int argc, char **argv, void *view)
{
	struct live_opts o;
	int ret;

	live_opts_defaults(&o, cmd->interval_ns, cmd->grace_ns);
	ret = parse_args(cmd, argc, argv, &o, view);
	if (ret < 0)
		ret = check_can_start(cmd, &o, view) ?: cmd->run_view(view, &o);
	live_opts_free(&o);
	return ret;
}

/* The launch counts BPF keeps (the live probe set) into the model, at each tick; and the
 * bridges' kernel records switched for the interval that begins (--gpu-sample). */
static int pull_launches(void *ctx, struct live_model *lm)
{
	struct recorder *r = ctx;
	int err = r->cuda ? cuda_probes_read_launches(r->cuda, live_model_launches, lm) : 0;

	cupti_link_pause_kernels(r->cupti, !lm->kernels_on);
	if (err)
		gs_warn("cannot read the launch counts: %s", strerror(-err));
	return 0; /* the view goes on; what was not read is read at the next tick */
}

static int take_cputime(void *ctx, const struct gs_task_cputime *t)
{
	live_model_cputime(ctx, t);
	return 0;
}

/* The CPU times of the processes through BPF's task iterator; nonzero: read /proc instead. */
static int pull_cputime(void *ctx, struct live_model *lm)
{
	struct recorder *r = ctx;
	int err = bpf_session_read_cputime(r->session, take_cputime, lm);

	if (err && err != -ENOTSUP)
		gs_warn("cannot read CPU times through BPF, reading /proc: %s", strerror(-err));
	return err;
}

int live_cmd_record(struct live_opts *o, struct live_model *lm,
		    int (*on_tick)(struct recorder *r, uint64_t now), void *view)
{
	struct recorder r = {.cmd = {.go_fd = -1, .exec_fd = -1}};
	int ret;

	r.live = view;
	r.on_tick = on_tick;
	lm->pull = pull_launches;
	lm->pull_cputime = pull_cputime;
	lm->pull_ctx = &r;
	lm->sample = o->gpu_sample;
	ret = live_recorder_init(&r, o, lm);
	if (!ret) {
		recorder_install_signal_handlers();
		ret = recorder_run_live(&r);
	}
	lm->pull = NULL;
	lm->pull_cputime = NULL;
	recorder_cleanup(&r);
	return ret;
}
