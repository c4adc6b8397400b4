// SPDX-License-Identifier: MIT
/*
 * `gpuspy top`: a live view of who uses the GPUs and how, refreshed each interval: per process
 * (or container, or user) GPU busy time and kernels where the CUPTI bridge is active, CUDA
 * launches and API time from uprobes everywhere, GPU memory allocated through the CUDA API,
 * copy bytes, CPU use, and what its main thread waits on. On a terminal it redraws in place
 * (keys: q quit, s next sort column, r reverse is not offered: numbers sort descending);
 * otherwise, and with --once, it prints snapshots for scripts.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include "lib/exit_codes.h"
#include "lib/messages.h"
#include "lib/value_parse.h"
#include "loader/live/live_cmd.h"
#include "loader/live/live_model.h"
#include "loader/live/top_cmd.h"
#include "loader/live/top_rows.h"
#include "loader/record/recorder.h"

#define DEFAULT_INTERVAL_NS 1000000000ULL

enum { OPT_ONCE = LIVE_OPT_FIRST_OWN, OPT_FORMAT, OPT_SORT, OPT_GROUP_BY, OPT_ALL };

static const char usage[] =
    "usage: gpuspy top [-p PID[,PID...]] [--once] [--format text|csv|json] [--sort KEY]\n"
    "                  [--group-by process|container|user] [-n N] [--all] [--interval DUR]\n"
    "                  [-d DUR] [--no-cupti] [--no-inject] [--buffer-size MIB] [-v]\n"
    "\n"
    "A live view of the host's GPU users, refreshed every interval: per process (or\n"
    "container, or user) GPU busy % and kernels/s where gpuspy's CUPTI bridge is active,\n"
    "CUDA launches/s and API time from uprobes everywhere, GPU memory allocated through the\n"
    "CUDA API, host-to-device and device-to-host bytes/s, CPU % and the syscall or off-CPU\n"
    "reason its main thread waited on most. Mode says how a process's GPU side is seen:\n"
    "bridge (started with it), injected (gpuspy loaded it at attach), uprobes (no GPU times).\n"
    "\n"
    "  -p, --pid PIDS        only these processes and their descendants (default: the host)\n"
    "      --once            print one snapshot after one interval and exit\n"
    "  -f, --format FMT      text (default), csv or json; without --once, one snapshot per\n"
    "                        interval (json: one array per line)\n"
    "  -s, --sort KEY        sort by a column's JSON key: gpu_busy_pct, kernels_per_s,\n"
    "                        launches_per_s, api_pct, gpu_mem_bytes, htod_bytes_per_s,\n"
    "                        dtoh_bytes_per_s, cpu_pct, pid, user, container, name, ...\n"
    "                        (default: GPU busy, then launches, API time, CPU)\n"
    "      --group-by KIND   one row per process (default), container or user\n"
    "  -n, --limit N         at most N rows (default: what the terminal holds)\n"
    "      --all             also idle processes (no CPU, CUDA or GPU activity)\n"
    "      --interval DUR    refresh interval (default 1s)\n"
    "  -d, --duration DUR    stop after DUR\n"
    "      --no-cupti        no GPU times: do not turn on CUPTI bridges\n"
    "      --no-inject       do not load the bridge into running CUDA processes\n"
    "      --buffer-size MIB ring buffer, a power of two (default 16)\n"
    "  -v, --verbose         libbpf and attach messages\n"
    "  -h, --help            this help\n"
    "\n"
    "keys (terminal): q quit, s sort by the next column, g cycle process/container/user\n"
    "\n"
    "examples:\n"
    "  sudo gpuspy top\n"
    "  sudo gpuspy top --group-by container --sort gpu_busy_pct\n"
    "  sudo gpuspy top --once --format json | jq '.[] | select(.mode != \"-\")'\n";

struct top_state {
	struct live_model lm;
	struct top_view view;
	bool once, interactive;
	unsigned ticks;
	struct termios saved_tty;
	bool tty_saved;
	char sort_buf[32];
};

static int parse_args(int argc, char **argv, struct live_opts *lo, struct top_state *st)
{
	static const struct option long_opts[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"duration", required_argument, NULL, 'd'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"interval", required_argument, NULL, LIVE_OPT_INTERVAL},
	    {"no-cupti", no_argument, NULL, LIVE_OPT_NO_CUPTI},
	    {"no-inject", no_argument, NULL, LIVE_OPT_NO_INJECT},
	    {"buffer-size", required_argument, NULL, LIVE_OPT_BUFFER_SIZE},
	    {"once", no_argument, NULL, OPT_ONCE},
	    {"format", required_argument, NULL, 'f'},
	    {"sort", required_argument, NULL, 's'},
	    {"group-by", required_argument, NULL, OPT_GROUP_BY},
	    {"limit", required_argument, NULL, 'n'},
	    {"all", no_argument, NULL, OPT_ALL},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	uint64_t v;
	int c, ret;

	optind = 1;
	opterr = 0; /* gs_option_error() says it in one line */
	while ((c = getopt_long(argc, argv, ":p:d:vf:s:n:h", long_opts, NULL)) != -1) {
		ret = live_opts_parse_one(c, optarg, lo);
		if (ret >= 0)
			return ret;
		if (ret == -1)
			continue;
		switch (c) {
		case OPT_ONCE:
			st->once = true;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				st->view.format = TABLE_TEXT;
			else if (!strcmp(optarg, "csv"))
				st->view.format = TABLE_CSV;
			else if (!strcmp(optarg, "json"))
				st->view.format = TABLE_JSON;
			else {
				gs_error("invalid value '%s' for --format: expected text, csv or "
					 "json",
					 optarg);
				return GS_EXIT_USAGE;
			}
			break;
		case 's':
			if (!top_sort_key_valid(optarg)) {
				gs_error("unknown sort key '%s' (see 'gpuspy top --help')", optarg);
				return GS_EXIT_USAGE;
			}
			st->view.sort = optarg;
			break;
		case OPT_GROUP_BY:
			st->view.group_by = group_by_parse(optarg);
			if (st->view.group_by == GROUP_NONE) {
				gs_error("invalid value '%s' for --group-by: expected process, "
					 "container or user",
					 optarg);
				return GS_EXIT_USAGE;
			}
			break;
		case 'n':
			if (gs_parse_u64(optarg, 1, 1000000, &v)) {
				gs_error(
				    "invalid value '%s' for --limit: expected a positive number",
				    optarg);
				return GS_EXIT_USAGE;
			}
			st->view.limit = (size_t)v;
			break;
		case OPT_ALL:
			st->view.all = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return GS_EXIT_OK;
		default:
			return gs_option_error("top", c, argv);
		}
	}
	if (optind < argc) {
		gs_error("top takes no arguments ('%s'): use -p PID to narrow it", argv[optind]);
		return GS_EXIT_USAGE;
	}
	return -1;
}

