// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/exit_codes.h"
#include "lib/messages.h"
#include "lib/value_parse.h"
#include "loader/record/record_opts.h"
#include "output/analysis/steps.h"

static const char usage[] =
    "usage: gpuspy record [options] -- COMMAND [ARGS...]\n"
    "       gpuspy record [options] -p PID[,PID...]\n"
    "       gpuspy record [options] -a\n"
    "\n"
    "Record OS-runtime activity (every syscall, off-CPU time, process lifecycle), CUDA\n"
    "API calls and GPU activity, Python stacks and PyTorch operators of a launched\n"
    "command, of running processes (no restart needed) or of the whole host.\n"
    "\n"
    "targets:\n"
    "  -- COMMAND ...            launch COMMAND traced; its exit status becomes gpuspy's\n"
    "      --user USER           run COMMAND as USER (name or uid): its uid, gid and\n"
    "                            groups, HOME, USER and LOGNAME; gpuspy keeps root for\n"
    "                            BPF (default: COMMAND runs as the caller, root with sudo)\n"
    "  -p, --pid PID[,PID...]    attach to running processes (and their existing children)\n"
    "  -a, --all                 trace every process on the host (except gpuspy)\n"
    "      --no-follow           do not trace new children and new threads of the targets\n"
    "\n"
    "output and duration:\n"
    "  -o, --output FILE         trace file (default gpuspy-YYYYMMDD-HHMMSS.gpuspy)\n"
    "  -f, --force               overwrite FILE if it exists\n"
    "  -d, --duration DUR        stop after DUR (e.g. 10s, 500ms, 2m); a launched command\n"
    "                            still running then gets SIGTERM\n"
    "      --steps N             record N training steps, then stop (steps found live as\n"
    "                            the steps report finds them); a launched command runs on\n"
    "      --skip-steps K        with --steps: the window starts after the first K steps\n"
    "                            (warm-up; default 0)\n"
    "      --steps-by WAY        with --steps: nvtx:NAME (NVTX ranges named NAME...) or\n"
    "                            py:FUNCTION (each call); default ProfilerStep#N ranges,\n"
    "                            else the Python step loop\n"
    "\n"
    "capture:\n"
    "      --osrt-threshold DUR  syscalls at least this long become timeline spans\n"
    "                            (default 1000ns, as nsys); every call is counted anyway\n"
    "      --offcpu-threshold DUR  off-CPU intervals at least this long become spans\n"
    "                            (default 1000ns); totals are exact anyway\n"
    "      --stats-interval DUR  checkpoint the exact statistics into the trace this often,\n"
    "                            so a killed recording keeps them (default 10s; 0: only\n"
    "                            at the end)\n"
    "      --buffer-size MIB     ring buffer size, a power of two (default 16)\n"
    "      --max-stat-keys N     (process, thread, syscall) entries of live threads (default\n"
    "                            16384); an exiting thread's entries go to the trace\n"
    "      --no-cuda             do not probe CUDA libraries (default: every libcudart and\n"
    "                            libcuda the targets map, now or later, is probed);\n"
    "                            implies --no-cupti\n"
    "      --no-cupti            do not load gpuspy's CUPTI bridge into a launched command\n"
    "                            nor turn on bridges loaded in the targets (default: on,\n"
    "                            for real GPU kernel and copy times); implies --no-inject\n"
    "      --no-inject           do not load the bridge into running CUDA processes (-p,\n"
    "                            -a) that were started without it (default: loaded with\n"
    "                            ptrace at a syscall boundary, a pause of about a ms)\n"
    "      --no-python           no Python stacks (default: CPython 3.8-3.13 processes get\n"
    "                            their stack on every CUDA call, syscall span, off-CPU span,\n"
    "                            operator and CPU sample)\n"
    "      --sample-hz N         CPU samples per second of Python threads (default 99;\n"
    "                            0: none)\n"
    "      --ops MODE            how PyTorch operators are seen: inprocess (gpuspy loads\n"
    "                            its observer, a RecordFunction callback, into the\n"
    "                            process: cheapest, backward links), uprobes (traps on\n"
    "                            at::_ops::<op>::call), auto (default: inprocess where\n"
    "                            the observer loads and accepts the libtorch, else uprobes)\n"
    "      --record-shapes       also record each operator's input shapes (in-process\n"
    "                            only, as torch.profiler's record_shapes=True: costs the\n"
    "                            process what boxing every operator's inputs costs)\n"
    "      --no-ops              do not record PyTorch operators\n"
    "\n"
    "  -q, --quiet               no status line and no summary\n"
    "  -v, --verbose             libbpf and debug messages\n"
    "  -h, --help                this help\n"
    "\n"
    "Stop with Ctrl-C or SIGTERM: the trace is completed and closed either way.\n"
    "\n"
    "examples:\n"
    "  sudo gpuspy record -o train.gpuspy -- python3 train.py\n"
    "  sudo gpuspy record -p 4242 -d 30s -o stall.gpuspy\n"
    "  sudo gpuspy record -a -d 10s --osrt-threshold 1ms\n"
    "  sudo gpuspy record -p 4242 --skip-steps 100 --steps 5 -o steps.gpuspy\n"
    "  gpuspy report train.gpuspy --report cuda_api_sum,cuda_launches\n"
    "  gpuspy report stall.gpuspy --report osrt_sum,offcpu\n";

