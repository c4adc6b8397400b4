// SPDX-License-Identifier: MIT
/*
 * loader/http_server.c under a stand-in for `gpuspy serve`'s collector, for tests/http.bats: the
 * main thread publishes a new body every 100 ms and prints `tick N`, so a test sees whether
 * collection went on while clients misbehaved; at SIGTERM/SIGINT it stops the server and prints
 * the server's statistics and the longest pause between two ticks.
 *
 * usage: http_driver [--listen ADDR] [--max-clients N] [--timeout-ms N] [--big N]
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "http_server.h"

#define TICK_NS	 100000000L
#define PAD_LINE 100

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
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

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
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
	    {"timeout-ms", required_argument, NULL, 't'},
	    {"big", required_argument, NULL, 'b'},
	    {},
	};
	struct http_server_config cfg = {.listen = "127.0.0.1:0"};
	struct http_server_stats st;
	struct http_server *server = NULL;
	struct sigaction sa = {.sa_handler = on_stop_signal};
	unsigned long long v, tick = 0;
	uint64_t last, max_gap = 0;
	struct timespec next;
	size_t big = 0, size, len;
	char err[256], *body = NULL;
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
		default:
			fprintf(stderr, "usage: http_driver [--listen ADDR] [--max-clients N] "
					"[--timeout-ms N] [--big N]\n");
			return 2;
		}
	}

	/* no SA_RESTART: the tick sleep must end at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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
	/* published before the address is printed: a test's first request sees a body */
	len = build_body(body, size, tick, big);
	if (http_server_publish(server, body, len)) {
		fprintf(stderr, "http_driver: cannot publish: out of memory\n");
		goto cleanup;
	}
	printf("listening on %s\n", http_server_address(server));

	clock_gettime(CLOCK_MONOTONIC, &next);
	last = now_ns();
	while (!stop_signal) {
		uint64_t now;

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
		now = now_ns();
		if (now - last > max_gap)
			max_gap = now - last;
		last = now;
		printf("tick %llu\n", tick);
	}

	http_server_get_stats(server, &st);
	http_server_stop(server);
	server = NULL;
	printf("collector ticks=%llu max_gap_ms=%llu\n", tick,
	       (unsigned long long)(max_gap / 1000000));
	printf("stats requests=%llu ok=%llu bad=%llu rejected=%llu timeouts=%llu not_found=%llu\n",
	       (unsigned long long)st.requests, (unsigned long long)st.ok,
	       (unsigned long long)st.bad, (unsigned long long)st.rejected,
	       (unsigned long long)st.timeouts, (unsigned long long)st.not_found);
	ret = 0;

cleanup:
	http_server_stop(server);
	free(body);
	return ret;
}