/* Raw keys without echo, so q and s act at once; restored at exit. */
static void tty_raw(struct top_state *st)
{
	struct termios raw;

	if (tcgetattr(STDIN_FILENO, &st->saved_tty))
		return;
	st->tty_saved = true;
	raw = st->saved_tty;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
}

static void tty_restore(struct top_state *st)
{
	if (st->tty_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &st->saved_tty);
}

/* Keys typed since the last tick; 1 when q asks to stop. */
static int read_keys(struct top_state *st)
{
	struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
	static const enum group_by next_group[] = {[GROUP_PROCESS] = GROUP_CONTAINER,
						   [GROUP_CONTAINER] = GROUP_USER,
						   [GROUP_USER] = GROUP_PROCESS};
	char c;

	while (poll(&pfd, 1, 0) > 0 && read(STDIN_FILENO, &c, 1) == 1) {
		if (c == 'q' || c == 'Q')
			return 1;
		if (c == 's' || c == 'S') {
			snprintf(st->sort_buf, sizeof(st->sort_buf), "%s",
				 top_next_sort_key(st->view.sort));
			st->view.sort = st->sort_buf;
		}
		if (c == 'g' || c == 'G')
			st->view.group_by = next_group[st->view.group_by];
	}
	return 0;
}

static unsigned terminal_rows(void)
{
	struct winsize ws;

	return ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_row ? 24 : ws.ws_row;
}