enum {
	OPT_NO_FOLLOW = 256,
	OPT_OSRT_THRESHOLD,
	OPT_OFFCPU_THRESHOLD,
	OPT_BUFFER_SIZE,
	OPT_MAX_STAT_KEYS,
	OPT_STATS_INTERVAL,
	OPT_NO_CUDA,
	OPT_NO_CUPTI,
	OPT_NO_PYTHON,
	OPT_SAMPLE_HZ,
	OPT_NO_OPS,
	OPT_OPS,
	OPT_RECORD_SHAPES,
	OPT_NO_INJECT,
	OPT_USER,
	OPT_STEPS,
	OPT_SKIP_STEPS,
	OPT_STEPS_BY,
};

static const struct option long_opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, 'f'},
    {"duration", required_argument, NULL, 'd'},
    {"pid", required_argument, NULL, 'p'},
    {"all", no_argument, NULL, 'a'},
    {"no-follow", no_argument, NULL, OPT_NO_FOLLOW},
    {"osrt-threshold", required_argument, NULL, OPT_OSRT_THRESHOLD},
    {"offcpu-threshold", required_argument, NULL, OPT_OFFCPU_THRESHOLD},
    {"buffer-size", required_argument, NULL, OPT_BUFFER_SIZE},
    {"max-stat-keys", required_argument, NULL, OPT_MAX_STAT_KEYS},
    {"stats-interval", required_argument, NULL, OPT_STATS_INTERVAL},
    {"no-cuda", no_argument, NULL, OPT_NO_CUDA},
    {"no-cupti", no_argument, NULL, OPT_NO_CUPTI},
    {"no-python", no_argument, NULL, OPT_NO_PYTHON},
    {"sample-hz", required_argument, NULL, OPT_SAMPLE_HZ},
    {"no-ops", no_argument, NULL, OPT_NO_OPS},
    {"ops", required_argument, NULL, OPT_OPS},
    {"record-shapes", no_argument, NULL, OPT_RECORD_SHAPES},
    {"no-inject", no_argument, NULL, OPT_NO_INJECT},
    {"user", required_argument, NULL, OPT_USER},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"skip-steps", required_argument, NULL, OPT_SKIP_STEPS},
    {"steps-by", required_argument, NULL, OPT_STEPS_BY},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {0},
};

static void set_defaults(struct record_opts *o)
{
	time_t now = time(NULL);
	struct tm tm;

	memset(o, 0, sizeof(*o));
	o->follow = true;
	o->cuda = true;
	o->cupti = true;
	o->python = true;
	o->ops = true;
	o->ops_mode = OPS_AUTO;
	o->inject = true;
	o->sample_hz = 99;
	o->osrt_threshold_ns = 1000;
	o->offcpu_threshold_ns = 1000;
	o->stats_interval_ns = 10000000000ULL;
	o->ringbuf_bytes = 16u << 20;
	o->max_stat_keys = 16384;
	localtime_r(&now, &tm);
	strftime(o->default_output, sizeof(o->default_output), "gpuspy-%Y%m%d-%H%M%S.gpuspy", &tm);
	o->output = o->default_output;
}

static int parse_buffer_size(const char *arg, struct record_opts *o)
{
	uint64_t mib;

	if (gs_parse_u64(arg, 1, 1024, &mib) || (mib & (mib - 1)))
		return gs_bad_value("--buffer-size", arg, "a power of two from 1 to 1024 (MiB)");
	o->ringbuf_bytes = (uint32_t)(mib << 20);
	return -1;
}

