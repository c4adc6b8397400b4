// SPDX-License-Identifier: MIT
/*
 * One thread, one poll() over the wakeup eventfd, the listening socket and every connection, all
 * non-blocking. Each connection is a small state machine: read a request head into its 8 KiB
 * buffer → send the response from a header buffer and a body (a static string, or a counted
 * reference to the published snapshot) → read the next request, or shut down and linger.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "http_server.h"

#define HEAD_MAX	    8192
#define DEFAULT_MAX_CLIENTS 64
#define DEFAULT_TIMEOUT_MS  10000
#define LINGER_MS	    2000
#define ACCEPT_BATCH	    32
#define ACCEPT_PAUSE_MS	    100
#define ADDRESS_MAX	    (INET6_ADDRSTRLEN + 8)

#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define TEXT_TYPE    "text/plain; charset=utf-8"
#define HTML_TYPE    "text/html; charset=utf-8"

static const char index_page[] =
    "<html><head><title>gpuspy</title></head>\n"
    "<body><h1>gpuspy</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

#define BUSY_BODY "too many clients\n"
_Static_assert(sizeof(BUSY_BODY) - 1 == 17, "the 503 Content-Length below is 17");
static const char busy_response[] = "HTTP/1.1 503 Service Unavailable\r\n"
				    "Content-Type: " TEXT_TYPE "\r\n"
				    "Content-Length: 17\r\n"
				    "Retry-After: 1\r\n"
				    "Connection: close\r\n"
				    "\r\n" BUSY_BODY;

/* A published /metrics body. The publisher drops its reference when it publishes the next one,
 * each response using it drops its own when sent: whoever drops the last frees it. */
struct snapshot {
	atomic_uint refs;
	size_t len;
	char data[];
};

enum conn_state {
	CONN_READ,   /* waiting for (the rest of) a request head */
	CONN_SEND,   /* sending a response */
	CONN_LINGER, /* response sent, write side shut: discarding input until the client closes */
};

struct conn {
	int fd;
	enum conn_state state;
	bool close_after; /* the response in flight is the last */
	bool peer_eof;	  /* the client has shut its write side */
	unsigned served;  /* responses completed on this connection */
	int64_t deadline; /* CLOCK_MONOTONIC ms: end of the current state */
	struct snapshot *snap;
	const char *body;
	size_t body_len, body_off;
	size_t head_len, head_off;
	size_t in_len;
	char head[512];
	char in[HEAD_MAX];
};

struct http_server {
	int listen_fd;
	int wake_fd;
	bool thread_started;
	pthread_t thread;
	unsigned max_clients;
	unsigned timeout_ms;
	pthread_mutex_t lock; /* guards current and stats */
	struct snapshot *current;
	struct http_server_stats stats;
	/* the server thread's own */
	struct conn **conns;
	struct pollfd *pfds;
	unsigned nconns;
	int64_t accept_pause_until;
	char address[ADDRESS_MAX];
};

enum target { TARGET_OTHER, TARGET_INDEX, TARGET_METRICS };

struct request {
	size_t head_len; /* bytes of the head, blank line included; 0 while incomplete */
	int status;	 /* an error found so far (the head need not be complete) */
	bool get, head;
	bool http10;
	bool conn_close, conn_keep_alive;
	bool has_body; /* Content-Length > 0 */
	bool chunked;  /* any Transfer-Encoding */
	bool cl_seen;
	uint64_t content_length;
	enum target target;
};

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

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void snapshot_put(struct snapshot *snap)
{
	if (snap && atomic_fetch_sub_explicit(&snap->refs, 1, memory_order_acq_rel) == 1)
		free(snap);
}

/* Under the lock, so the publisher cannot drop the last reference between load and increment. */
static struct snapshot *snapshot_get(struct http_server *s)
{
	struct snapshot *snap;

	pthread_mutex_lock(&s->lock);
	snap = s->current;
	if (snap)
		atomic_fetch_add_explicit(&snap->refs, 1, memory_order_relaxed);
	pthread_mutex_unlock(&s->lock);
	return snap;
}

