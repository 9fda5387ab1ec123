/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP for whoever serves over it (the agent's /metrics, MCP's Streamable
 * HTTP transport): one library, libmicrohttpd, behind one small interface.
 * This room owns the socket, TLS, the limits (body size, connections,
 * idle time) and the stop; it hands each whole request to a handler and
 * sends what the handler answers. It never knows what a request means.
 *
 * Each connection has a thread of its own, so a slow or stalled client
 * never holds up another, and a handler may block (a streamed answer
 * waits for what it streams). One address holds at most max_per_address
 * of them, so that one client opening connections and never finishing
 * its requests (slowloris) cannot take the others' places.
 */
#ifndef TOPDOWN_HTTPD_H
#define TOPDOWN_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TD_HTTPD_HOST_MAX 256
#define TD_HTTPD_MAX_HEADERS 32       /* request headers a handler sees; the rest are dropped */
#define TD_HTTPD_MAX_RESPONSE_HEADERS 4
#define TD_HTTPD_PEER_MAX 64          /* a numeric IPv4 or IPv6 address */

struct td_httpd_header {
	const char *name, *value;
};

/* One whole request: the strings live until the handler returns. */
struct td_httpd_request {
	const char *method;  /* "GET", "POST", ... as sent */
	const char *path;    /* without the query string */
	const char *version; /* "HTTP/1.1", "HTTP/1.0" */
	const struct td_httpd_header *headers;
	size_t nr_headers;
	const char *body;    /* NUL-terminated; "" without one */
	size_t body_len;
	const char *peer;    /* the client's address, numeric ("127.0.0.1"); NULL: unknown */
	int port;            /* the port the server listens on; 0: unknown */
	bool tls;            /* served over HTTPS */
};

/* The value of header name (case-insensitive), or NULL. */
const char *td_httpd_header(const struct td_httpd_request *req, const char *name);

/*
 * What a handler answers: a status with a body, or a stream. A stream's
 * read is called from the connection's thread, may block, and returns
 * the bytes it put in buf, 0 at the end, or -1 to cut the connection;
 * its end is called exactly once, when the stream finished or the client
 * went away (or, with no read at all, when the answer was never sent).
 */
struct td_httpd_response {
	int status;
	const char *content_type; /* static; NULL: none */
	struct {
		const char *name; /* static */
		char value[96];
	} headers[TD_HTTPD_MAX_RESPONSE_HEADERS];
	size_t nr_headers;
	char *body; /* malloc'd and taken; NULL: empty */
	size_t body_len;
	ssize_t (*read)(void *ctx, char *buf, size_t max);
	void (*end)(void *ctx);
	void *stream_ctx;
};

/* Adds a header; one over TD_HTTPD_MAX_RESPONSE_HEADERS is dropped (a bug). */
void td_httpd_add_header(struct td_httpd_response *resp, const char *name, const char *value);
/* status with a copy of text as the body; false when out of memory (then 503, no body). */
bool td_httpd_set_text(struct td_httpd_response *resp, int status, const char *content_type,
		       const char *text);
/* Frees the body and ends a stream that was never sent (for callers without a server). */
void td_httpd_response_release(struct td_httpd_response *resp);

typedef void (*td_httpd_handler_fn)(void *ctx, const struct td_httpd_request *req,
				    struct td_httpd_response *resp);

struct td_httpd_options {
	const char *listen;     /* "HOST:PORT", "[V6]:PORT" */
	const char *option;     /* the flag that named it, for messages: "--metrics-listen" */
	bool ephemeral_port;    /* port 0 is allowed: the kernel picks (tests) */
	const char *tls_cert;   /* PEM files: HTTPS when both are set */
	const char *tls_key;
	size_t max_body;        /* bytes; over it: 413 */
	size_t max_head;        /* bytes of request line and headers; over it: 431 */
	unsigned max_connections; /* open at once; the ones over it get 503 */
	unsigned max_per_address; /* open at once from one client address; the ones
				     over it are closed unanswered; 0: max_connections */
	unsigned timeout_s;     /* a connection idle this long is closed */
	bool close_each;        /* one request per connection (Connection: close) */
	td_httpd_handler_fn handler;
	void *ctx;
};

struct td_httpd;

/* Listens and serves until td_httpd_stop. NULL with err (bad address,
 * port in use, unreadable TLS files, out of memory). */
struct td_httpd *td_httpd_start(const struct td_httpd_options *opts, char *err, size_t errlen);
/* The port listened on (the kernel's pick for port 0). */
int td_httpd_port(const struct td_httpd *h);
/*
 * Stops taking connections and waits up to timeout_ms for the requests
 * being answered to finish. 0, or -ETIMEDOUT when some still run.
 */
int td_httpd_drain(struct td_httpd *h, int timeout_ms);
/* Closes every connection and frees h. NULL is fine. */
void td_httpd_stop(struct td_httpd *h);

/*
 * "HOST:PORT" or "[V6]:PORT" into host and port (1..65535, or 0 too when
 * ephemeral is allowed); option names the flag in err. -EINVAL with err.
 */
int td_httpd_parse_listen(const char *address, const char *option, bool ephemeral,
			  char host[TD_HTTPD_HOST_MAX], long *port, char *err, size_t errlen);

/* Whether host names this machine's loopback: "localhost", "127.0.0.1"
 * or "::1", as a listen host or an Origin's; nothing else counts. */
bool td_httpd_host_is_loopback(const char *host);

#endif