static int parse_user(const char *arg, struct record_opts *o)
{
	int err;

	run_as_free(&o->run_as);
	o->run_as_user = false;
	err = run_as_resolve(arg, &o->run_as);
	if (err == -ENOENT)
		return gs_bad_value("--user", arg, "a user name or uid of the passwd database");
	if (err) {
		gs_error("cannot look up user '%s': %s", arg, strerror(-err));
		return GS_EXIT_FAILURE;
	}
	o->run_as_user = true;
	return -1;
}

static int parse_one(int c, const char *arg, struct record_opts *o)
{
	uint64_t v;

	switch (c) {
	case 'o':
		o->output = arg;
		return -1;
	case 'f':
		o->overwrite = true;
		return -1;
	case 'd':
		if (gs_parse_duration_ns(arg, &o->duration_ns) || !o->duration_ns)
			return gs_bad_value("--duration", arg,
					    "a duration such as 10s, 500ms or 2m");
		return -1;
	case 'p':
		free(o->pids);
		if (gs_parse_pid_list(arg, &o->pids, &o->npids))
			return gs_bad_value("--pid", arg, "a comma-separated list of process ids");
		return -1;
	case 'a':
		o->trace_all = true;
		return -1;
	case OPT_NO_FOLLOW:
		o->follow = false;
		return -1;
	case OPT_NO_CUDA:
		o->cuda = false;
		return -1;
	case OPT_NO_CUPTI:
		o->cupti = false;
		return -1;
	case OPT_NO_PYTHON:
		o->python = false;
		return -1;
	case OPT_NO_OPS:
		o->ops = false;
		return -1;
	case OPT_OPS:
		o->ops_mode_set = true;
		if (!strcmp(arg, "auto"))
			o->ops_mode = OPS_AUTO;
		else if (!strcmp(arg, "uprobes"))
			o->ops_mode = OPS_UPROBES;
		else if (!strcmp(arg, "inprocess"))
			o->ops_mode = OPS_INPROCESS;
		else
			return gs_bad_value("--ops", arg, "auto, uprobes or inprocess");
		return -1;
	case OPT_RECORD_SHAPES:
		o->record_shapes = true;
		return -1;
	case OPT_NO_INJECT:
		o->inject = false;
		return -1;
	case OPT_SAMPLE_HZ:
		if (gs_parse_u64(arg, 0, 10000, &v))
			return gs_bad_value("--sample-hz", arg, "a number from 0 to 10000");
		o->sample_hz = (uint32_t)v;
		return -1;
	case OPT_OSRT_THRESHOLD:
		if (gs_parse_duration_ns(arg, &o->osrt_threshold_ns))
			return gs_bad_value("--osrt-threshold", arg,
					    "a duration such as 1000ns or 1ms");
		return -1;
	case OPT_OFFCPU_THRESHOLD:
		if (gs_parse_duration_ns(arg, &o->offcpu_threshold_ns))
			return gs_bad_value("--offcpu-threshold", arg,
					    "a duration such as 1000ns or 1ms");
		return -1;
	case OPT_STATS_INTERVAL:
		if (gs_parse_duration_ns(arg, &o->stats_interval_ns) ||
		    (o->stats_interval_ns && o->stats_interval_ns < 100000000ULL))
			return gs_bad_value("--stats-interval", arg,
					    "0 or a duration of at least 100ms");
		return -1;
	case OPT_BUFFER_SIZE:
		return parse_buffer_size(arg, o);
	case OPT_USER:
		return parse_user(arg, o);
	case OPT_STEPS:
		if (gs_parse_u64(arg, 1, 1000000, &o->steps))
			return gs_bad_value("--steps", arg, "a number of steps from 1 to 1000000");
		return -1;
	case OPT_SKIP_STEPS:
		if (gs_parse_u64(arg, 0, 1000000000, &o->skip_steps))
			return gs_bad_value("--skip-steps", arg,
					    "a number of steps from 0 to 1000000000");
		o->skip_steps_set = true;
		return -1;
	case OPT_STEPS_BY:
		/* op:NAME needs every operator call kept to find its steps: report and export
		 * take it, the live window does not */
		if (!steps_by_valid(arg) || !strncmp(arg, "op:", 3))
			return gs_bad_value("--steps-by", arg, "nvtx:NAME or py:FUNCTION");
		o->steps_by = arg;
		return -1;
	case OPT_MAX_STAT_KEYS:
		if (gs_parse_u64(arg, 64, 1u << 22, &v))
			return gs_bad_value("--max-stat-keys", arg, "a number from 64 to 4194304");
		o->max_stat_keys = (uint32_t)v;
		return -1;
	case 'q':
		o->quiet = true;
		return -1;
	case 'v':
		gs_verbose = true;
		return -1;
	case 'h':
		fputs(usage, stdout);
		return GS_EXIT_OK;
	default: /* getopt's '?' and ':' are handled by the caller, which has argv */
		return GS_EXIT_USAGE;
	}
}

