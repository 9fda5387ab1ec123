// SPDX-License-Identifier: BSD-3-Clause
/*
 * The /metrics server: one thread, one connection at a time, one request
 * per connection (Connection: close). The text comes from
 * td_exposition_render() (exposition.c) at each publish.
 *
 * GET /metrics (a query string is ignored) answers 200 with the text last
 * published, empty before the first. Any other path is 404, whatever the
 * method; /metrics with a method other than GET is 405. A request head
 * over REQUEST_MAX bytes is 431, a malformed request line 400.
 *
 * A bad client cannot hang the server: each exchange, request and
 * response together, must finish within EXCHANGE_TIMEOUT_MS, else the
 * connection is closed. Every wait of the thread also watches an eventfd
 * that td_exporter_stop() writes, so stopping is prompt even mid-request.
 *
 * The listen address must name a host: "127.0.0.1:9464" (loopback is the
 * safe choice: the gauges describe the host's processes), "[::1]:9464",
 * "localhost:9464" (the first of its addresses that binds, in the
 * resolver's order), or "0.0.0.0:9464" to listen on every interface.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "exporter.h"
#include "parse.h"

#define REQUEST_MAX 8192          /* bytes of request line and headers */
#define EXCHANGE_TIMEOUT_MS 2000  /* for one whole request and response */
#define ACCEPT_BACKOFF_MS 100     /* after accept() fails (out of fds): no busy loop */
#define HOST_MAX 256

struct td_exporter {
	int listen_fd;
	int stop_fd; /* eventfd: readable once td_exporter_stop() wants the thread gone */
	pthread_t thread;
	pthread_mutex_t lock;
	char *text; /* what scrapes get; NULL before the first publish; under lock */
};

/* ---- the listen address ---- */

/* "host:port" or "[v6]:port" into host and port (1..65535). */
static int parse_listen(const char *address, char host[HOST_MAX], long *port,
			char *err, size_t errlen)
{
	const char *colon, *start = address, *end;

	if (address[0] == '[') {
		start = address + 1;
		end = strchr(start, ']');
		if (!end || end[1] != ':') {
			snprintf(err, errlen, "bad --metrics-listen '%s': write an IPv6 address as [ADDRESS]:PORT, e.g. [::1]:9464",
				 address);
			return -EINVAL;
		}
		colon = end + 1;
	} else {
		colon = strrchr(address, ':');
		if (!colon) {
			snprintf(err, errlen, "no port in --metrics-listen '%s': write it as HOST:PORT, e.g. 127.0.0.1:9464",
				 address);
			return -EINVAL;
		}
		end = colon;
		if (memchr(address, ':', (size_t)(colon - address))) {
			snprintf(err, errlen, "bad --metrics-listen '%s': put an IPv6 address in brackets, e.g. [::1]:9464",
				 address);
			return -EINVAL;
		}
	}
	if (end == start || end - start >= HOST_MAX) {
		snprintf(err, errlen, "bad --metrics-listen '%s': name the host to listen on, e.g. 127.0.0.1:9464 (0.0.0.0 for every interface)",
			 address);
		return -EINVAL;
	}
	memcpy(host, start, (size_t)(end - start));
	host[end - start] = '\0';
	return td_parse_int_range(colon + 1, "the --metrics-listen port", 1, 65535, port, err, errlen);
}

/* Why bind() or listen() failed, and what to do, for the usual cases. */
static const char *listen_problem(int error)
{
	switch (error) {
	case EADDRINUSE:
		return "the port is in use by another program; choose a free one with --metrics-listen";
	case EADDRNOTAVAIL:
		return "no interface of this host has that address; use 127.0.0.1 or one of the host's own";
	case EACCES:
		return "ports below 1024 need root (CAP_NET_BIND_SERVICE); choose a higher one";
	default:
		return strerror(error);
	}
}

/* A listening socket on host:port (the first address of host that binds),
 * or -1 with err. */
