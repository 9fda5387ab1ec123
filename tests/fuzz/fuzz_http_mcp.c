// SPDX-License-Identifier: BSD-3-Clause
/*
 * The Streamable HTTP request handler (mcp/streamable.c) without sockets:
 * the input is a method line, header lines and a body, split at the
 * first empty line. Every input goes to one keeper, so the sessions
 * inputs open live on (up to its limit: the 503 path) and the table's
 * expiry runs; a random session id takes the 404 path. collect_topdown
 * stays refused: no child processes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "httpd.h"
#include "streamable.h"

static struct td_mcp_http *keeper;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct td_httpd_header headers[TD_HTTPD_MAX_HEADERS];
	struct td_httpd_request req = { .path = "/mcp", .version = "HTTP/1.1", .headers = headers };
	struct td_httpd_response resp = { 0 };
	char *text = malloc(size + 1), *line, *next, *body;

	if (!keeper) {
		struct td_mcp_http_options o = { .listen = "127.0.0.1:0", .max_sessions = 4,
						 .mcp.db = "/nonexistent/fuzz.db" };
		char err[256];

		keeper = td_mcp_http_new(&o, err, sizeof(err));
		if (!keeper)
			abort();
	}
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	body = strstr(text, "\n\n");
	if (body) {
		*body = '\0';
		body += 2;
	}
	req.body = body ? body : "";
	req.body_len = body ? size - (size_t)(body - text) : 0;
	next = strchr(text, '\n');
	if (next)
		*next++ = '\0';
	req.method = text;
	for (line = next; line && *line && req.nr_headers < TD_HTTPD_MAX_HEADERS; line = next) {
		char *colon = strchr(line, ':');

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!colon)
			continue;
		*colon = '\0';
		headers[req.nr_headers++] = (struct td_httpd_header){ line, colon + 1 + (colon[1] == ' ') };
	}
	td_mcp_http_handle(keeper, &req, &resp);
	if (resp.read) {
		char buf[4096];

		while (resp.read(resp.stream_ctx, buf, sizeof(buf)) > 0)
			;
	}
	td_httpd_response_release(&resp);
	free(text);
	return 0;
}
