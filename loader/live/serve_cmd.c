// SPDX-License-Identifier: MIT
/*
 * `gpuspy serve`: a Prometheus exporter. The live model is refreshed every interval and its
 * exposition published to the HTTP server (its own thread, http_server.h), so a scrape
 * answers at once with the last interval's values and no client, however slow or broken,
 * can hold up collection.
 */
#include <getopt.h>
#include <stdio.h>
#include <sys/resource.h>
#include "lib/exit_codes.h"
#include "lib/messages.h"
#include "lib/value_parse.h"
#include "loader/live/http_server.h"
#include "loader/live/live_cmd.h"
#include "loader/live/live_model.h"
#include "loader/live/prom_text.h"
#include "loader/live/serve_cmd.h"
#include "loader/live/serve_metrics.h"
#include "loader/record/recorder.h"

#define DEFAULT_LISTEN	    "127.0.0.1:9478"
#define DEFAULT_INTERVAL_NS 1000000000ULL
#define DEFAULT_GRACE_NS    60000000000ULL
#define DEFAULT_MAX_SERIES  100
#define DEFAULT_MAX_CLIENTS 64

/* off: clang-format would join LIVE_USAGE_OPTS() to the line before it */
/* clang-format off */
static const char usage[] =
    "usage: gpuspy serve [--listen ADDR:PORT] [-p PID[,PID...]] [--interval DUR]\n"
    "                    [--grace DUR] [--max-series N] [--max-clients N] [-d DUR]\n"
    "                    [--syscall-time] [--gpu-sample ON/PERIOD] [--no-cupti]\n"
    "                    [--no-inject] [--buffer-size MIB] [-v]\n"
    "\n"
    "A Prometheus exporter of the host's GPU use: GET /metrics answers in the text\n"
    "exposition format with counters and gauges per process (pid, comm, container, user),\n"
    "per container, per user and per GPU device: CUDA API calls, errors and time, kernel\n"
    "launches, GPU kernels and busy seconds (CUPTI bridge), GPU memory allocated through the\n"
    "CUDA API, copy bytes by direction, syscalls by class, off-CPU time, CPU time, and\n"
    "gpuspy's own events and losses. Metric names: README, 'gpuspy serve'.\n"
    "\n"
    "      --listen ADDR:PORT  where to listen (default " DEFAULT_LISTEN "; 0.0.0.0:PORT or\n"
    "                          [::]:PORT for every address)\n"
    "  -p, --pid PIDS          only these processes and their descendants (default: the host)\n"
    "      --interval DUR      how often the values are refreshed (default 1s)\n"
    "      --grace DUR         how long an exited process's series outlive it (default 60s),\n"
    "                          so a short job is still seen by the next scrapes\n"
    "      --max-series N      processes with series of their own (default 100; as many\n"
    "                          containers and users); the rest count under pid=\"other\"\n"
    "      --max-clients N     HTTP connections at once (default 64, at most the open-file\n"
    "                          limit); one client address may hold a quarter of them\n"
    "      --syscall-time      time every syscall too (syscall_seconds_total): exact, at\n"
    "                          about three times the cost of counting them\n"
    "  -d, --duration DUR      stop after DUR (default: until SIGINT or SIGTERM)\n"
    LIVE_USAGE_OPTS("  ")
    "\n"
    "examples:\n"
    "  sudo gpuspy serve\n"
    "  sudo gpuspy serve --listen 0.0.0.0:9478 --max-series 50\n"
    "  curl -s localhost:9478/metrics | grep gpuspy_container_gpu_busy\n";
/* clang-format on */

enum { OPT_LISTEN = LIVE_OPT_FIRST_OWN, OPT_MAX_SERIES, OPT_MAX_CLIENTS, OPT_SYSCALL_TIME };

static const struct option long_opts[] = {
    LIVE_LONG_OPTS,
    {"grace", required_argument, NULL, LIVE_OPT_GRACE},
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"max-series", required_argument, NULL, OPT_MAX_SERIES},
    {"max-clients", required_argument, NULL, OPT_MAX_CLIENTS},
    {"syscall-time", no_argument, NULL, OPT_SYSCALL_TIME},
    {0},
};

struct serve_state {
	struct live_model lm;
	struct serve_metrics sm;
	struct prom_buf buf;
	struct http_server *http;
	const char *listen;
	unsigned max_clients;
	size_t max_series;
	bool syscall_time; /* --syscall-time */
};

