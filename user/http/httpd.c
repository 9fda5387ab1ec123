// SPDX-License-Identifier: BSD-3-Clause
/*
 * libmicrohttpd, thread per connection. We make the listening socket
 * ourselves (getaddrinfo, bind, listen) so that the address errors say
 * what to do and port 0 can be reported back, then give it to MHD.
 *
 * A request's body is gathered here up to max_body; the handler runs
 * once it is whole. Connections over max_connections get a 503 from us
 * (MHD's own hard limit, a little higher, leaves room to say so instead
 * of closing them unanswered).
 *
 * Against clients that open connections and trickle their requests
 * (slowloris): MHD's per-address limit closes a connection over
 * max_per_address as soon as it is accepted, so one address cannot fill
 * the server; the timeout closes a connection idle for timeout_s (this
 * libmicrohttpd, 0.9.75, has no deadline for a whole head or body, only
 * that idle one). Each connection's thread waits with poll(), not
 * select(), so descriptors above FD_SETSIZE work, and the descriptor
 * limit is raised to cover every connection the server may hold.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "httpd.h"
#include "parse.h"

/* a burst of connections waits to be accepted (and the ones over the
 * limits closed) rather than having its SYNs dropped, retried a second later */
#define LISTEN_BACKLOG SOMAXCONN
#define SPARE_CONNECTIONS 16  /* beyond max_connections: answered 503, then closed */
#define STREAM_BLOCK 16384
#define TLS_FILE_MAX (1 << 20)
#define SPARE_FDS 256         /* beyond the connections: the store, BPF, pipes of collections */

struct td_httpd {
	struct MHD_Daemon *daemon;
	struct td_httpd_options opts;
	int listen_fd;            /* ours until MHD takes it; -1 after a drain closed it */
	int port;
	atomic_uint connections;  /* open now */
	atomic_uint requests;     /* being answered now (handler to the last byte sent) */
	char *tls_cert, *tls_key; /* the PEM text MHD reads from */
};

/* One request as it comes in. */
struct exchange {
	char *body;
	size_t len, cap;
	bool too_big;
	bool answered; /* refused from the head alone: what follows is dropped */
};

/* ---- the listen address ---- */

int td_httpd_parse_listen(const char *address, const char *option, bool ephemeral,
			  char host[TD_HTTPD_HOST_MAX], long *port, char *err, size_t errlen)
{
	const char *colon, *start = address, *end;
	char what[64];

	if (address[0] == '[') {
		start = address + 1;
		end = strchr(start, ']');
		if (!end || end[1] != ':') {
			snprintf(err, errlen, "bad %s '%s': write an IPv6 address as [ADDRESS]:PORT, e.g. [::1]:9464",
				 option, address);
			return -EINVAL;
		}
		colon = end + 1;
	} else {
		colon = strrchr(address, ':');
		if (!colon) {
			snprintf(err, errlen, "no port in %s '%s': write it as HOST:PORT, e.g. 127.0.0.1:9464",
				 option, address);
			return -EINVAL;
		}
		end = colon;
		if (memchr(address, ':', (size_t)(colon - address))) {
			snprintf(err, errlen, "bad %s '%s': put an IPv6 address in brackets, e.g. [::1]:9464",
				 option, address);
			return -EINVAL;
		}
	}
	if (end == start || end - start >= TD_HTTPD_HOST_MAX) {
		snprintf(err, errlen, "bad %s '%s': name the host to listen on, e.g. 127.0.0.1:9464 (0.0.0.0 for every interface)",
			 option, address);
		return -EINVAL;
	}
	memcpy(host, start, (size_t)(end - start));
	host[end - start] = '\0';
	snprintf(what, sizeof(what), "the %s port", option);
	return td_parse_int_range(colon + 1, what, ephemeral ? 0 : 1, 65535, port, err, errlen);
}

bool td_httpd_host_is_loopback(const char *host)
{
	return !strcasecmp(host, "localhost") || !strcmp(host, "127.0.0.1") ||
	       !strcmp(host, "::1") || !strcmp(host, "[::1]");
}