static void stat_add(struct http_server *s, uint64_t *field)
{
	pthread_mutex_lock(&s->lock);
	(*field)++;
	pthread_mutex_unlock(&s->lock);
}

static void set_clients(struct http_server *s)
{
	pthread_mutex_lock(&s->lock);
	s->stats.clients = s->nconns;
	pthread_mutex_unlock(&s->lock);
}

/* ---- request parsing (RFC 9112), strict: anything doubtful is a 400 ---- */

static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* Whether what has come of a request line so far can still become one, so that garbage and
 * binary blobs are answered at once instead of after 8 KiB or the timeout. */
static bool request_line_prefix_ok(const char *p, size_t len)
{
	static const char version[] = "HTTP/1.";
	size_t i = 0, v;

	while (i < len && is_tchar(p[i]))
		i++;
	if (i == len)
		return true;
	if (i == 0 || p[i++] != ' ')
		return false;
	if (i < len && p[i] == ' ')
		return false;
	while (i < len && (unsigned char)p[i] > ' ' && (unsigned char)p[i] < 0x7f)
		i++;
	if (i == len)
		return true;
	if (p[i++] != ' ')
		return false;
	for (v = 0; i < len; i++, v++) {
		if (v < sizeof(version) - 1 && p[i] != version[v])
			return false;
		if (v == sizeof(version) - 1 && (p[i] < '0' || p[i] > '9'))
			return false;
		/* the line's CR, its LF not here yet */
		if (v == sizeof(version))
			return p[i] == '\r' && i + 1 == len;
	}
	return true;
}

/* "METHOD SP request-target SP HTTP/1.d", the line ending already removed. */
static int parse_request_line(const char *p, size_t len, struct request *rq)
{
	const char *end = p + len, *sp1, *sp2, *target, *path_end, *q;
	size_t vlen;

	sp1 = memchr(p, ' ', len);
	if (!sp1 || sp1 == p)
		return 400;
	for (q = p; q < sp1; q++)
		if (!is_tchar(*q))
			return 400;
	target = sp1 + 1;
	sp2 = memchr(target, ' ', (size_t)(end - target));
	if (!sp2 || sp2 == target)
		return 400;
	for (q = target; q < sp2; q++)
		if ((unsigned char)*q <= ' ' || (unsigned char)*q >= 0x7f)
			return 400;
	vlen = (size_t)(end - sp2 - 1);
	if (vlen != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) || sp2[8] < '0' || sp2[8] > '9')
		return 400;
	rq->http10 = sp2[8] == '0';
	rq->get = sp1 - p == 3 && !memcmp(p, "GET", 3);
	rq->head = sp1 - p == 4 && !memcmp(p, "HEAD", 4);

	/* absolute-form, which servers must accept: the path is what follows the authority */
	if (sp2 - target > 8 &&
	    (!strncasecmp(target, "http://", 7) || !strncasecmp(target, "https://", 8))) {
		const char *authority = target + (target[4] == ':' ? 7 : 8);

		target = memchr(authority, '/', (size_t)(sp2 - authority));
		if (!target) {
			rq->target = TARGET_INDEX;
			return 0;
		}
	} else if (*target != '/') {
		rq->target = TARGET_OTHER;
		return 0;
	}
	for (path_end = target; path_end < sp2 && *path_end != '?' && *path_end != '#'; path_end++)
		;
	if (path_end - target == 8 && !memcmp(target, "/metrics", 8))
		rq->target = TARGET_METRICS;
	else if (path_end - target == 1)
		rq->target = TARGET_INDEX;
	else
		rq->target = TARGET_OTHER;
	return 0;
}

static bool parse_decimal(const char *p, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	*out = v;
	return true;
}

static void parse_connection(const char *p, size_t len, struct request *rq)
{
	const char *end = p + len;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p)), *e = comma ? comma : end;

		while (p < e && is_ows(*p))
			p++;
		while (e > p && is_ows(e[-1]))
			e--;
		if (e - p == 5 && !strncasecmp(p, "close", 5))
			rq->conn_close = true;
		else if (e - p == 10 && !strncasecmp(p, "keep-alive", 10))
			rq->conn_keep_alive = true;
		p = comma ? comma + 1 : end;
	}
}

