// SPDX-License-Identifier: MIT
/*
 * libmicrohttpd (MHD) does HTTP: parsing, keep-alive, pipelining, sending, the connection limits
 * and the idle timeout, in a thread of its own polling every connection (poll(), level-
 * triggered: MHD's epoll mode can miss a client's end of stream that came with its request, and
 * keep the connection until a timeout). gpuspy decides what each request gets, holds the
 * published body, counts the outcomes, and adds the one limit MHD lacks: a whole request head
 * within head_timeout_ms. A second thread of ours sleeps until the earliest such deadline and
 * shuts the late connection down; MHD's thread sees the end of the stream and closes it.
 *
 * One mutex guards the connections awaiting a head, the published body and the statistics.
 * Holding it while shutting a connection down is what keeps its descriptor valid: MHD tells
 * on_connection() of a close, which takes the mutex, before it closes the descriptor.
 */
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include "loader/live/http_listen.h"
#include "loader/live/http_server.h"

#define DEFAULT_MAX_CLIENTS	64
#define DEFAULT_TIMEOUT_MS	10000
#define DEFAULT_HEAD_TIMEOUT_MS 5000
/* per connection, MHD's pool for the request head and the response head: a head larger than
 * about half of it is answered 414 or 431 */
#define CONNECTION_MEMORY (16 * 1024)
#define ADDRESS_MAX	  (INET6_ADDRSTRLEN + 8)

#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define TEXT_TYPE    "text/plain; charset=utf-8"
#define HTML_TYPE    "text/html; charset=utf-8"

/* What MHD tells only through its log: a connection refused over a limit, and an error
 * response it sent itself (a malformed request never reaches gpuspy's handler). Both texts are
 * the same from 0.9.75 to 1.0.1; tests/http.bats checks the counts they feed. */
#define MHD_LOG_REFUSED	 "Server reached connection limit"
#define MHD_LOG_ANSWERED "Error processing request (HTTP response code is %u"

static const char index_page[] =
    "<html><head><title>gpuspy</title></head>\n"
    "<body><h1>gpuspy</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

/* The fixed responses, made once and queued on any number of connections (MHD counts their
 * references). */
enum canned { R_INDEX, R_NOT_READY, R_BAD, R_NOT_FOUND, R_NOT_ALLOWED, R_TOO_LARGE, R_COUNT };

static const struct {
	const char *type, *body, *header, *value;
} canned_def[R_COUNT] = {
    [R_INDEX] = {HTML_TYPE, index_page, NULL, NULL},
    /* the collector has not published yet: Prometheus marks the scrape failed, not empty */
    [R_NOT_READY] = {TEXT_TYPE, "no metrics collected yet\n", MHD_HTTP_HEADER_RETRY_AFTER, "1"},
    [R_BAD] = {TEXT_TYPE, "bad request\n", NULL, NULL},
    [R_NOT_FOUND] = {TEXT_TYPE, "not found\n", NULL, NULL},
    [R_NOT_ALLOWED] = {TEXT_TYPE, "method not allowed\n", MHD_HTTP_HEADER_ALLOW, "GET, HEAD"},
    [R_TOO_LARGE] = {TEXT_TYPE, "request bodies are not accepted\n", NULL, NULL},
};

enum target { TARGET_OTHER, TARGET_INDEX, TARGET_METRICS };

/* MHD's socket context of a connection: on the server's `waiting` list, ordered by deadline
 * since every deadline is now + head_timeout_ms, while a request head is awaited. */
struct conn {
	struct conn *prev, *next;
	uint64_t deadline_ms;
	int fd;
	bool served; /* a request was answered on it */
};

