/* SPDX-License-Identifier: MIT */
/*
 * `gpuspy serve --listen`: gpuspy's own address grammar and the listening socket made from it,
 * which the HTTP server hands to libmicrohttpd. Binding here, not in MHD, keeps the grammar
 * ("[::1]:9478", ":9478" for IPv4 and IPv6, "localhost:0") and the one-line errors
 * ("cannot listen on 127.0.0.1:9478: Address already in use") that MHD does not give.
 */
#ifndef GPUSPY_HTTP_LISTEN_H
#define GPUSPY_HTTP_LISTEN_H

#include <stddef.h>
#include <stdint.h>

/* "host:port", "[v6]:port" or ":port" into its parts; host is "" for every address. 0 or
 * -EINVAL ("::1:9478" is refused: an IPv6 address needs its brackets). */
int http_listen_split(const char *listen, char *host, size_t hostlen, uint16_t *port);
/* A bound, listening, non-blocking socket, or -errno with a one-line reason in err. A name
 * ("localhost") is resolved and its first address that binds is taken; ":port" listens on
 * [::] with IPv4 too, whatever net.ipv6.bindv6only says, or on 0.0.0.0 without IPv6. */
int http_listen_open(const char *listen, char *err, size_t errlen);

#endif /* GPUSPY_HTTP_LISTEN_H */