/* "name: value"; obs-fold and whitespace before the colon are refused, as RFC 9112 asks. */
static int parse_header(const char *p, size_t len, struct request *rq)
{
	const char *colon = memchr(p, ':', len), *v, *e = p + len;
	size_t nlen;
	uint64_t cl;

	if (!colon || colon == p)
		return 400;
	for (const char *q = p; q < colon; q++)
		if (!is_tchar(*q))
			return 400;
	nlen = (size_t)(colon - p);
	for (v = colon + 1; v < e && is_ows(*v); v++)
		;
	while (e > v && is_ows(e[-1]))
		e--;
	if (nlen == 10 && !strncasecmp(p, "connection", nlen)) {
		parse_connection(v, (size_t)(e - v), rq);
	} else if (nlen == 14 && !strncasecmp(p, "content-length", nlen)) {
		/* a second, different length is the classic request-smuggling ambiguity */
		if (!parse_decimal(v, (size_t)(e - v), &cl) ||
		    (rq->cl_seen && cl != rq->content_length))
			return 400;
		rq->cl_seen = true;
		rq->content_length = cl;
		rq->has_body = cl > 0;
	} else if (nlen == 17 && !strncasecmp(p, "transfer-encoding", nlen)) {
		rq->chunked = true;
	}
	return 0;
}

/* Length of the line at p (end of buffer: none), its CR LF or LF removed into *line_len. */
static const char *next_line(const char *p, const char *end, size_t *line_len)
{
	const char *lf = memchr(p, '\n', (size_t)(end - p));

	if (!lf)
		return NULL;
	*line_len = (size_t)(lf - p);
	if (*line_len && p[*line_len - 1] == '\r')
		(*line_len)--;
	return lf + 1;
}

/* Parses what has arrived: rq->head_len set once the head is whole, rq->status on an error,
 * neither while more is needed. */
static void parse_head(const char *buf, size_t len, struct request *rq)
{
	const char *p = buf, *end = buf + len, *next;
	size_t line_len;
	int status;

	memset(rq, 0, sizeof(*rq));
	/* no head holds control characters; a CR is only allowed to end a line */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if ((c < ' ' && c != '\t' && c != '\r' && c != '\n') || c == 0x7f ||
		    (c == '\r' && i + 1 < len && buf[i + 1] != '\n')) {
			rq->status = 400;
			return;
		}
	}
	next = next_line(p, end, &line_len);
	if (!next) {
		if (!request_line_prefix_ok(buf, len))
			rq->status = 400;
		else if (len >= HEAD_MAX)
			rq->status = 431;
		return;
	}
	status = parse_request_line(p, line_len, rq);
	if (status) {
		rq->status = status;
		return;
	}
	for (p = next; (next = next_line(p, end, &line_len)); p = next) {
		if (!line_len) {
			rq->head_len = (size_t)(next - buf);
			return;
		}
		status = parse_header(p, line_len, rq);
		if (status) {
			rq->status = status;
			return;
		}
	}
	if (len >= HEAD_MAX)
		rq->status = 431;
}

/* ---- responses ---- */

static const char *reason_of(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 413:
		return "Content Too Large";
	case 431:
		return "Request Header Fields Too Large";
	default:
		return "Internal Server Error";
	}
}

static const char *error_body(int status)
{
	switch (status) {
	case 404:
		return "not found\n";
	case 405:
		return "method not allowed\n";
	case 413:
		return "request bodies are not accepted\n";
	case 431:
		return "request head too large\n";
	default:
		return "bad request\n";
	}
}

/* RFC 9110 IMF-fixdate, by hand: strftime's names follow the locale. */
static void http_date(char *buf, size_t len)
{
	static const char days[] = "SunMonTueWedThuFriSat";
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	time_t t = time(NULL);
	struct tm tm;

	if (!gmtime_r(&t, &tm)) {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, len, "%.3s, %02d %.3s %04d %02d:%02d:%02d GMT", days + 3 * (tm.tm_wday % 7),
		 tm.tm_mday % 100, months + 3 * (tm.tm_mon % 12), (tm.tm_year + 1900) % 10000,
		 tm.tm_hour % 100, tm.tm_min % 100, tm.tm_sec % 100);
}