struct http_server {
	struct MHD_Daemon *mhd;
	struct MHD_Response *canned[R_COUNT]; /* made before MHD starts, then only read */
	unsigned head_timeout_ms;
	bool thread_started;
	pthread_t deadline_thread;
	char address[ADDRESS_MAX];
	pthread_mutex_t lock; /* guards what follows and the conns on `waiting` */
	pthread_cond_t wake;  /* a connection started waiting, or stopping */
	bool stopping;
	struct conn waiting;
	struct MHD_Response *metrics;
	struct http_server_stats stats;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void count_status(struct http_server_stats *st, unsigned status)
{
	st->requests++;
	if (status == MHD_HTTP_OK)
		st->ok++;
	else if (status == MHD_HTTP_NOT_FOUND)
		st->not_found++;
	else if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		st->unavailable++;
	else
		st->bad++;
}

/* ---- head deadlines, under s->lock ---- */

static void conn_unwait(struct conn *c)
{
	if (!c->next)
		return;
	c->prev->next = c->next;
	c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

/* Deadlines are all now + head_timeout_ms: appended, the list stays in their order. */
static void conn_wait(struct http_server *s, struct conn *c)
{
	conn_unwait(c);
	c->deadline_ms = now_ms() + s->head_timeout_ms;
	c->prev = s->waiting.prev;
	c->next = &s->waiting;
	s->waiting.prev->next = c;
	s->waiting.prev = c;
	if (c->prev == &s->waiting)
		pthread_cond_signal(&s->wake);
}

static void *deadline_main(void *arg)
{
	struct http_server *s = arg;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		struct conn *c = s->waiting.next;
		struct timespec until;

		if (c == &s->waiting) {
			pthread_cond_wait(&s->wake, &s->lock);
			continue;
		}
		if (c->deadline_ms > now_ms()) {
			until.tv_sec = (time_t)(c->deadline_ms / 1000);
			until.tv_nsec = (long)(c->deadline_ms % 1000) * 1000000;
			pthread_cond_timedwait(&s->wake, &s->lock, &until);
			continue;
		}
		conn_unwait(c);
		/* a kept-alive connection idle between requests is not a timeout */
		if (!c->served)
			s->stats.timeouts++;
		shutdown(c->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* ---- MHD's callbacks, all in MHD's thread ---- */

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	struct conn *c = *socket_context;
	const union MHD_ConnectionInfo *ci;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		/* without memory, the connection has MHD's idle timeout only */
		c = ci ? calloc(1, sizeof(*c)) : NULL;
		if (c)
			c->fd = ci->connect_fd;
		*socket_context = c;
	}
	pthread_mutex_lock(&s->lock);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		if (c)
			conn_wait(s, c);
		s->stats.clients++;
	} else {
		if (c)
			conn_unwait(c);
		s->stats.clients--;
	}
	pthread_mutex_unlock(&s->lock);
	if (code != MHD_CONNECTION_NOTIFY_STARTED) {
		free(c);
		*socket_context = NULL;
	}
}

/* A request is over: its response sent, or cut short. */
static void on_completed(void *cls, struct MHD_Connection *mc, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	struct conn *c = conn_of(mc);
	struct linger reset = {.l_onoff = 1, .l_linger = 0};

	(void)req_cls;
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
		pthread_mutex_lock(&s->lock);
		if (c) {
			c->served = true;
			conn_wait(s, c); /* for the next request on a kept-alive connection */
		}
		pthread_mutex_unlock(&s->lock);
		return;
	}
	/* MHD closes the socket next. A plain close would leave the unsent response behind, its
	 * FIN stuck behind a window the client keeps shut, retried for minutes: a reset frees
	 * the kernel's buffer now and tells the client at once. */
	if (c)
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
	if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED) {
		pthread_mutex_lock(&s->lock);
		s->stats.timeouts++;
		pthread_mutex_unlock(&s->lock);
	}
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http_server *s = cls;
	va_list aq;
	unsigned status;

	/* anything else MHD says is per-connection chatter a server log would drown in */
	if (!strncmp(fmt, MHD_LOG_REFUSED, strlen(MHD_LOG_REFUSED))) {
		pthread_mutex_lock(&s->lock);
		s->stats.rejected++;
		pthread_mutex_unlock(&s->lock);
	} else if (!strncmp(fmt, MHD_LOG_ANSWERED, strlen(MHD_LOG_ANSWERED))) {
		va_copy(aq, ap);
		status = va_arg(aq, unsigned);
		va_end(aq);
		pthread_mutex_lock(&s->lock);
		count_status(&s->stats, status);
		pthread_mutex_unlock(&s->lock);
	}
}

/* ---- what a request gets ---- */

/* The path of an origin-form target ("/metrics"; MHD has cut the query off) or of an
 * absolute-form one ("http://host:9478/metrics"), which servers must accept. */
static enum target target_of(const char *url)
{
	size_t len;

	if (!strncasecmp(url, "http://", 7) || !strncasecmp(url, "https://", 8)) {
		url = strchr(url + (url[4] == ':' ? 7 : 8), '/');
		if (!url)
			return TARGET_INDEX;
	} else if (url[0] != '/') {
		return TARGET_OTHER;
	}
	len = strcspn(url, "?#");
	if (len == 8 && !memcmp(url, "/metrics", 8))
		return TARGET_METRICS;
	return len == 1 ? TARGET_INDEX : TARGET_OTHER;
}

