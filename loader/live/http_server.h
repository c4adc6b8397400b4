/* SPDX-License-Identifier: MIT */
/*
 * The HTTP side of `gpuspy serve`: a Prometheus exporter's server on libmicrohttpd (MHD), run in a
 * thread of its own, so that a slow, stuck or hostile client can never stall the collector that
 * publishes the metrics.
 *
 * GET and HEAD of /metrics (the last published body; 503 with Retry-After before the first) and
 * of / (a page linking to it); other paths 404, other methods 405, request bodies refused. MHD
 * parses the requests, keeps connections alive and enforces the connection limits; memory is
 * bounded by max_clients connections of at most 16 KiB each (MHD's pool: request head, response
 * head) and the bodies still being sent: each response holds a reference to the body it started
 * with, freed when the last response using it is done.
 */
#ifndef GPUSPY_HTTP_SERVER_H
#define GPUSPY_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>

struct http_server;

struct http_server_config {
	/* "127.0.0.1:9478", "0.0.0.0:9478", "[::1]:9478", "[::]:9478", ":9478" (all addresses,
	 * IPv4 and IPv6), "localhost:9478"; port 0: any free port (http_listen.h) */
	const char *listen;
	/* connections served at once (0: 64); while that many are open, new ones wait in the
	 * kernel's accept queue */
	unsigned max_clients;
	/* connections one client address may hold (0: a quarter of max_clients, at least 1);
	 * beyond, its new ones are closed unanswered. Room is thus kept for other clients: the
	 * idle or trickling connections of one address cannot take every slot. */
	unsigned max_clients_per_ip;
	/* MHD's connection timeout: a connection with no byte received or sent for this long is
	 * closed, a response cut short with a reset (0: 10000; MHD counts whole seconds: rounded
	 * up). Before a request head is whole, head_timeout_ms comes first. */
	unsigned timeout_ms;
	/* a request head must be complete within this of the connection's start, or of the end
	 * of its previous response (0: 5000; at most timeout_ms). MHD's timeout cannot do this:
	 * every byte received restarts it, so a client sending a byte a second would never meet
	 * it. */
	unsigned head_timeout_ms;
};

struct http_server_stats {
	uint64_t requests;    /* request heads answered, whatever the status (MHD's own too) */
	uint64_t ok;	      /* 200 */
	uint64_t bad;	      /* errors but 404 and 503: 400, 405, 413 and MHD's 4xx/5xx */
	uint64_t not_found;   /* 404 */
	uint64_t unavailable; /* 503: /metrics before the first publish */
	uint64_t rejected;    /* connections closed unanswered over max_clients_per_ip */
	/* connections closed for want of a whole first request head within head_timeout_ms,
	 * and responses cut short by timeout_ms (with a reset); a keep-alive connection closed
	 * idle between requests is not counted */
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
/* Stops the thread, closes every connection (a response cut short with a reset), frees. NULL
 * is fine. */
void http_server_stop(struct http_server *s);

#endif /* GPUSPY_HTTP_SERVER_H */
