/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MCP over Streamable HTTP (protocol 2025-03-26 and later): one endpoint,
 * /mcp. A POST carries one JSON-RPC message, which the same dispatcher
 * as the stdio loop answers (td_mcp_handle_line), in the session the
 * Mcp-Session-Id header names: each session is a server of its own
 * (negotiated version, log level, its running collection). The answer is
 * application/json, or an SSE stream when the client accepts one and
 * notifications come with it (progress, logs). DELETE ends a session;
 * GET is 405: we offer no stream the server starts.
 *
 * The HTTP itself (sockets, TLS, limits) is user/http's; this file
 * decides what each request gets, as a pure function of the request and
 * the sessions, so tests and the fuzzer call td_mcp_http_handle directly.
 */
#ifndef TOPDOWN_MCP_STREAMABLE_H
#define TOPDOWN_MCP_STREAMABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "httpd.h"
#include "server.h"

#define TD_MCP_HTTP_DEFAULT_LISTEN "127.0.0.1:8000"
#define TD_MCP_HTTP_DEFAULT_SESSIONS 64
#define TD_MCP_HTTP_DEFAULT_IDLE_NS (30ull * 60 * 1000000000)

struct td_mcp_http_options {
	struct td_mcp_options mcp; /* what every session's server gets */
	const char *listen;        /* HOST:PORT, for the Origin check and the token rule */
	const char *token;         /* the bearer token clients must send; NULL: none */
	unsigned max_sessions;     /* 0: the default. A client (an address; with a token,
				      every client) holds a quarter of them at most: a new
				      one over that, or over the total, ends the longest
				      idle session (the client's own, or anyone's); 503
				      only when every one is in use */
	uint64_t session_idle_ns;  /* a session unused this long ends; 0: the default */
	const char *option_prefix; /* how errors name the options: NULL for mcp-serve's
				      --listen and --token-file, "mcp-" for the agent's */
};

struct td_mcp_http;

/*
 * The sessions' keeper. Refuses (NULL, err) a listen address that is not
 * loopback without a token: anyone who reaches the port could then read
 * the runs, and with --allow-collect profile the host.
 */
struct td_mcp_http *td_mcp_http_new(const struct td_mcp_http_options *o, char *err,
				    size_t errlen);
void td_mcp_http_free(struct td_mcp_http *h);

/* Answers one request (a td_httpd_handler_fn; ctx is the td_mcp_http). */
void td_mcp_http_handle(void *ctx, const struct td_httpd_request *req,
			struct td_httpd_response *resp);

/*
 * Listens for h: http names the TLS files and how to word address errors
 * (option, ephemeral_port); the address is h's, and the handler, the
 * limits and the connections (a few per session) are set here. NULL with
 * err when it cannot start.
 */
struct td_httpd *td_mcp_http_listen(struct td_mcp_http *h, struct td_httpd_options *http,
				    char *err, size_t errlen);
/* Tells the URL served on stderr: "WHO: serving MCP at http://HOST:PORT/mcp". */
void td_mcp_http_announce(const struct td_mcp_http *h, const struct td_httpd *server,
			  const char *who);
/* Lets the requests being answered finish (the longest collection, and a
 * grace), then stops server. NULL is fine. */
void td_mcp_http_close(struct td_mcp_http *h, struct td_httpd *server, const char *who);

/*
 * mcp-serve's loop: td_mcp_http_listen, then SIGTERM or SIGINT, then
 * td_mcp_http_close; 0, or -errno with err when it cannot start.
 */
int td_mcp_http_serve(struct td_mcp_http *h, struct td_httpd_options *http, char *err,
		      size_t errlen);

/* The bearer token in path: its first line, at least 16 characters, the
 * file readable by its owner only. malloc'd into *token; -errno with err,
 * which names the file as option ("--token-file") does. */
int td_mcp_http_read_token(const char *path, const char *option, char **token, char *err,
			   size_t errlen);

/* The checks, alone: whether a browser page from origin may call a server
 * listening on listen_host and port, over HTTPS when tls: the scheme and
 * the port must be the server's (80 and 443 when the Origin names none),
 * the host its listen host or a loopback name (no Origin: not a browser,
 * allowed); and whether an Authorization header carries token (in
 * constant time). */
bool td_mcp_http_origin_allowed(const char *origin, bool tls, const char *listen_host, int port);
bool td_mcp_http_token_matches(const char *authorization, const char *token);

#endif
