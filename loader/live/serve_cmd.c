// SPDX-License-Identifier: MIT
/*
 * `gpuspy serve`: a Prometheus exporter. The live model is refreshed every interval and its
 * exposition published to the HTTP server (its own thread, http_server.h), so a scrape
 * answers at once with the last interval's values and no client, however slow or broken,
 * can hold up collection.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

enum { OPT_LISTEN = LIVE_OPT_FIRST_OWN, OPT_MAX_SERIES, OPT_MAX_CLIENTS };

static const char usage[] =
    "usage: gpuspy serve [--listen ADDR:PORT] [-p PID[,PID...]] [--interval DUR]\n"
    "                    [--grace DUR] [--max-series N] [--max-clients N] [-d DUR]\n"
    "                    [--no-cupti] [--no-inject] [--buffer-size MIB] [-v]\n"
    "\n"
    "A Prometheus exporter of the host's GPU use: GET /metrics answers in the text\n"
    "exposition format with counters and gauges per process (pid, comm, container, user),\n"
    "per container, per user and per GPU device: CUDA API calls, errors and time, kernel\n"
    "launches, GPU kernels and busy seconds (CUPTI bridge), GPU memory allocated through the\n"
    "CUDA API, copy bytes by direction, syscall time by class, off-CPU time, CPU time, and\n"
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
    "  -d, --duration DUR      stop after DUR (default: until SIGINT or SIGTERM)\n"
    "      --no-cupti          no GPU times: do not turn on CUPTI bridges\n"
    "      --no-inject         do not load the bridge into running CUDA processes\n"
    "      --buffer-size MIB   ring buffer, a power of two (default 16)\n"
    "  -v, --verbose           libbpf and attach messages\n"
    "  -h, --help              this help\n"
    "\n"
    "examples:\n"
    "  sudo gpuspy serve\n"
    "  sudo gpuspy serve --listen 0.0.0.0:9478 --max-series 50\n"
    "  curl -s localhost:9478/metrics | grep gpuspy_container_gpu_busy\n";

struct serve_state {
	struct live_model lm;
	struct serve_metrics sm;
	struct prom_buf buf;
	struct http_server *http;
	const char *listen;
	unsigned max_clients;
	size_t max_series;
};

static int parse_args(int argc, char **argv, struct live_opts *lo, struct serve_state *st)
{
	static const struct option long_opts[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"duration", required_argument, NULL, 'd'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"interval", required_argument, NULL, LIVE_OPT_INTERVAL},
	    {"grace", required_argument, NULL, LIVE_OPT_GRACE},
	    {"no-cupti", no_argument, NULL, LIVE_OPT_NO_CUPTI},
	    {"no-inject", no_argument, NULL, LIVE_OPT_NO_INJECT},
	    {"buffer-size", required_argument, NULL, LIVE_OPT_BUFFER_SIZE},
	    {"listen", required_argument, NULL, OPT_LISTEN},
	    {"max-series", required_argument, NULL, OPT_MAX_SERIES},
	    {"max-clients", required_argument, NULL, OPT_MAX_CLIENTS},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	uint64_t v;
	int c, ret;

	optind = 1;
	opterr = 0; /* gs_option_error() says it in one line */
	while ((c = getopt_long(argc, argv, ":p:d:vh", long_opts, NULL)) != -1) {
		ret = live_opts_parse_one(c, optarg, lo);
		if (ret >= 0)
			return ret;
		if (ret == -1)
			continue;
		switch (c) {
		case OPT_LISTEN:
			st->listen = optarg;
			break;
		case OPT_MAX_SERIES:
			if (gs_parse_u64(optarg, 1, 100000, &v)) {
				gs_error("invalid value '%s' for --max-series: expected a number "
					 "from 1 to 100000",
					 optarg);
				return GS_EXIT_USAGE;
			}
			st->max_series = (size_t)v;
			break;
		case OPT_MAX_CLIENTS:
			if (gs_parse_u64(optarg, 1, 10000, &v)) {
				gs_error("invalid value '%s' for --max-clients: expected a number "
					 "from 1 to 10000",
					 optarg);
				return GS_EXIT_USAGE;
			}
			st->max_clients = (unsigned)v;
			break;
		case 'h':
			fputs(usage, stdout);
			return GS_EXIT_OK;
		default:
			return gs_option_error("serve", c, argv);
		}
	}
	if (optind < argc) {
		gs_error("serve takes no arguments ('%s')", argv[optind]);
		return GS_EXIT_USAGE;
	}
	return -1;
}

/* Every connection is a descriptor: a limit the process cannot reach is a mistake to report
 * now, not an accept() failing under load later. */
static int check_max_clients(unsigned max_clients)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    max_clients <= rl.rlim_cur)
		return 0;
	gs_error("--max-clients %u is above the open-file limit of %llu (ulimit -n)", max_clients,
		 (unsigned long long)rl.rlim_cur);
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

int serve_main(int argc, char **argv)
{
	struct recorder r = {.cmd = {.go_fd = -1, .exec_fd = -1}};
	struct serve_state *st = calloc(1, sizeof(*st));
	struct live_opts lo;
	int ret;

	if (!st)
		return GS_EXIT_FAILURE;
	live_opts_defaults(&lo, DEFAULT_INTERVAL_NS, DEFAULT_GRACE_NS);
	st->listen = DEFAULT_LISTEN;
	st->max_series = DEFAULT_MAX_SERIES;
	st->max_clients = DEFAULT_MAX_CLIENTS;
	/* parse_args() returns -1 to go on; --help's 0, like a usage error, is an exit code:
	 * nothing may start after it */
	ret = parse_args(argc, argv, &lo, st);
	if (ret >= 0 || (ret = check_max_clients(st->max_clients)) ||
	    (ret = live_opts_check(&lo))) {
		live_opts_free(&lo);
		free(st);
		return ret;
	}
	live_model_init(&st->lm, lo.grace_ns);
	serve_metrics_init(&st->sm, st->max_series, (double)lo.interval_ns / 1e9,
			   (double)lo.grace_ns / 1e9);
	st->lm.on_leave = serve_metrics_on_leave;
	st->lm.leave_ctx = &st->sm;
	r.live = st;
	r.on_tick = on_tick;
	/* the port first: a taken port is a usage problem to report before any BPF work */
	ret = start_http(st);
	ret = ret ?: live_recorder_init(&r, &lo, &st->lm);
	if (!ret) {
		recorder_install_signal_handlers();
		ret = recorder_run_live(&r);
	}
	recorder_cleanup(&r);
	http_server_stop(st->http);
	prom_buf_free(&st->buf);
	live_model_free(&st->lm);
	live_opts_free(&lo);
	free(st);
	return ret;
}