/* Starts the response to a whole head (rq->head_len) or to an error found on the way. */
static void conn_respond(struct http_server *s, struct conn *c, const struct request *rq,
			 int64_t now)
{
	const char *type = TEXT_TYPE, *body, *connection = "";
	char date[40];
	size_t len;
	int status = rq->status, n;

	/* a client that has shut its write side still gets every request it sent answered: the
	 * connection closes when no whole request is left */
	c->close_after = rq->status || rq->conn_close || (rq->http10 && !rq->conn_keep_alive);
	if (!status && !rq->get && !rq->head) {
		status = 405;
		/* the body was not read, so the next request cannot be found */
		c->close_after |= rq->has_body || rq->chunked;
	} else if (!status && rq->chunked) {
		status = 400;
	} else if (!status && rq->has_body) {
		status = 413;
	} else if (!status) {
		status = rq->target == TARGET_OTHER ? 404 : 200;
	}
	if (status != 200 && status != 404 && status != 405)
		c->close_after = true;

	c->snap = NULL;
	if (status == 200 && rq->target == TARGET_METRICS) {
		type = METRICS_TYPE;
		c->snap = snapshot_get(s);
		body = c->snap ? c->snap->data : "";
		len = c->snap ? c->snap->len : 0;
	} else if (status == 200) {
		type = HTML_TYPE;
		body = index_page;
		len = sizeof(index_page) - 1;
	} else {
		body = error_body(status);
		len = strlen(body);
	}
	if (c->close_after)
		connection = "Connection: close\r\n";
	else if (rq->http10)
		connection = "Connection: keep-alive\r\n";
	http_date(date, sizeof(date));
	n = snprintf(c->head, sizeof(c->head),
		     "HTTP/1.1 %d %s\r\n"
		     "Content-Type: %s\r\n"
		     "Content-Length: %zu\r\n"
		     "Date: %s\r\n"
		     "%s%s\r\n",
		     status, reason_of(status), type, len, date,
		     status == 405 ? "Allow: GET, HEAD\r\n" : "", connection);
	/* cannot happen (the longest head is under 300 bytes), but never send past the buffer */
	c->head_len = n < 0 ? 0 : (size_t)n < sizeof(c->head) ? (size_t)n : sizeof(c->head) - 1;
	c->head_off = 0;
	c->body = body;
	c->body_len = rq->head ? 0 : len;
	c->body_off = 0;
	if (rq->head && c->snap) {
		snapshot_put(c->snap);
		c->snap = NULL;
	}
	c->state = CONN_SEND;
	c->deadline = now + s->timeout_ms;

	pthread_mutex_lock(&s->lock);
	s->stats.requests++;
	if (status == 200)
		s->stats.ok++;
	else if (status == 404)
		s->stats.not_found++;
	else
		s->stats.bad++;
	pthread_mutex_unlock(&s->lock);
}

/* 0: all sent; 1: the socket is full; -1: the client is gone. */
static int conn_send(struct conn *c)
{
	while (c->head_off < c->head_len || c->body_off < c->body_len) {
		struct iovec iov[2];
		struct msghdr msg = {.msg_iov = iov};
		ssize_t n;
		size_t done;

		if (c->head_off < c->head_len)
			iov[msg.msg_iovlen++] =
			    (struct iovec){c->head + c->head_off, c->head_len - c->head_off};
		if (c->body_off < c->body_len)
			iov[msg.msg_iovlen++] = (struct iovec){(char *)c->body + c->body_off,
							       c->body_len - c->body_off};
		/* MSG_NOSIGNAL: a client that has gone must not kill the process with SIGPIPE */
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -1;
		}
		done = (size_t)n;
		if (c->head_off < c->head_len) {
			size_t h =
			    c->head_len - c->head_off < done ? c->head_len - c->head_off : done;

			c->head_off += h;
			done -= h;
		}
		c->body_off += done;
	}
	return 0;
}