static bool is_get_or_head(const char *method)
{
	return !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
}

/* A request with a body is answered as soon as its head is in, so that MHD closes the
 * connection instead of reading a body nobody wants (0: none). MHD has already refused a
 * Content-Length that is not a number. */
static int body_status(struct MHD_Connection *mc, const char *method)
{
	const char *len =
	    MHD_lookup_connection_value(mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *te =
	    MHD_lookup_connection_value(mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);

	if (!te && (!len || strspn(len, "0") == strlen(len)))
		return 0;
	if (!is_get_or_head(method))
		return MHD_HTTP_METHOD_NOT_ALLOWED;
	return te ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_CONTENT_TOO_LARGE;
}

static struct MHD_Response *canned_for(struct http_server *s, unsigned status)
{
	switch (status) {
	case MHD_HTTP_NOT_FOUND:
		return s->canned[R_NOT_FOUND];
	case MHD_HTTP_METHOD_NOT_ALLOWED:
		return s->canned[R_NOT_ALLOWED];
	case MHD_HTTP_CONTENT_TOO_LARGE:
		return s->canned[R_TOO_LARGE];
	default:
		return s->canned[R_BAD];
	}
}

/* Under the lock, so that the publisher cannot destroy the body between the load and the
 * reference MHD_queue_response takes; that reference is all the lock covers, no I/O. */
static enum MHD_Result answer(struct http_server *s, struct MHD_Connection *mc, unsigned status,
			      enum target target)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	pthread_mutex_lock(&s->lock);
	if (status == MHD_HTTP_OK && target == TARGET_METRICS) {
		r = s->metrics;
		if (!r) {
			status = MHD_HTTP_SERVICE_UNAVAILABLE;
			r = s->canned[R_NOT_READY];
		}
	} else if (status == MHD_HTTP_OK) {
		r = s->canned[R_INDEX];
	} else {
		r = canned_for(s, status);
	}
	ret = MHD_queue_response(mc, status, r);
	if (ret == MHD_YES)
		count_status(&s->stats, status);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* MHD calls this once the head is in, then once per piece of body, then once at its end. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	static int head_seen;
	struct http_server *s = cls;
	struct conn *c;
	enum target target;
	int status;

	(void)version;
	(void)upload_data;
	if (!*req_cls) {
		*req_cls = &head_seen;
		c = conn_of(mc);
		pthread_mutex_lock(&s->lock);
		if (c)
			conn_unwait(c);
		pthread_mutex_unlock(&s->lock);
		status = body_status(mc, method);
		/* otherwise answered at the last call: a response queued at the first one makes
		 * MHD close the connection, keep-alive or not */
		return status ? answer(s, mc, (unsigned)status, TARGET_OTHER) : MHD_YES;
	}
	if (*upload_data_size) {
		/* cannot happen (a body is answered at once), but MHD must see it consumed */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!is_get_or_head(method))
		return answer(s, mc, MHD_HTTP_METHOD_NOT_ALLOWED, TARGET_OTHER);
	target = target_of(url);
	return answer(s, mc, target == TARGET_OTHER ? MHD_HTTP_NOT_FOUND : MHD_HTTP_OK, target);
}

/* ---- setup ---- */

static int make_canned(struct http_server *s)
{
	for (int i = 0; i < R_COUNT; i++) {
		struct MHD_Response *r = MHD_create_response_from_buffer(
		    strlen(canned_def[i].body), (void *)canned_def[i].body, MHD_RESPMEM_PERSISTENT);

		if (!r)
			return -ENOMEM;
		s->canned[i] = r;
		if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, canned_def[i].type) !=
			MHD_YES ||
		    (canned_def[i].header &&
		     MHD_add_response_header(r, canned_def[i].header, canned_def[i].value) !=
			 MHD_YES))
			return -ENOMEM;
	}
	return 0;
}

/* The bound address from the socket, the port as MHD reports it. */
static void format_address(struct http_server *s, int fd)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	unsigned port = di ? di->port : 0;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "";

	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		ss.ss_family = AF_UNSPEC;
	if (ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, ip, sizeof(ip));
		snprintf(s->address, sizeof(s->address), "[%s]:%u", ip, port);
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof(ip));
		snprintf(s->address, sizeof(s->address), "%s:%u", ip, port);
	}
}