static int listen_on(const char *address, const char *host, long port, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *addrs, *a;
	char service[8];
	int fd = -1, saved = 0, one = 1, rc;

	snprintf(service, sizeof(service), "%ld", port);
	rc = getaddrinfo(host, service, &hints, &addrs);
	if (rc) {
		snprintf(err, errlen, "cannot resolve the host of --metrics-listen '%s': %s; use an address such as 127.0.0.1",
			 address, gai_strerror(rc));
		return -1;
	}
	for (a = addrs; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) {
			saved = saved ? saved : errno;
			continue;
		}
		/* A restarted agent must not wait out the old sockets' TIME_WAIT. */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, a->ai_addr, a->ai_addrlen) < 0 || listen(fd, 16) < 0) {
			saved = saved ? saved : errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(addrs);
	if (fd >= 0)
		return fd;
	snprintf(err, errlen, "cannot listen on %s: %s", address, listen_problem(saved));
	return -1;
}

/* ---- one exchange ---- */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Waits until fd has events, up to deadline (ms on now_ms()'s clock).
 * false on timeout, on error, and when the exporter is stopping. */
static bool wait_for(const struct td_exporter *x, int fd, short events, long long deadline)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = x->stop_fd, .events = POLLIN },
				       { .fd = fd, .events = events } };
		long long left = deadline - now_ms();
		int n;

		if (left <= 0)
			return false;
		n = poll(p, 2, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		return n > 0 && !p[0].revents && p[1].revents;
	}
}

/* Reads the request head into req (NUL-terminated). 0 when complete, 431
 * when over REQUEST_MAX, -1 when the client went away, stalled or the
 * exporter is stopping. */
static int read_request(const struct td_exporter *x, int fd, char req[REQUEST_MAX + 1],
			long long deadline)
{
	size_t len = 0;

	for (;;) {
		ssize_t n = recv(fd, req + len, REQUEST_MAX - len, 0);

		if (n == 0)
			return -1;
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				return -1;
			if (!wait_for(x, fd, POLLIN, deadline))
				return -1;
			continue;
		}
		len += (size_t)n;
		req[len] = '\0';
		if (memmem(req, len, "\r\n\r\n", 4) || memmem(req, len, "\n\n", 2))
			return 0;
		if (len == REQUEST_MAX)
			return 431;
	}
}

/* The status a request head gets (200 for GET /metrics). */
static int route(const char *req)
{
	size_t method = strcspn(req, " \r\n"), target, path;
	const char *t;

	if (req[method] != ' ')
		return 400;
	t = req + method + 1;
	target = strcspn(t, " \r\n");
	if (t[target] != ' ' || strncmp(t + target + 1, "HTTP/1.", 7))
		return 400;
	path = strcspn(t, "? \r\n");
	if (path != strlen("/metrics") || strncmp(t, "/metrics", path))
		return 404;
	if (method != 3 || strncmp(req, "GET", 3))
		return 405;
	return 200;
}

/* flags: MSG_MORE for a head whose body follows, so they leave together. */
static bool send_all(const struct td_exporter *x, int fd, const char *buf, size_t len,
		     int flags, long long deadline)
{
	while (len) {
		ssize_t n = send(fd, buf, len, flags | MSG_NOSIGNAL);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			return false;
		} else if (n < 0 && errno == EAGAIN && !wait_for(x, fd, POLLOUT, deadline)) {
			return false;
		}
	}
	return true;
}

static const struct answer {
	int status;
	const char *reason, *body; /* body NULL: the metrics */
} answers[] = {
	{ 200, "OK", NULL },
	{ 400, "Bad Request", "Bad request: send GET /metrics HTTP/1.1.\n" },
	{ 404, "Not Found", "Not found: the metrics are at /metrics.\n" },
	{ 405, "Method Not Allowed", "Method not allowed: use GET.\n" },
	{ 431, "Request Header Fields Too Large", "Request head too large: keep it under 8 KiB.\n" },
	{ 503, "Service Unavailable", "Out of memory: try again.\n" },
};

static const struct answer *answer_for(int status)
{
	size_t i = 0;

	while (answers[i].status != status)
		i++;
	return &answers[i];
}

