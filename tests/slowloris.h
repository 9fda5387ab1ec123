/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A slowloris for the HTTP tests: many connections from 127.0.0.2 to a
 * server on 127.0.0.1, each sending the start of a request and then a
 * header line now and then, never the blank line that ends the head. The
 * good client connects from 127.0.0.1, so a per-address limit tells them
 * apart. Loopback only; every loop is bounded.
 */
#ifndef TOPDOWN_TESTS_SLOWLORIS_H
#define TOPDOWN_TESTS_SLOWLORIS_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else /* a cross build's sysroot has no valgrind, nor does valgrind run there */
#define RUNNING_ON_VALGRIND 0
#endif

#define SLOWLORIS_MAX 500

struct slowloris {
	int fds[SLOWLORIS_MAX];
	size_t n;
};

/*
 * Why the attack cannot be run here, or NULL when it can (then with
 * descriptors for SLOWLORIS_MAX connections and the test's own). Under
 * valgrind, which runs one thread at a time many times slower, a bound of
 * a second means nothing: the plain and ASan runs check it.
 */
static inline const char *slowloris_cannot_run(void)
{
	struct rlimit rl;

	if (RUNNING_ON_VALGRIND)
		return "under valgrind, one thread at a time: the time bound means nothing there";
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return "the descriptor limit cannot be read";
	if (rl.rlim_cur >= SLOWLORIS_MAX + 512)
		return NULL;
	rl.rlim_cur = SLOWLORIS_MAX + 512;
	if ((rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur) || setrlimit(RLIMIT_NOFILE, &rl))
		return "the descriptor limit is too low for the connections";
	return NULL;
}

/* Opens n connections (at most SLOWLORIS_MAX) from 127.0.0.2 to
 * 127.0.0.1:port, waits up to 2 s for them to be accepted, and sends
 * head on each that was. The number connected. */
static inline size_t slowloris_open(struct slowloris *s, int port, size_t n, const char *head)
{
	struct sockaddr_in from = { .sin_family = AF_INET }, to = {
		.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct pollfd *fds = calloc(SLOWLORIS_MAX, sizeof(*fds));
	size_t connected = 0;

	inet_pton(AF_INET, "127.0.0.2", &from.sin_addr);
	s->n = 0;
	for (size_t i = 0; i < n && i < SLOWLORIS_MAX; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (fd < 0)
			break;
		if (bind(fd, (struct sockaddr *)&from, sizeof(from)) ||
		    (connect(fd, (struct sockaddr *)&to, sizeof(to)) && errno != EINPROGRESS)) {
			close(fd);
			continue;
		}
		s->fds[s->n++] = fd;
	}
	for (size_t i = 0; fds && i < s->n; i++)
		fds[i] = (struct pollfd){ .fd = s->fds[i], .events = POLLOUT };
	for (int round = 0; fds && round < 20; round++) { /* 20 x 100 ms */
		size_t pending = 0;

		poll(fds, s->n, 100);
		for (size_t i = 0; i < s->n; i++) {
			int error = 0;
			socklen_t len = sizeof(error);

			if (fds[i].fd < 0)
				continue;
			if (!fds[i].revents) {
				pending++;
				continue;
			}
			getsockopt(fds[i].fd, SOL_SOCKET, SO_ERROR, &error, &len);
			if (!error && send(fds[i].fd, head, strlen(head), MSG_NOSIGNAL) > 0)
				connected++;
			fds[i].fd = -1;
		}
		if (!pending)
			break;
	}
	free(fds);
	return connected;
}

/* One more header line on every connection; the number the server still
 * holds open (those it closed read as the end, or fail). */
static inline size_t slowloris_trickle(struct slowloris *s)
{
	size_t open = 0;

	for (size_t i = 0; i < s->n; i++) {
		char byte;
		ssize_t got = recv(s->fds[i], &byte, 1, MSG_DONTWAIT | MSG_PEEK);

		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			continue; /* closed by the server */
		if (send(s->fds[i], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL | MSG_DONTWAIT) == 11 ||
		    errno == EAGAIN)
			open++;
	}
	return open;
}

static inline void slowloris_close(struct slowloris *s)
{
	for (size_t i = 0; i < s->n; i++)
		close(s->fds[i]);
	s->n = 0;
}

#endif
