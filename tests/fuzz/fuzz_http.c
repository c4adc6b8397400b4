// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for gpuspy's HTTP request path: any bytes a client sends must get responses
 * with a known status and a close, never a crash, leak, hang or undefined behaviour.
 *
 * libmicrohttpd parses the requests; what is gpuspy's own is what it does with them (the
 * method, target and body dispatch, the canned and published responses, the head deadlines,
 * the statistics fed by MHD's callbacks and log) and the --listen grammar. So the input goes
 * whole to a real server (loader/live/http_server.c, its thread, MHD's epoll loop) over loopback
 * TCP, followed by the end of the stream; the reply is read until the server closes. The input's
 * first line is also parsed as a --listen address (loader/live/http_listen.c).
 *
 * MHD is Debian's build, not instrumented: coverage guides the fuzzer through gpuspy's code.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "loader/live/http_listen.h"
#include "loader/live/http_server.h"

static struct http_server *server;
static struct sockaddr_in server_addr;

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_http: %s: %s\n", what, detail);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* a head deadline no input meets by accident: every input ends with the stream's end */
	struct http_server_config cfg = {
	    .listen = "127.0.0.1:0", .max_clients = 1024, .head_timeout_ms = 10000};
	static const char body[] = "# TYPE fuzz_up gauge\nfuzz_up 1\n";
	const char *port;
	char err[256];

	(void)argc;
	(void)argv;
	if (http_server_start(&cfg, &server, err, sizeof(err)))
		fail("cannot start the server", err);
	if (http_server_publish(server, body, sizeof(body) - 1))
		fail("cannot publish", "out of memory");
	port = strrchr(http_server_address(server), ':');
	server_addr.sin_family = AF_INET;
	server_addr.sin_port = htons((uint16_t)atoi(port + 1));
	server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return 0;
}

/* The first status line of the reply: gpuspy's own answers and MHD's for malformed heads.
 * Only the first: MHD 0.9.75 sends the head of some of its errors twice (tests/http.bats). */
static void check_status_line(const char *reply, size_t len)
{
	static const char *const known[] = {"200", "400", "404", "405", "413",
					    "414", "431", "500", "501", "505"};
	char code[4];

	if (len < 12 || memcmp(reply, "HTTP/1.1 ", 9))
		fail("not an HTTP/1.1 status line", reply);
	memcpy(code, reply + 9, 3);
	code[3] = '\0';
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(code, known[i]))
			return;
	fail("unexpected status", code);
}

static bool connected(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	socklen_t len = sizeof(int);
	int err = 0, n;

	do
		n = poll(&p, 1, 10000);
	while (n < 0 && errno == EINTR);
	return n == 1 && !getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) && !err;
}

static void exchange(const uint8_t *data, size_t size)
{
	struct timeval limit = {.tv_sec = 10};
	struct linger reset = {.l_onoff = 1, .l_linger = 0};
	char reply[4096], rest[4096];
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		fail("socket", strerror(errno));
	/* a server that neither answers nor closes after the stream's end is a bug (a hang) */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
	/* no TIME_WAIT left behind by millions of connections */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
	/* libFuzzer's timer signal interrupts calls: a connect goes on in the background */
	if (connect(fd, (struct sockaddr *)&server_addr, sizeof(server_addr)) && errno != EINTR)
		fail("connect", strerror(errno));
	if (!connected(fd))
		fail("connect", "refused or timed out");
	/* the server may answer and close before it has taken everything: that is fine */
	for (size_t off = 0; off < size; off += (size_t)n) {
		n = send(fd, data + off, size - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n <= 0)
			break;
	}
	shutdown(fd, SHUT_WR);
	/* the start of the reply is kept, the rest read until the close */
	for (;;) {
		bool keep = got < sizeof(reply) - 1;

		n = recv(fd, keep ? reply + got : rest,
			 keep ? sizeof(reply) - 1 - got : sizeof(rest), 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("no close after the end of the request stream", strerror(errno));
		if (keep)
			got += (size_t)n;
	}
	close(fd);
	reply[got] = '\0';
	if (got)
		check_status_line(reply, got);
}

/* What the grammar accepts must come out the same when put back together. */
static void check_listen(const uint8_t *data, size_t size)
{
	char in[300], host[256], again[300], host2[256];
	uint16_t port, port2;
	size_t len = 0;

	while (len < size && len < sizeof(in) - 1 && data[len] && data[len] != '\n')
		len++;
	memcpy(in, data, len);
	in[len] = '\0';
	if (http_listen_split(in, host, sizeof(host), &port))
		return;
	if (strchr(host, ':') || host[0] == '[')
		snprintf(again, sizeof(again), "[%s]:%u", host, port);
	else
		snprintf(again, sizeof(again), "%s:%u", host, port);
	if (http_listen_split(again, host2, sizeof(host2), &port2) || strcmp(host, host2) ||
	    port != port2)
		fail("listen address not stable", in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_server_stats st;

	check_listen(data, size);
	exchange(data, size);
	http_server_get_stats(server, &st);
	/* every answer is counted once, under one outcome; a client count gone below zero */
	if (st.requests != st.ok + st.bad + st.not_found + st.unavailable || st.clients > 1024)
		fail("statistics", "inconsistent");
	return 0;
}
