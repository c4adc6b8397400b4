// SPDX-License-Identifier: MIT
/*
 * loader/live/http_server.c under a stand-in for `gpuspy serve`'s collector, for tests/http.bats:
 * the main thread publishes a new body every 100 ms and prints `tick N`, so a test sees whether
 * collection went on while clients misbehaved; at SIGTERM/SIGINT it stops the server and prints
 * the server's statistics. With --wait-usr1 nothing is published before SIGUSR1 (`tick 0`
 * then), so a test can scrape a server that has no body yet.
 *
 * usage: http_driver [--listen ADDR] [--max-clients N] [--per-ip N] [--timeout-ms N]
 *                    [--head-timeout-ms N] [--big N] [--wait-usr1]
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "loader/live/http_server.h"

#define TICK_NS	 100000000L
#define PAD_LINE 100

static volatile sig_atomic_t stop_signal, go_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static void on_go_signal(int sig)
{
	go_signal = sig;
}

static int parse_num(const char *arg, const char *opt, unsigned long long max,
		     unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || *out > max) {
		fprintf(stderr, "http_driver: invalid value '%s' for %s\n", arg, opt);
		return -1;
	}
	return 0;
}

/* The exposition for a tick, padded with comment lines to exactly `big` bytes when it is set
 * (so that HEAD and GET of the same body can be compared across ticks). */
static size_t build_body(char *buf, size_t size, unsigned long long tick, size_t big)
{
	size_t len, rem;

	len = (size_t)snprintf(buf, size,
			       "# HELP driver_ticks Ticks of the http_driver collector loop.\n"
			       "# TYPE driver_ticks counter\n"
			       "driver_ticks %llu\n",
			       tick);
	/* "# xxx\n" lines; none shorter than "# \n", so the last two share what is left */
	for (rem = big > len ? big - len : 0; rem >= 3;) {
		size_t n = rem > PAD_LINE ? PAD_LINE : rem;

		if (rem - n > 0 && rem - n < 3)
			n -= 3;
		buf[len] = '#';
		buf[len + 1] = ' ';
		memset(buf + len + 2, 'x', n - 3);
		buf[len + n - 1] = '\n';
		len += n;
		rem -= n;
	}
	return len;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"listen", required_argument, NULL, 'l'},
	    {"max-clients", required_argument, NULL, 'm'},
	    {"per-ip", required_argument, NULL, 'i'},
	    {"timeout-ms", required_argument, NULL, 't'},
	    {"head-timeout-ms", required_argument, NULL, 'H'},
	    {"big", required_argument, NULL, 'b'},
	    {"wait-usr1", no_argument, NULL, 'w'},
	    {},
	};
	struct http_server_config cfg = {.listen = "127.0.0.1:0"};
	struct http_server_stats st;
	struct http_server *server = NULL;
	struct sigaction sa = {.sa_handler = on_stop_signal}, go = {.sa_handler = on_go_signal};
	unsigned long long v, tick = 0;
	struct timespec next;
	size_t big = 0, size, len;
	char err[256], *body = NULL;
	bool wait_usr1 = false;
	int opt, ret = 1;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			cfg.listen = optarg;
			break;
		case 'm':
			if (parse_num(optarg, "--max-clients", 1000000, &v))
				return 2;
			cfg.max_clients = (unsigned)v;
			break;
		case 'i':
			if (parse_num(optarg, "--per-ip", 1000000, &v))
				return 2;
			cfg.max_clients_per_ip = (unsigned)v;
			break;
		case 'H':
			if (parse_num(optarg, "--head-timeout-ms", 3600000, &v))
				return 2;
			cfg.head_timeout_ms = (unsigned)v;
			break;
		case 't':
			if (parse_num(optarg, "--timeout-ms", 3600000, &v))
				return 2;
			cfg.timeout_ms = (unsigned)v;
			break;
		case 'b':
			if (parse_num(optarg, "--big", 1ULL << 30, &v))
				return 2;
			big = (size_t)v;
			break;
		case 'w':
			wait_usr1 = true;
			break;
		default:
			fprintf(stderr, "usage: http_driver [--listen ADDR] [--max-clients N] "
					"[--per-ip N] [--timeout-ms N] [--head-timeout-ms N] "
					"[--big N] [--wait-usr1]\n");
			return 2;
		}
	}

	/* no SA_RESTART: the tick sleep must end at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&go.sa_mask);
	sigaction(SIGUSR1, &go, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	size = big + 256;
	body = malloc(size);
	if (!body) {
		fprintf(stderr, "http_driver: out of memory\n");
		goto cleanup;
	}
	if (http_server_start(&cfg, &server, err, sizeof(err))) {
		fprintf(stderr, "http_driver: %s\n", err);
		goto cleanup;
	}
	if (wait_usr1) {
		printf("listening on %s\n", http_server_address(server));
		while (!stop_signal && !go_signal)
			pause();
	}
	/* without --wait-usr1, published before the address is printed: a test's first request
	 * sees a body */
	len = build_body(body, size, tick, big);
	if (http_server_publish(server, body, len)) {
		fprintf(stderr, "http_driver: cannot publish: out of memory\n");
		goto cleanup;
	}
	if (wait_usr1)
		printf("tick 0\n");
	else
		printf("listening on %s\n", http_server_address(server));

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop_signal) {
		next.tv_nsec += TICK_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		/* absolute: a late tick does not push the later ones back */
		while (!stop_signal &&
		       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		if (stop_signal)
			break;
		len = build_body(body, size, ++tick, big);
		if (http_server_publish(server, body, len)) {
			fprintf(stderr, "http_driver: cannot publish: out of memory\n");
			goto cleanup;
		}
		printf("tick %llu\n", tick);
	}

	http_server_get_stats(server, &st);
	http_server_stop(server);
	server = NULL;
	printf("collector ticks=%llu\n", tick);
	printf("stats requests=%llu ok=%llu bad=%llu rejected=%llu timeouts=%llu not_found=%llu "
	       "unavailable=%llu\n",
	       (unsigned long long)st.requests, (unsigned long long)st.ok,
	       (unsigned long long)st.bad, (unsigned long long)st.rejected,
	       (unsigned long long)st.timeouts, (unsigned long long)st.not_found,
	       (unsigned long long)st.unavailable);
	ret = 0;

cleanup:
	http_server_stop(server);
	free(body);
	return ret;
}
