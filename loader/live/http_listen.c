// SPDX-License-Identifier: MIT
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "loader/live/http_listen.h"

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* 1 to 5 digits, at most 65535: "09478" is a port, "+1" and "1e3" are not. */
static int parse_port(const char *p, uint16_t *port)
{
	size_t len = strlen(p);
	unsigned v = 0;

	if (!len || len > 5)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	if (v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int http_listen_split(const char *listen, char *host, size_t hostlen, uint16_t *port)
{
	const char *colon, *h = listen;
	size_t hlen;

	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		h = listen + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
		if (!hlen)
			return -EINVAL;
	} else {
		colon = strrchr(listen, ':');
		if (!colon)
			return -EINVAL;
		hlen = (size_t)(colon - listen);
		/* "::1:9478" is ambiguous: IPv6 addresses need their brackets */
		if (memchr(listen, ':', hlen))
			return -EINVAL;
	}
	if (hlen >= hostlen || parse_port(colon + 1, port))
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	return 0;
}

static int listen_on(const struct sockaddr *sa, socklen_t salen)
{
	int fd, one = 1, zero = 0, err;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a restarted exporter must not wait for the old connections' TIME_WAIT */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* [::] serves IPv4 as well, whatever net.ipv6.bindv6only says, as Go exporters do */
	if (sa->sa_family == AF_INET6 &&
	    IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr))
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, sa, salen) || listen(fd, SOMAXCONN)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static int listen_any(uint16_t port)
{
	struct sockaddr_in6 a6 = {
	    .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT, .sin6_port = htons(port)};
	struct sockaddr_in a4 = {
	    .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY), .sin_port = htons(port)};
	int fd = listen_on((struct sockaddr *)&a6, sizeof(a6));

	/* a kernel without IPv6 */
	if (fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL)
		fd = listen_on((struct sockaddr *)&a4, sizeof(a4));
	return fd;
}

/* "localhost" may be ::1 and 127.0.0.1: the first that binds wins, as clients try all. */
static int listen_host(const char *listen, const char *host, uint16_t port, char *err,
		       size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	char service[8];
	int fd, gai;

	snprintf(service, sizeof(service), "%u", port);
	gai = getaddrinfo(host, service, &hints, &res);
	if (gai) {
		fd = gai == EAI_SYSTEM ? -errno : gai == EAI_MEMORY ? -ENOMEM : -EADDRNOTAVAIL;
		set_err(err, errlen, "cannot listen on %s: %s", listen,
			gai == EAI_SYSTEM ? strerror(-fd) : gai_strerror(gai));
		return fd;
	}
	fd = -EADDRNOTAVAIL;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int ret = listen_on(ai->ai_addr, ai->ai_addrlen);

		if (ret >= 0) {
			fd = ret;
			break;
		}
		if (ai == res)
			fd = ret;
	}
	freeaddrinfo(res);
	if (fd < 0)
		set_err(err, errlen, "cannot listen on %s: %s", listen, strerror(-fd));
	return fd;
}

int http_listen_open(const char *listen, char *err, size_t errlen)
{
	char host[256];
	uint16_t port;
	int fd;

	if (!listen || http_listen_split(listen, host, sizeof(host), &port)) {
		set_err(err, errlen,
			"invalid listen address '%s': expected HOST:PORT, [IPV6]:PORT or :PORT",
			listen ? listen : "");
		return -EINVAL;
	}
	if (host[0])
		return listen_host(listen, host, port, err, errlen);
	fd = listen_any(port);
	if (fd < 0)
		set_err(err, errlen, "cannot listen on %s: %s", listen, strerror(-fd));
	return fd;
}