/* serve's own options; the shared ones are live_cmd.c's */
static int parse_one(void *view, int c, const char *arg)
{
	struct serve_state *st = view;
	uint64_t v;

	switch (c) {
	case OPT_MAX_SERIES:
		if (gs_parse_u64(arg, 1, 100000, &v))
			return gs_bad_value("--max-series", arg, "a number from 1 to 100000");
		st->max_series = (size_t)v;
		return LIVE_OPT_TAKEN;
	case OPT_MAX_CLIENTS:
		if (gs_parse_u64(arg, 1, 10000, &v))
			return gs_bad_value("--max-clients", arg, "a number from 1 to 10000");
		st->max_clients = (unsigned)v;
		return LIVE_OPT_TAKEN;
	case OPT_LISTEN:
		st->listen = arg;
		return LIVE_OPT_TAKEN;
	case OPT_SYSCALL_TIME:
		st->syscall_time = true;
		return LIVE_OPT_TAKEN;
	default:
		return LIVE_OPT_NOT_MINE;
	}
}

/* Every connection is a descriptor: a limit the process cannot reach is a mistake to report
 * now, not an accept() failing under load later. */
static int check_max_clients(const void *view)
{
	const struct serve_state *st = view;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    st->max_clients <= rl.rlim_cur)
		return 0;
	gs_error("--max-clients %u is above the open-file limit of %llu (ulimit -n)",
		 st->max_clients, (unsigned long long)rl.rlim_cur);
	return GS_EXIT_USAGE;
}

static int on_tick(struct recorder *r, uint64_t now)
{
	struct serve_state *st = r->live;
	struct http_server_stats hs;
	int err = live_model_tick(&st->lm, now);

	http_server_get_stats(st->http, &hs);
	st->sm.http_requests = hs.ok;
	st->sm.http_bad = hs.bad + hs.not_found;
	st->sm.http_rejected = hs.rejected;
	st->sm.http_timeouts = hs.timeouts;
	err = err ?: serve_metrics_build(&st->sm, &st->lm, &st->buf);
	err = err ?: http_server_publish(st->http, st->buf.data, st->buf.len);
	live_model_tick_done(&st->lm);
	/* the first exposition is out: from here on, what happens is counted */
	if (!err && st->sm.collections == 1)
		fprintf(stderr, "gpuspy: collecting from %s\n",
			r->opts.trace_all ? "the host" : "the processes");
	return err;
}

static int start_http(struct serve_state *st)
{
	struct http_server_config cfg = {.listen = st->listen, .max_clients = st->max_clients};
	char err[256];

	if (http_server_start(&cfg, &st->http, err, sizeof(err))) {
		gs_error("%s", err);
		return GS_EXIT_FAILURE;
	}
	/* scripts and service managers wait for this line */
	fprintf(stderr, "gpuspy: serving metrics on http://%s/metrics\n",
		http_server_address(st->http));
	return 0;
}

/* The model with its exporter's bookkeeping, the HTTP server, then the recording. */
static int run_view(void *view, struct live_opts *lo)
{
	struct serve_state *st = view;
	int ret;

	live_model_init(&st->lm, lo->grace_ns);
	serve_metrics_init(&st->sm, st->max_series, (double)lo->interval_ns / 1e9,
			   (double)lo->grace_ns / 1e9);
	/* counting syscalls costs about as much as the empty tracepoint programs; timing them as
	 * well, about three times that (docs/BENCHMARKS.md): time only when asked */
	lo->syscall_counts = !st->syscall_time;
	st->sm.no_syscall_time = !st->syscall_time;
	st->lm.on_leave = serve_metrics_on_leave;
	st->lm.leave_ctx = &st->sm;
	/* the port first: a taken port is a usage problem to report before any BPF work */
	ret = start_http(st);
	ret = ret ?: live_cmd_record(lo, &st->lm, on_tick, st);
	http_server_stop(st->http);
	prom_buf_free(&st->buf);
	serve_metrics_free(&st->sm);
	live_model_free(&st->lm);
	return ret;
}

static const struct live_cmd serve_cmd = {
    .name = "serve",
    .usage = usage,
    .short_opts = LIVE_SHORT_OPTS,
    .long_opts = long_opts,
    .args_hint = "",
    .interval_ns = DEFAULT_INTERVAL_NS,
    .grace_ns = DEFAULT_GRACE_NS,
    .parse_one = parse_one,
    .check = check_max_clients,
    .run_view = run_view,
};

int serve_main(int argc, char **argv)
{
	struct serve_state st = {
	    .listen = DEFAULT_LISTEN,
	    .max_series = DEFAULT_MAX_SERIES,
	    .max_clients = DEFAULT_MAX_CLIENTS,
	};

	return live_cmd_main(&serve_cmd, argc, argv, &st);
}