static int start_mhd(struct http_server *s, const struct http_server_config *cfg, int listen_fd)
{
	unsigned max = cfg->max_clients ? cfg->max_clients : DEFAULT_MAX_CLIENTS;
	unsigned per_ip = cfg->max_clients_per_ip ? cfg->max_clients_per_ip : max / 4;
	unsigned timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
	s->head_timeout_ms = cfg->head_timeout_ms ? cfg->head_timeout_ms : DEFAULT_HEAD_TIMEOUT_MS;
	if (s->head_timeout_ms > timeout_ms)
		s->head_timeout_ms = timeout_ms;
	/* strict parsing answers 400 to what RFC 9112 says to refuse (no Host in HTTP/1.1,
	 * whitespace before a colon, obs-fold) */
	/* one option and its value per line */
	/* clang-format off */
	s->mhd = MHD_start_daemon(MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
		on_request, s,
		MHD_OPTION_LISTEN_SOCKET, listen_fd,
		MHD_OPTION_CONNECTION_LIMIT, max,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip ? per_ip : 1U,
		MHD_OPTION_CONNECTION_TIMEOUT, (timeout_ms + 999) / 1000,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
		MHD_OPTION_STRICT_FOR_CLIENT, 1,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
		MHD_OPTION_END);
	/* clang-format on */
	return s->mhd ? 0 : -EIO;
}

static void server_free(struct http_server *s)
{
	if (s->thread_started) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->deadline_thread, NULL);
	}
	/* closes every connection, with on_completed resetting the responses cut short */
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	if (s->metrics)
		MHD_destroy_response(s->metrics);
	for (int i = 0; i < R_COUNT; i++)
		if (s->canned[i])
			MHD_destroy_response(s->canned[i]);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Both threads, MHD's and the deadlines', with every signal blocked: signals stay with the
 * caller's threads, whose loops wait for SIGINT and SIGTERM. */
static int start_threads(struct http_server *s, const struct http_server_config *cfg, int listen_fd,
			 char *err, size_t errlen)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = start_mhd(s, cfg, listen_fd);
	if (ret)
		/* the descriptor is not closed: MHD closes it on some of its failure paths and
		 * not on others, and this is a failure to start, which ends the program */
		snprintf(err, errlen, "cannot start the HTTP server on %s", cfg->listen);
	if (!ret) {
		ret = -pthread_create(&s->deadline_thread, NULL, deadline_main, s);
		if (ret)
			snprintf(err, errlen, "cannot start the HTTP server thread: %s",
				 strerror(-ret));
		s->thread_started = !ret;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

int http_server_start(const struct http_server_config *cfg, struct http_server **out, char *err,
		      size_t errlen)
{
	struct http_server *s;
	pthread_condattr_t ca;
	int ret, listen_fd;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "cannot start the HTTP server: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	s->waiting.prev = s->waiting.next = &s->waiting;
	pthread_mutex_init(&s->lock, NULL);
	/* deadlines are CLOCK_MONOTONIC: a clock set back must not stretch them */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);

	ret = make_canned(s);
	if (ret) {
		snprintf(err, errlen, "cannot start the HTTP server: %s", strerror(-ret));
		goto cleanup;
	}
	listen_fd = http_listen_open(cfg->listen, err, errlen);
	if (listen_fd < 0) {
		ret = listen_fd;
		goto cleanup;
	}
	ret = start_threads(s, cfg, listen_fd, err, errlen);
	if (ret)
		goto cleanup;
	format_address(s, listen_fd);
	*out = s;
	return 0;

cleanup:
	server_free(s);
	return ret;
}

const char *http_server_address(const struct http_server *s)
{
	return s->address;
}

int http_server_publish(struct http_server *s, const char *body, size_t len)
{
	struct MHD_Response *r, *old;
	char *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, body, len);
	/* MHD frees the copy with the response, once the last connection sending it is done */
	r = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(copy);
		return -ENOMEM;
	}
	if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, METRICS_TYPE) != MHD_YES) {
		MHD_destroy_response(r);
		return -ENOMEM;
	}
	pthread_mutex_lock(&s->lock);
	old = s->metrics;
	s->metrics = r;
	pthread_mutex_unlock(&s->lock);
	if (old)
		MHD_destroy_response(old);
	return 0;
}

void http_server_get_stats(struct http_server *s, struct http_server_stats *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->stats;
	pthread_mutex_unlock(&s->lock);
}

void http_server_stop(struct http_server *s)
{
	if (s)
		server_free(s);
}
