// SPDX-License-Identifier: MIT
/*
 * `gpuspy top`: a live view of who uses the GPUs and how, refreshed each interval: per process
 * (or container, or user) GPU busy time and kernels where the CUPTI bridge is active, CUDA
 * launches and API time from uprobes everywhere, GPU memory allocated through the CUDA API,
 * copy bytes, CPU use, and what its main thread waits on (live_waits.h). On a terminal it
 * redraws in place (keys: q quit, s next sort column, r reverse is not offered: numbers sort
 * descending); otherwise, and with --once, it prints snapshots for scripts.
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
#include "loader/live/live_waits.h"
#include "loader/live/top_cmd.h"
#include "loader/live/top_rows.h"
#include "loader/record/record_cmd.h"
#include "loader/record/recorder.h"
#include "loader/session/thread_now.h"

#define DEFAULT_INTERVAL_NS 1000000000ULL
/* The wait column sorts time by syscall and off-CPU spans: shorter ones count as CPU. 10 us
 * keeps a syscall-heavy host's ring buffer quiet (most calls are shorter) while any wait that
 * matters over a refresh is seen. */
#define WAIT_SPAN_NS 10000ULL

/* off: clang-format would join LIVE_USAGE_OPTS() to the line before it */
/* clang-format off */
static const char usage[] =
    "usage: gpuspy top [-p PID[,PID...]] [--once] [--format text|csv|json] [--sort KEY]\n"
    "                  [--group-by process|container|user] [-n N] [--all] [--interval DUR]\n"
    "                  [-d DUR] [--gpu-sample ON/PERIOD] [--no-cupti] [--no-inject]\n"
    "                  [--buffer-size MIB] [-v]\n"
    "\n"
    "A live view of the host's GPU users, refreshed every interval: per process (or\n"
    "container, or user) GPU busy % and kernels/s where gpuspy's CUPTI bridge is active,\n"
    "CUDA launches/s and API time from uprobes everywhere, GPU memory allocated through the\n"
    "CUDA API, host-to-device and device-to-host bytes/s, CPU %, and Wait: what its main\n"
    "thread (in a CUDA process, the one making most CUDA calls) spent most of the interval\n"
    "on, with its share: input (reads), io (disk), sync (a CUDA synchronisation), lock\n"
    "(futex), runq (runnable, no CPU free), other (sleeps, polls), or cpu (computing).\n"
    "Mode says how a process's GPU side is seen: bridge (started with it), injected (gpuspy\n"
    "loaded it at attach), uprobes (no GPU times).\n"
    "\n"
    "  -p, --pid PIDS        only these processes and their descendants (default: the host)\n"
    "      --once            print one snapshot after one interval and exit\n"
    "  -f, --format FMT      text (default), csv or json; without --once, one snapshot per\n"
    "                        interval (json: one array per line)\n"
    "  -s, --sort KEY        sort by a column's JSON key: gpu_busy_pct, kernels_per_s,\n"
    "                        launches_per_s, api_pct, gpu_mem_bytes, htod_bytes_per_s,\n"
    "                        dtoh_bytes_per_s, cpu_pct, wait, pid, user, container, name,\n"
    "                        ...\n"
    "                        (default: GPU busy, then launches, API time, CPU)\n"
    "      --group-by KIND   one row per process (default), container or user\n"
    "  -n, --limit N         at most N rows (default: what the terminal holds)\n"
    "      --all             also idle processes (no CPU, CUDA or GPU activity)\n"
    "      --interval DUR    refresh interval (default 1s)\n"
    "  -d, --duration DUR    stop after DUR\n"
    LIVE_USAGE_OPTS("")
    "\n"
    "keys (terminal): q quit, s sort by the next column, g cycle process/container/user\n"
    "\n"
    "examples:\n"
    "  sudo gpuspy top\n"
    "  sudo gpuspy top --group-by container --sort gpu_busy_pct\n"
    "  sudo gpuspy top --once --format json | jq '.[] | select(.mode != \"-\")'\n";
/* clang-format on */

enum { OPT_ONCE = LIVE_OPT_FIRST_OWN, OPT_FORMAT, OPT_SORT, OPT_GROUP_BY, OPT_ALL };

static const struct option long_opts[] = {
    LIVE_LONG_OPTS,
    {"once", no_argument, NULL, OPT_ONCE},
    {"format", required_argument, NULL, 'f'},
    {"sort", required_argument, NULL, 's'},
    {"group-by", required_argument, NULL, OPT_GROUP_BY},
    {"limit", required_argument, NULL, 'n'},
    {"all", no_argument, NULL, OPT_ALL},
    {0},
};

struct top_state {
	struct live_model lm;
	struct live_waits *waits;
	uint32_t *pids; /* the live processes at a tick, for the wait column */
	size_t pids_cap;
	struct top_view view;
	bool once, interactive;
	unsigned ticks;
	struct termios saved_tty;
	bool tty_saved;
	char sort_buf[32];
};