static void conn_close(struct conn *c, bool abort)
{
	if (abort) {
		/* a reset frees the kernel's send buffer now: a plain close would leave a stuck
		 * response behind, retried against a zero window for minutes */
		struct linger l = {.l_onoff = 1, .l_linger = 0};

		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	close(c->fd);
	snapshot_put(c->snap);
	free(c);
}

/* Drops the request just answered (and any empty lines before the next one) from the buffer. */
static void conn_consume(struct conn *c, size_t n)
{
	/* RFC 9112 2.2: empty lines before a request line are to be ignored */
	while (n < c->in_len) {
		if (c->in[n] == '\n')
			n++;
		else if (c->in[n] == '\r' && n + 1 < c->in_len && c->in[n + 1] == '\n')
			n += 2;
		else
			break;
	}
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
}

/* Moves a connection on as far as it goes without blocking: false once it is closed. */
static bool conn_advance(struct http_server *s, struct conn *c, int64_t now)
{
	struct request rq;
	int ret;

	for (;;) {
		switch (c->state) {
		case CONN_SEND:
			ret = conn_send(c);
			if (ret < 0) {
				conn_close(c, true);
				return false;
			}
			if (ret > 0)
				return true;
			snapshot_put(c->snap);
			c->snap = NULL;
			c->served++;
			if (c->close_after) {
				/* closing with unread input would reset the connection and could
				 * destroy the response before the client reads it: shut the write
				 * side, then read until the client closes */
				shutdown(c->fd, SHUT_WR);
				c->state = CONN_LINGER;
				c->deadline =
				    now + (s->timeout_ms < LINGER_MS ? s->timeout_ms : LINGER_MS);
				return true;
			}
			c->state = CONN_READ;
			c->deadline = now + s->timeout_ms;
			break;
		case CONN_READ:
			conn_consume(c, 0);
			parse_head(c->in, c->in_len, &rq);
			if (rq.head_len || rq.status) {
				conn_respond(s, c, &rq, now);
				if (rq.head_len)
					conn_consume(c, rq.head_len);
				break;
			}
			if (c->peer_eof) {
				conn_close(c, false);
				return false;
			}
			return true;
		case CONN_LINGER:
			return true;
		}
	}
}

/* Handles poll's events on a connection: false once it is closed. */
static bool conn_event(struct http_server *s, struct conn *c, short revents, int64_t now)
{
	ssize_t n;

	switch (c->state) {
	case CONN_READ:
		if (!(revents & (POLLIN | POLLHUP | POLLERR)))
			return true;
		n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return true;
		if (n < 0) {
			conn_close(c, false);
			return false;
		}
		if (n == 0)
			c->peer_eof = true;
		c->in_len += (size_t)n;
		return conn_advance(s, c, now);
	case CONN_SEND:
		if (!(revents & (POLLOUT | POLLHUP | POLLERR)))
			return true;
		return conn_advance(s, c, now);
	case CONN_LINGER:
		if (!(revents & (POLLIN | POLLHUP | POLLERR)))
			return true;
		/* bounded: a client sending without pause is cut off by the linger deadline */
		for (int i = 0; i < 16; i++) {
			n = recv(c->fd, c->in, sizeof(c->in), 0);
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return true;
			if (n <= 0 && !(n < 0 && errno == EINTR)) {
				conn_close(c, false);
				return false;
			}
		}
		return true;
	}
	return true;
}

/* Past its deadline: a connection idle between requests is simply closed; one stuck in a
 * request or a response counts as a timeout. */
static void conn_expire(struct http_server *s, struct conn *c)
{
	bool idle = c->state == CONN_LINGER || (c->state == CONN_READ && !c->in_len && c->served);

	if (!idle)
		stat_add(s, &s->stats.timeouts);
	conn_close(c, !idle);
}

/* Over max_clients: answered without a connection slot and without blocking. */
static void reject(struct http_server *s, int fd)
{
	char scratch[1024];
	ssize_t n;

	/* a request already received and left unread would turn close() into a reset that can
	 * destroy the 503 before the client reads it */
	for (int i = 0; i < 8; i++) {
		n = recv(fd, scratch, sizeof(scratch), 0);
		if (n <= 0 && !(n < 0 && errno == EINTR))
			break;
	}
	n = send(fd, busy_response, sizeof(busy_response) - 1, MSG_NOSIGNAL);
	(void)n;
	close(fd);
	stat_add(s, &s->stats.rejected);
}

static void accept_clients(struct http_server *s, int64_t now)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), one = 1;
		struct conn *c;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			/* out of descriptors or memory: the pending connection stays readable, so
			 * stop polling for it a while instead of spinning */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				s->accept_pause_until = now + ACCEPT_PAUSE_MS;
			return;
		}
		c = s->nconns < s->max_clients ? malloc(sizeof(*c)) : NULL;
		if (!c) {
			reject(s, fd);
			continue;
		}
		/* a response is one sendmsg(); its tail must not wait for the previous ACK */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->fd = fd;
		c->state = CONN_READ;
		c->close_after = c->peer_eof = false;
		c->served = 0;
		c->deadline = now + s->timeout_ms;
		c->snap = NULL;
		c->body = NULL;
		c->body_len = c->body_off = c->head_len = c->head_off = c->in_len = 0;
		s->conns[s->nconns++] = c;
		set_clients(s);
	}
}