/* What a step window needs: a way to find the steps among what is recorded. */
static int check_steps(const struct record_opts *o)
{
	if (!o->steps) {
		if (o->skip_steps_set || o->steps_by) {
			gs_error("%s needs --steps N", o->steps_by ? "--steps-by" : "--skip-steps");
			return GS_EXIT_USAGE;
		}
		return -1;
	}
	if (o->trace_all) {
		gs_error("--steps follows the training steps of a launched command or of -p "
			 "processes, not of every process (-a)");
		return GS_EXIT_USAGE;
	}
	if (o->steps_by && !strncmp(o->steps_by, "py:", 3) && !o->python) {
		gs_error("--steps-by %s reads the Python stacks: not with --no-python",
			 o->steps_by);
		return GS_EXIT_USAGE;
	}
	if (o->steps_by && !strncmp(o->steps_by, "nvtx:", 5) && !o->cupti) {
		gs_error(
		    "--steps-by %s reads NVTX ranges, which the CUPTI bridge records: not with "
		    "--no-cupti or --no-cuda",
		    o->steps_by);
		return GS_EXIT_USAGE;
	}
	if (!o->steps_by && !o->python && !o->cupti) {
		gs_error(
		    "--steps finds steps in NVTX ranges (the CUPTI bridge) or the Python stacks: "
		    "not with both --no-python and --no-cupti");
		return GS_EXIT_USAGE;
	}
	return -1;
}

/* The operator options that cannot work together. */
static int check_ops(const struct record_opts *o)
{
	if (!o->ops && (o->record_shapes || o->ops_mode_set)) {
		gs_error("--no-ops records no operator: not with --ops or --record-shapes");
		return GS_EXIT_USAGE;
	}
	if (o->record_shapes && o->ops_mode == OPS_UPROBES) {
		gs_error("--record-shapes needs the in-process observer: not with --ops uprobes");
		return GS_EXIT_USAGE;
	}
	if (o->ops_mode == OPS_INPROCESS && (!o->cuda || !o->cupti || !o->inject)) {
		gs_error(
		    "--ops inprocess: the observer is loaded with ptrace and speaks through the "
		    "CUPTI bridge's probe: not with --no-inject, --no-cupti or --no-cuda");
		return GS_EXIT_USAGE;
	}
	return -1;
}

static int check_targets(const struct record_opts *o)
{
	int kinds = (o->npids > 0) + (o->command != NULL) + o->trace_all;

	if (kinds == 0) {
		gs_error(
		    "record needs a target: -- COMMAND, -p PID or -a (see 'gpuspy record --help')");
		return GS_EXIT_USAGE;
	}
	if (kinds > 1) {
		gs_error("record takes one kind of target: -- COMMAND, -p PID or -a");
		return GS_EXIT_USAGE;
	}
	if (o->run_as_user && !o->command) {
		gs_error("--user is for a launched command (-- COMMAND): -p and -a trace processes "
			 "as they run");
		return GS_EXIT_USAGE;
	}
	return check_ops(o) >= 0 ? GS_EXIT_USAGE : check_steps(o);
}

int record_opts_parse(int argc, char **argv, struct record_opts *o)
{
	int c, ret;

	set_defaults(o);
	optind = 1;
	opterr = 0; /* gs_option_error() says it in one line */
	/* '+': options end at the command, so `gpuspy record -- ls -l` keeps ls's -l */
	while ((c = getopt_long(argc, argv, "+:o:fd:p:aqvh", long_opts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return gs_option_error("record", c, argv);
		ret = parse_one(c, optarg, o);
		if (ret >= 0)
			return ret;
	}
	if (optind < argc)
		o->command = &argv[optind];
	o->cupti = o->cupti && o->cuda; /* bridges are found by the CUDA library scan */
	o->inject = o->inject && o->cupti;
	return check_targets(o);
}

void record_opts_free(struct record_opts *o)
{
	free(o->pids);
	o->pids = NULL;
	run_as_free(&o->run_as);
	o->run_as_user = false;
}
