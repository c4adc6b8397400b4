/* SPDX-License-Identifier: MIT */
/*
 * The HTTP side of `gpuspy serve`: a Prometheus exporter's server in a thread of its own, so that
 * a slow, stuck or hostile client can never stall the collector that publishes the metrics.
 *
 * GET and HEAD of /metrics (the last published body) and / (a page linking to it); HTTP/1.0 and
 * 1.1 with keep-alive, no request bodies, no chunked encoding, no compression. Memory is bounded:
 * at most max_clients connections, each with an 8 KiB request buffer and a reference to the body
 * it is sending; a body is freed when the last response using it is done.
 */
#ifndef GPUSPY_HTTP_SERVER_H
#define GPUSPY_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>

struct http_server;

struct http_server_config {
	/* "127.0.0.1:9478", "0.0.0.0:9478", "[::1]:9478", "[::]:9478", ":9478" (all addresses,
	 * IPv4 and IPv6), "localhost:9478"; port 0: any free port */
	const char *listen;
	/* connections served at once; more are answered 503 and closed (0: 64) */
	unsigned max_clients;
	/* a connection that has not sent a whole request, or has not taken the whole response,
	 * within this is closed (0: 10000) */
	unsigned timeout_ms;
};

struct http_server_stats {
	uint64_t requests;  /* request heads answered, whatever the status (503s not included) */
	uint64_t ok;	    /* 200 */
	uint64_t bad;	    /* 400, 405, 413, 431 */
	uint64_t not_found; /* 404 */
	uint64_t rejected;  /* connections answered 503 over max_clients */
	/* connections closed by timeout_ms mid-request (one that never sent a byte too) or
	 * mid-response, with a reset; an idle keep-alive connection closed by it is not counted */
	uint64_t timeouts;
	unsigned clients; /* connections open now */
};

/* Binds, listens and starts the server thread. 0, or -errno with a one-line reason in err
 * ("cannot listen on 127.0.0.1:9478: Address already in use"); *out is NULL on failure. */
int http_server_start(const struct http_server_config *cfg, struct http_server **out, char *err,
		      size_t errlen);
/* The address actually bound, e.g. "127.0.0.1:41234" (for port 0) or "[::]:9478". */
const char *http_server_address(const struct http_server *s);
/* Publishes the /metrics body (copied). Responses being sent keep the body they started with,
 * so this never waits on a client. 0 or -ENOMEM. Called from one thread at a time. */
int http_server_publish(struct http_server *s, const char *body, size_t len);
void http_server_get_stats(struct http_server *s, struct http_server_stats *st);
/* Stops the thread, closes every connection, frees. NULL is fine. */
void http_server_stop(struct http_server *s);

#endif /* GPUSPY_HTTP_SERVER_H */