static void *server_main(void *arg)
{
	struct http_server *s = arg;

	for (;;) {
		int64_t now = now_ms(), wait = -1;
		unsigned i, kept;
		int n;

		s->pfds[0] = (struct pollfd){.fd = s->wake_fd, .events = POLLIN};
		s->pfds[1] = (struct pollfd){.fd = now < s->accept_pause_until ? -1 : s->listen_fd,
					     .events = POLLIN};
		if (now < s->accept_pause_until)
			wait = s->accept_pause_until - now;
		for (i = 0; i < s->nconns; i++) {
			struct conn *c = s->conns[i];
			int64_t left = c->deadline > now ? c->deadline - now : 0;

			s->pfds[2 + i] = (struct pollfd){
			    .fd = c->fd, .events = c->state == CONN_SEND ? POLLOUT : POLLIN};
			if (wait < 0 || left < wait)
				wait = left;
		}
		n = poll(s->pfds, 2 + s->nconns, (int)(wait > 60000 ? 60000 : wait));
		if (n < 0) {
			if (errno != EINTR) {
				/* ENOMEM: transient; do not spin on it */
				struct timespec ts = {0, 10 * 1000000};

				nanosleep(&ts, NULL);
			}
			continue;
		}
		if (s->pfds[0].revents)
			break;
		now = now_ms();
		for (i = 0, kept = 0; i < s->nconns; i++) {
			struct conn *c = s->conns[i];

			if (s->pfds[2 + i].revents &&
			    !conn_event(s, c, s->pfds[2 + i].revents, now))
				continue;
			if (now >= c->deadline) {
				conn_expire(s, c);
				continue;
			}
			s->conns[kept++] = c;
		}
		if (kept != s->nconns) {
			s->nconns = kept;
			set_clients(s);
		}
		if (s->pfds[1].revents & POLLIN)
			accept_clients(s, now);
	}
	return NULL;
}

/* ---- setup ---- */

/* "host:port", "[v6]:port" or ":port" into its parts; host is empty for all addresses. */
static int split_listen(const char *listen, char *host, size_t hostlen, char *port, size_t portlen,
			uint16_t *portnum)
{
	const char *colon, *h = listen;
	size_t hlen;
	uint64_t v;

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
	if (hlen >= hostlen || strlen(colon + 1) >= portlen ||
	    !parse_decimal(colon + 1, strlen(colon + 1), &v) || v > 65535)
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	strcpy(port, colon + 1);
	*portnum = (uint16_t)v;
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

static void format_address(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN];

	buf[0] = '\0';
	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return;
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(a->sin6_port));
	} else {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(a->sin_port));
	}
}