/* top's own options; the shared ones are live_cmd.c's */
static int parse_one(void *view, int c, const char *arg)
{
	struct top_state *st = view;
	uint64_t v;

	switch (c) {
	case OPT_ONCE:
		st->once = true;
		return LIVE_OPT_TAKEN;
	case 'f':
		if (!strcmp(arg, "text"))
			st->view.format = TABLE_TEXT;
		else if (!strcmp(arg, "csv"))
			st->view.format = TABLE_CSV;
		else if (!strcmp(arg, "json"))
			st->view.format = TABLE_JSON;
		else
			return gs_bad_value("--format", arg, "text, csv or json");
		return LIVE_OPT_TAKEN;
	case 's':
		if (!top_sort_key_valid(arg)) {
			gs_error("unknown sort key '%s' (see 'gpuspy top --help')", arg);
			return GS_EXIT_USAGE;
		}
		st->view.sort = arg;
		return LIVE_OPT_TAKEN;
	case OPT_GROUP_BY:
		st->view.group_by = group_by_parse(arg);
		if (st->view.group_by == GROUP_NONE)
			return gs_bad_value("--group-by", arg, "process, container or user");
		return LIVE_OPT_TAKEN;
	case 'n':
		if (gs_parse_u64(arg, 1, 1000000, &v))
			return gs_bad_value("--limit", arg, "a positive number");
		st->view.limit = (size_t)v;
		return LIVE_OPT_TAKEN;
	case OPT_ALL:
		st->view.all = true;
		return LIVE_OPT_TAKEN;
	default:
		return LIVE_OPT_NOT_MINE;
	}
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
	if (gpu_sample_is_sampled(&lm->sample))
		fprintf(out,
			"~GPU%%, ~Kern/s: estimated from kernel records taken %s (--gpu-sample)\n",
			lm->sample.label);
}

static int draw(struct top_state *st)
{
	struct top_view v = st->view;
	int err;

	if (st->interactive) {
		unsigned rows = terminal_rows();

		v.compact = true;
		/* summary (two lines when sampled), blank, header, rule lines: the rest are rows */
		if (!v.limit)
			v.limit = rows > 7 ? rows - 7 : 1;
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

static int read_now(void *session, uint32_t pid, uint32_t tid, struct thread_now *now)
{
	return thread_now_read(session, (pid_t)pid, (pid_t)tid, now);
}

/* The interval's waits of every live process's shown thread. 0 or -ENOMEM. */
static int close_waits(struct top_state *st, struct recorder *r, uint64_t now)
{
	size_t n = 0;

	if (st->lm.nprocs > st->pids_cap) {
		uint32_t *v = realloc(st->pids, st->lm.nprocs * sizeof(*v));

		if (!v)
			return -ENOMEM;
		st->pids = v;
		st->pids_cap = st->lm.nprocs;
	}
	for (size_t i = 0; i < st->lm.nprocs; i++)
		if (!st->lm.procs[i].exited)
			st->pids[n++] = st->lm.procs[i].pid;
	return live_waits_tick(st->waits, now, st->pids, n, read_now, r->session);
}

static int on_tick(struct recorder *r, uint64_t now)
{
	struct top_state *st = r->live;
	/* before the model's tick, which drops processes whose grace period ended */
	int err = close_waits(st, r, now) ?: live_model_tick(&st->lm, now);

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

/* The model, then the recording until q, --once's snapshot, -d or a signal. */
static int run_view(void *view, struct live_opts *lo)
{
	struct top_state *st = view;
	int ret;

	/* an exited process shows for two refreshes, then goes */
	live_model_init(&st->lm, 2 * lo->interval_ns);
	st->waits = live_waits_new();
	if (!st->waits) {
		gs_error("cannot start the live view: out of memory");
		return GS_EXIT_FAILURE;
	}
	st->lm.waits = st->waits;
	lo->span_threshold_ns = WAIT_SPAN_NS;
	st->interactive = !st->once && st->view.format == TABLE_TEXT && isatty(STDOUT_FILENO);
	/* before the terminal goes raw: a signal must not leave it so */
	recorder_install_signal_handlers();
	if (st->interactive && isatty(STDIN_FILENO))
		tty_raw(st);
	ret = live_cmd_record(lo, &st->lm, on_tick, st);
	tty_restore(st);
	live_model_free(&st->lm);
	live_waits_free(st->waits);
	free(st->pids);
	return ret;
}

/* no --grace: an exited process stays two intervals (run_view) */
static const struct live_cmd top_cmd = {
    .name = "top",
    .usage = usage,
    .short_opts = LIVE_SHORT_OPTS "f:s:n:",
    .long_opts = long_opts,
    .args_hint = ": use -p PID to narrow it",
    .interval_ns = DEFAULT_INTERVAL_NS,
    .parse_one = parse_one,
    .run_view = run_view,
};

int top_main(int argc, char **argv)
{
	struct top_state st = {.view.group_by = GROUP_PROCESS};

	return live_cmd_main(&top_cmd, argc, argv, &st);
}