static void respond(struct td_exporter *x, int fd, int status, long long deadline)
{
	char head[256], *metrics = NULL;
	const struct answer *a;
	const char *body;
	int len;

	if (status == 200) {
		/* A copy, so a slow client never holds up a publish. */
		pthread_mutex_lock(&x->lock);
		metrics = strdup(x->text ? x->text : "");
		pthread_mutex_unlock(&x->lock);
		if (!metrics)
			status = 503;
	}
	a = answer_for(status);
	body = a->body ? a->body : metrics;
	len = snprintf(head, sizeof(head),
		       "HTTP/1.1 %d %s\r\n"
		       "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		       "Content-Length: %zu\r\n"
		       "%s"
		       "Connection: close\r\n\r\n",
		       status, a->reason, strlen(body), status == 405 ? "Allow: GET\r\n" : "");
	if (send_all(x, fd, head, (size_t)len, MSG_MORE, deadline))
		send_all(x, fd, body, strlen(body), 0, deadline);
	free(metrics);
}

static void serve_connection(struct td_exporter *x, int fd)
{
	long long deadline = now_ms() + EXCHANGE_TIMEOUT_MS;
	char req[REQUEST_MAX + 1];
	int status = read_request(x, fd, req, deadline);

	if (status < 0)
		return;
	respond(x, fd, status ? status : route(req), deadline);
}

static void *serve(void *arg)
{
	struct td_exporter *x = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = x->stop_fd, .events = POLLIN },
				       { .fd = x->listen_fd, .events = POLLIN } };
		int fd;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (!(p[1].revents & POLLIN))
			continue;
		fd = accept4(x->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			serve_connection(x, fd);
			close(fd);
		} else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
			poll(p, 1, ACCEPT_BACKOFF_MS);
		}
	}
	return NULL;
}

/* ---- the interface ---- */

static void exporter_free(struct td_exporter *x)
{
	if (x->listen_fd >= 0)
		close(x->listen_fd);
	if (x->stop_fd >= 0)
		close(x->stop_fd);
	pthread_mutex_destroy(&x->lock);
	free(x->text);
	free(x);
}

/* The thread, with every signal blocked: the agent's SIGINT/SIGTERM must
 * reach (and interrupt) its main thread, not this one. */
static int start_thread(struct td_exporter *x)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&x->thread, NULL, serve, x);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

struct td_exporter *td_exporter_start(const char *listen, char *err, size_t errlen)
{
	char host[HOST_MAX];
	struct td_exporter *x;
	long port;
	int rc;

	if (parse_listen(listen ? listen : "", host, &port, err, errlen) < 0)
		return NULL;
	x = calloc(1, sizeof(*x));
	if (!x) {
		snprintf(err, errlen, "out of memory starting the metrics exporter");
		return NULL;
	}
	x->stop_fd = -1;
	pthread_mutex_init(&x->lock, NULL);
	x->listen_fd = listen_on(listen, host, port, err, errlen);
	if (x->listen_fd < 0)
		goto fail;
	x->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (x->stop_fd < 0) {
		snprintf(err, errlen, "cannot start the metrics exporter: eventfd: %s", strerror(errno));
		goto fail;
	}
	rc = start_thread(x);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start the metrics exporter's thread: %s", strerror(-rc));
		goto fail;
	}
	return x;
fail:
	exporter_free(x);
	return NULL;
}

int td_exporter_publish(struct td_exporter *exporter, const struct td_run *const *runs,
			size_t nr_runs, const struct td_labels *labels,
			const struct td_agent_health *health)
{
	char *text = td_exposition_render(runs, nr_runs, labels, health), *old;

	if (!text)
		return -ENOMEM;
	pthread_mutex_lock(&exporter->lock);
	old = exporter->text;
	exporter->text = text;
	pthread_mutex_unlock(&exporter->lock);
	free(old);
	return 0;
}

void td_exporter_stop(struct td_exporter *exporter)
{
	uint64_t one = 1;
	ssize_t n;

	if (!exporter)
		return;
	/* Adding 1 to a fresh eventfd cannot fail (only a count near 2^64 does). */
	n = write(exporter->stop_fd, &one, sizeof(one));
	(void)n;
	pthread_join(exporter->thread, NULL);
	exporter_free(exporter);
}