/* The listening socket, or -errno with err set. */
static int open_listener(const char *listen, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL, *ai;
	char host[256], port[8];
	uint16_t portnum;
	int fd, gai;

	if (!listen || split_listen(listen, host, sizeof(host), port, sizeof(port), &portnum)) {
		set_err(err, errlen,
			"invalid listen address '%s': expected HOST:PORT, [IPV6]:PORT or :PORT",
			listen ? listen : "");
		return -EINVAL;
	}
	if (!host[0]) {
		struct sockaddr_in6 a6 = {.sin6_family = AF_INET6,
					  .sin6_addr = IN6ADDR_ANY_INIT,
					  .sin6_port = htons(portnum)};
		struct sockaddr_in a4 = {.sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(INADDR_ANY),
					 .sin_port = a6.sin6_port};

		fd = listen_on((struct sockaddr *)&a6, sizeof(a6));
		/* a kernel without IPv6 */
		if (fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL)
			fd = listen_on((struct sockaddr *)&a4, sizeof(a4));
		if (fd < 0)
			set_err(err, errlen, "cannot listen on %s: %s", listen, strerror(-fd));
		return fd;
	}
	gai = getaddrinfo(host, port, &hints, &res);
	if (gai) {
		fd = gai == EAI_SYSTEM ? -errno : gai == EAI_MEMORY ? -ENOMEM : -EADDRNOTAVAIL;
		set_err(err, errlen, "cannot listen on %s: %s", listen,
			gai == EAI_SYSTEM ? strerror(-fd) : gai_strerror(gai));
		return fd;
	}
	/* "localhost" may be ::1 and 127.0.0.1: the first that binds wins, as clients try all */
	fd = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
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

static void server_free(struct http_server *s)
{
	/* a response cut short is reset: its FIN could not pass a window that stays shut */
	for (unsigned i = 0; i < s->nconns; i++)
		conn_close(s->conns[i], s->conns[i]->state == CONN_SEND);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	snapshot_put(s->current);
	free(s->conns);
	free(s->pfds);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int http_server_start(const struct http_server_config *cfg, struct http_server **out, char *err,
		      size_t errlen)
{
	struct http_server *s;
	sigset_t all, old;
	int ret;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		set_err(err, errlen, "cannot start the HTTP server: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	s->listen_fd = s->wake_fd = -1;
	s->max_clients = cfg->max_clients ? cfg->max_clients : DEFAULT_MAX_CLIENTS;
	s->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
	pthread_mutex_init(&s->lock, NULL);

	s->listen_fd = open_listener(cfg->listen, err, errlen);
	if (s->listen_fd < 0) {
		ret = s->listen_fd;
		goto cleanup;
	}
	format_address(s->listen_fd, s->address, sizeof(s->address));
	s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->conns = calloc(s->max_clients, sizeof(*s->conns));
	s->pfds = calloc((size_t)s->max_clients + 2, sizeof(*s->pfds));
	if (s->wake_fd < 0 || !s->conns || !s->pfds) {
		ret = s->wake_fd < 0 ? -errno : -ENOMEM;
		set_err(err, errlen, "cannot start the HTTP server: %s", strerror(-ret));
		goto cleanup;
	}
	/* signals stay with the caller's threads, whose loops wait for SIGINT and SIGTERM */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&s->thread, NULL, server_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		set_err(err, errlen, "cannot start the HTTP server thread: %s", strerror(-ret));
		goto cleanup;
	}
	s->thread_started = true;
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
	struct snapshot *snap, *old;

	if (len > SIZE_MAX - sizeof(*snap))
		return -ENOMEM;
	snap = malloc(sizeof(*snap) + len);
	if (!snap)
		return -ENOMEM;
	atomic_init(&snap->refs, 1);
	snap->len = len;
	if (len)
		memcpy(snap->data, body, len);
	pthread_mutex_lock(&s->lock);
	old = s->current;
	s->current = snap;
	pthread_mutex_unlock(&s->lock);
	snapshot_put(old);
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
	if (!s)
		return;
	if (s->thread_started) {
		eventfd_write(s->wake_fd, 1);
		pthread_join(s->thread, NULL);
	}
	server_free(s);
}