/* Why bind() or listen() failed, and what to do, for the usual cases. */
static const char *listen_problem(int error, char *buf, size_t len, const char *option)
{
	switch (error) {
	case EADDRINUSE:
		snprintf(buf, len, "the port is in use by another program; choose a free one with %s",
			 option);
		return buf;
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
static int listen_on(const struct td_httpd_options *o, const char *host, long port, char *err,
		     size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *addrs, *a;
	char service[8], why[128];
	int fd = -1, saved = 0, one = 1, rc;

	snprintf(service, sizeof(service), "%ld", port);
	rc = getaddrinfo(host, service, &hints, &addrs);
	if (rc) {
		snprintf(err, errlen, "cannot resolve the host of %s '%s': %s; use an address such as 127.0.0.1",
			 o->option, o->listen, gai_strerror(rc));
		return -1;
	}
	for (a = addrs; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) {
			saved = saved ? saved : errno;
			continue;
		}
		/* A restarted server must not wait out the old sockets' TIME_WAIT. */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, a->ai_addr, a->ai_addrlen) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
			saved = saved ? saved : errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(addrs);
	if (fd >= 0)
		return fd;
	snprintf(err, errlen, "cannot listen on %s: %s", o->listen,
		 listen_problem(saved, why, sizeof(why), o->option));
	return -1;
}

static int bound_port(int fd)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		return -1;
	if (sa.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
	return ntohs(((struct sockaddr_in *)&sa)->sin_port);
}

/* ---- requests and responses ---- */

const char *td_httpd_header(const struct td_httpd_request *req, const char *name)
{
	for (size_t i = 0; i < req->nr_headers; i++)
		if (!strcasecmp(req->headers[i].name, name))
			return req->headers[i].value;
	return NULL;
}

void td_httpd_add_header(struct td_httpd_response *resp, const char *name, const char *value)
{
	if (resp->nr_headers == TD_HTTPD_MAX_RESPONSE_HEADERS)
		return;
	resp->headers[resp->nr_headers].name = name;
	snprintf(resp->headers[resp->nr_headers].value, sizeof(resp->headers[0].value), "%s", value);
	resp->nr_headers++;
}

bool td_httpd_set_text(struct td_httpd_response *resp, int status, const char *content_type,
		       const char *text)
{
	free(resp->body);
	resp->body = strdup(text);
	resp->body_len = resp->body ? strlen(text) : 0;
	resp->status = resp->body ? status : MHD_HTTP_SERVICE_UNAVAILABLE;
	resp->content_type = resp->body ? content_type : NULL;
	return resp->body;
}

void td_httpd_response_release(struct td_httpd_response *resp)
{
	free(resp->body);
	resp->body = NULL;
	if (resp->end)
		resp->end(resp->stream_ctx);
	resp->read = NULL;
	resp->end = NULL;
}

struct header_list {
	struct td_httpd_header items[TD_HTTPD_MAX_HEADERS];
	size_t n;
};

static enum MHD_Result add_request_header(void *cls, enum MHD_ValueKind kind, const char *key,
					  const char *value)
{
	struct header_list *list = cls;

	(void)kind;
	if (list->n < TD_HTTPD_MAX_HEADERS)
		list->items[list->n++] = (struct td_httpd_header){ key, value ? value : "" };
	return MHD_YES;
}

/* MHD's side of a stream: the handler's read, until it says the end. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct td_httpd_response *resp = cls;
	ssize_t n = resp->read(resp->stream_ctx, buf, max);

	(void)pos;
	if (n > 0)
		return n;
	return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls)
{
	struct td_httpd_response *resp = cls;

	resp->end(resp->stream_ctx);
	free(resp);
}

/* The MHD response for what the handler answered; takes resp's body or stream. */
static struct MHD_Response *mhd_response(struct td_httpd *h, struct td_httpd_response *resp)
{
	struct MHD_Response *r;

	if (resp->read) {
		struct td_httpd_response *kept = malloc(sizeof(*kept));

		if (!kept) {
			td_httpd_response_release(resp);
			return NULL;
		}
		*kept = *resp;
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_read,
						      kept, stream_free);
		if (!r)
			stream_free(kept);
	} else {
		r = MHD_create_response_from_buffer(resp->body_len, resp->body ? resp->body : "",
						    resp->body ? MHD_RESPMEM_MUST_FREE :
						    MHD_RESPMEM_PERSISTENT);
		if (!r)
			free(resp->body);
	}
	resp->body = NULL;
	if (!r)
		return NULL;
	if (resp->content_type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
	for (size_t i = 0; i < resp->nr_headers; i++)
		MHD_add_response_header(r, resp->headers[i].name, resp->headers[i].value);
	if (h->opts.close_each)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	return r;
}

static enum MHD_Result queue(struct td_httpd *h, struct MHD_Connection *conn,
			     struct td_httpd_response *resp)
{
	struct MHD_Response *r = mhd_response(h, resp);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO; /* out of memory: MHD closes the connection */
	ret = MHD_queue_response(conn, (unsigned)resp->status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result queue_text(struct td_httpd *h, struct MHD_Connection *conn, int status,
				  const char *text)
{
	struct td_httpd_response resp = { 0 };

	td_httpd_set_text(&resp, status, "text/plain; charset=utf-8", text);
	return queue(h, conn, &resp);
}

static int grow(struct exchange *x, const char *data, size_t n, size_t max)
{
	if (x->len + n > max) {
		x->too_big = true;
		return 0;
	}
	if (x->len + n + 1 > x->cap) {
		size_t cap = x->cap ? x->cap : 4096;
		char *grown;

		while (cap < x->len + n + 1)
			cap *= 2;
		if (!(grown = realloc(x->body, cap)))
			return -ENOMEM;
		x->body = grown;
		x->cap = cap;
	}
	memcpy(x->body + x->len, data, n);
	x->len += n;
	x->body[x->len] = '\0';
	return 0;
}

/* The client's address as text, or NULL when MHD does not say. */
static const char *peer_address(struct MHD_Connection *conn, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = info ? info->client_addr : NULL;
	socklen_t salen = sa && sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
			  sizeof(struct sockaddr_in);

	if (!sa || getnameinfo(sa, salen, buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST))
		return NULL;
	return buf;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct td_httpd *h = cls;
	struct exchange *x = *req_cls;
	struct td_httpd_response resp = { 0 };
	struct header_list headers = { .n = 0 };
	struct td_httpd_request req;
	const char *length;
	char too_big[96], peer[TD_HTTPD_PEER_MAX];

	snprintf(too_big, sizeof(too_big), "Request body too large: keep it under %zu bytes.\n",
		 h->opts.max_body);
	if (!x) {
		/* the head is in: refuse what we can before any body is read */
		if (!(x = calloc(1, sizeof(*x))))
			return MHD_NO;
		*req_cls = x;
		atomic_fetch_add(&h->requests, 1);
		x->answered = true;
		if (atomic_load(&h->connections) > h->opts.max_connections)
			return queue_text(h, conn, MHD_HTTP_SERVICE_UNAVAILABLE,
					  "Too many connections: try again shortly.\n");
		length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (length && strtoull(length, NULL, 10) > h->opts.max_body)
			return queue_text(h, conn, MHD_HTTP_CONTENT_TOO_LARGE, too_big);
		x->answered = false;
		return MHD_YES;
	}
	if (*upload_size) {
		/* a chunked body over the limit is read to its end and dropped */
		if (!x->answered && !x->too_big && grow(x, upload, *upload_size, h->opts.max_body) < 0)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	if (x->answered)
		return MHD_YES;
	if (x->too_big)
		return queue_text(h, conn, MHD_HTTP_CONTENT_TOO_LARGE, too_big);
	MHD_get_connection_values(conn, MHD_HEADER_KIND, add_request_header, &headers);
	req = (struct td_httpd_request){
		.method = method, .version = version, .headers = headers.items,
		.nr_headers = headers.n, .body = x->body ? x->body : "", .body_len = x->len,
	};
	/* MHD hands us the path without the query string */
	req.path = url;
	req.peer = peer_address(conn, peer, sizeof(peer));
	req.port = h->port;
	req.tls = h->tls_cert != NULL;
	h->opts.handler(h->opts.ctx, &req, &resp);
	return queue(h, conn, &resp);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode code)
{
	struct td_httpd *h = cls;
	struct exchange *x = *req_cls;

	(void)conn;
	(void)code;
	if (!x)
		return;
	free(x->body);
	free(x);
	*req_cls = NULL;
	atomic_fetch_sub(&h->requests, 1);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct td_httpd *h = cls;

	(void)conn;
	(void)socket_ctx;
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		atomic_fetch_add(&h->connections, 1);
	else
		atomic_fetch_sub(&h->connections, 1);
}

/* ---- start and stop ---- */

static char *read_pem(const char *path, const char *option, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t n = 0;

	if (f) {
		text = malloc(TLS_FILE_MAX + 1);
		if (text)
			n = fread(text, 1, TLS_FILE_MAX, f);
		fclose(f);
	}
	if (!f || !text || !n || n == TLS_FILE_MAX) {
		snprintf(err, errlen, "cannot read %s '%s': %s; give a PEM file under 1 MiB", option,
			 path, !f ? strerror(errno) : !text ? "out of memory" : "empty or too large");
		free(text);
		return NULL;
	}
	text[n] = '\0';
	return text;
}

static void httpd_free(struct td_httpd *h)
{
	if (h->daemon)
		MHD_stop_daemon(h->daemon); /* closes the listening socket too */
	else if (h->listen_fd >= 0)
		close(h->listen_fd);
	free(h->tls_cert);
	free(h->tls_key);
	free(h);
}

/* Raises the soft descriptor limit, as far as the hard one allows, to
 * hold connections more than the process has open now: a connection
 * refused for want of a descriptor is refused to everyone. */
static void make_room_for(unsigned connections)
{
	struct rlimit rl;
	rlim_t want;
	int fd = dup(STDERR_FILENO); /* the lowest free descriptor: about how many are open */

	if (fd >= 0)
		close(fd);
	want = (rlim_t)(fd > 0 ? fd : 0) + connections + SPARE_FDS;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* The daemon, its threads with every signal blocked: SIGINT and SIGTERM
 * belong to the main thread, which decides what stopping means. */
static struct MHD_Daemon *start_daemon(struct td_httpd *h)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_ITC;
	unsigned limit = h->opts.max_connections + SPARE_CONNECTIONS;
	unsigned per_address = h->opts.max_per_address ? h->opts.max_per_address :
			       h->opts.max_connections;
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, h->tls_cert },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, h->tls_key },
		{ MHD_OPTION_END, 0, NULL },
	};
	struct MHD_Daemon *d;
	sigset_t all, old;

	if (h->tls_cert)
		flags |= MHD_USE_TLS;
	else
		tls[0].option = MHD_OPTION_END;
	if (MHD_is_feature_supported(MHD_FEATURE_POLL) == MHD_YES)
		flags |= MHD_USE_POLL;
	make_room_for(limit);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
			     MHD_OPTION_LISTEN_SOCKET, h->listen_fd,
			     MHD_OPTION_CONNECTION_TIMEOUT, h->opts.timeout_s,
			     MHD_OPTION_CONNECTION_LIMIT, limit,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, h->opts.max_head,
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
			     MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
			     MHD_OPTION_ARRAY, tls,
			     MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return d;
}

struct td_httpd *td_httpd_start(const struct td_httpd_options *opts, char *err, size_t errlen)
{
	char host[TD_HTTPD_HOST_MAX];
	struct td_httpd *h;
	long port;

	if (td_httpd_parse_listen(opts->listen ? opts->listen : "", opts->option,
				  opts->ephemeral_port, host, &port, err, errlen) < 0)
		return NULL;
	if (!opts->tls_cert != !opts->tls_key) {
		snprintf(err, errlen, "HTTPS needs both --tls-cert and --tls-key: give the other one too");
		return NULL;
	}
	if (opts->tls_cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		snprintf(err, errlen, "this libmicrohttpd was built without TLS: drop --tls-cert and --tls-key, or put a TLS proxy in front");
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory starting the HTTP server on %s", opts->listen);
		return NULL;
	}
	h->opts = *opts;
	h->listen_fd = -1;
	if (opts->tls_cert &&
	    (!(h->tls_cert = read_pem(opts->tls_cert, "--tls-cert", err, errlen)) ||
	     !(h->tls_key = read_pem(opts->tls_key, "--tls-key", err, errlen))))
		goto fail;
	h->listen_fd = listen_on(opts, host, port, err, errlen);
	if (h->listen_fd < 0)
		goto fail;
	h->port = bound_port(h->listen_fd);
	h->daemon = start_daemon(h);
	if (!h->daemon) {
		snprintf(err, errlen, "cannot start the HTTP server on %s: %s%s", opts->listen,
			 errno ? strerror(errno) : "libmicrohttpd refused its options",
			 h->tls_cert ? " (is the key the certificate's, both PEM?)" : "");
		goto fail;
	}
	return h;
fail:
	httpd_free(h);
	return NULL;
}

int td_httpd_port(const struct td_httpd *h)
{
	return h->port;
}

int td_httpd_drain(struct td_httpd *h, int timeout_ms)
{
	struct timespec pause = { 0, 20 * 1000000 };
	MHD_socket fd = MHD_quiesce_daemon(h->daemon);

	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	for (int waited = 0; atomic_load(&h->requests); waited += 20) {
		if (waited >= timeout_ms)
			return -ETIMEDOUT;
		nanosleep(&pause, NULL);
	}
	return 0;
}

void td_httpd_stop(struct td_httpd *h)
{
	if (h)
		httpd_free(h);
}