static void count_modes(const struct live_model *lm, unsigned *modes)
{
	for (size_t i = 0; i < lm->nprocs; i++)
		if (!lm->procs[i].exited)
			modes[lm->procs[i].mode]++;
}

static void print_summary(const struct live_model *lm, const struct top_view *v, FILE *out)
{
	unsigned modes[LIVE_MODE_INJECTED + 1] = {0};

	count_modes(lm, modes);
	fprintf(out,
		"gpuspy top - %zu processes, CUDA: %u uprobes, %u bridge, %u injected; GPUs seen: "
		"%zu; events %llu, lost %llu; sort %s, by %s (q quit, s sort, g group)\n",
		lm->nprocs, modes[LIVE_MODE_UPROBES], modes[LIVE_MODE_BRIDGE],
		modes[LIVE_MODE_INJECTED], lm->ndevices, (unsigned long long)lm->events,
		(unsigned long long)live_model_lost(lm), v->sort ? v->sort : "gpu_busy_pct",
		group_by_name(v->group_by));
}

static int draw(struct top_state *st)
{
	struct top_view v = st->view;
	int err;

	if (st->interactive) {
		unsigned rows = terminal_rows();

		v.compact = true;
		/* summary, blank, header, rule lines: the rest are rows */
		if (!v.limit)
			v.limit = rows > 6 ? rows - 6 : 1;
		fputs("\033[H\033[2J", stdout);
		print_summary(&st->lm, &v, stdout);
		fputc('\n', stdout);
	} else if (v.format == TABLE_TEXT) {
		v.compact = true;
	}
	err = top_rows_print(&st->lm, &v, stdout);
	if (!err && !st->interactive && v.format == TABLE_TEXT)
		fputc('\n', stdout);
	fflush(stdout);
	return err;
}

static int on_tick(struct recorder *r, uint64_t now)
{
	struct top_state *st = r->live;
	int err = live_model_tick(&st->lm, now);

	/* the first tick, when the probes went live, is only the baseline of the rates */
	if (!err && st->ticks++)
		err = draw(st);
	else if (!err && !st->interactive)
		/* scripts wait for this line: what happens from now on is counted */
		fprintf(stderr, "gpuspy: watching %s, first values in %.1f s\n",
			r->opts.trace_all ? "the host" : "the processes",
			(double)r->opts.stats_interval_ns / 1e9);
	live_model_tick_done(&st->lm);
	if (err)
		return err;
	if (st->once && st->ticks > 1)
		return 1;
	return st->interactive ? read_keys(st) : 0;
}

int top_main(int argc, char **argv)
{
	struct recorder r = {.cmd = {.go_fd = -1, .exec_fd = -1}};
	struct top_state *st = calloc(1, sizeof(*st));
	struct live_opts lo;
	int ret;

	if (!st)
		return GS_EXIT_FAILURE;
	live_opts_defaults(&lo, DEFAULT_INTERVAL_NS, 2 * DEFAULT_INTERVAL_NS);
	st->view.group_by = GROUP_PROCESS;
	/* parse_args() returns -1 to go on; --help's 0, like a usage error, is an exit code:
	 * nothing may start after it */
	ret = parse_args(argc, argv, &lo, st);
	if (ret >= 0 || (ret = live_opts_check(&lo))) {
		live_opts_free(&lo);
		free(st);
		return ret;
	}
	/* an exited process shows for two refreshes, then goes */
	live_model_init(&st->lm, 2 * lo.interval_ns);
	st->interactive = !st->once && st->view.format == TABLE_TEXT && isatty(STDOUT_FILENO);
	r.live = st;
	r.on_tick = on_tick;
	ret = live_recorder_init(&r, &lo, &st->lm);
	if (!ret) {
		recorder_install_signal_handlers();
		if (st->interactive && isatty(STDIN_FILENO))
			tty_raw(st);
		ret = recorder_run_live(&r);
		tty_restore(st);
	}
	recorder_cleanup(&r);
	live_model_free(&st->lm);
	live_opts_free(&lo);
	free(st);
	return ret;
}
