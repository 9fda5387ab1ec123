// SPDX-License-Identifier: BSD-3-Clause
/*
 * The /metrics server, on the HTTP room (user/http): one request per
 * connection (Connection: close), each connection in a thread of its own,
 * so a slow or garbage client never holds up a scrape. The text comes
 * from td_exposition_render() (exposition.c) at each publish.
 *
 * GET /metrics (a query string is ignored) answers 200 with the text last
 * published, empty before the first. Any other path is 404, whatever the
 * method; /metrics with a method other than GET is 405. A request head
 * over HEAD_MAX bytes is 431, a malformed request 400 (libmicrohttpd
 * answers those two). A client idle for TIMEOUT_S is cut off. One
 * address holds at most MAX_PER_ADDRESS connections, so a client that
 * opens many and never finishes a request (slowloris) leaves the other
 * scrapers their places.
 *
 * The listen address must name a host: "127.0.0.1:9464" (loopback is the
 * safe choice: the gauges describe the host's processes), "[::1]:9464",
 * "localhost:9464" (the first of its addresses that binds, in the
 * resolver's order), or "0.0.0.0:9464" to listen on every interface.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter.h"
#include "httpd.h"

#define HEAD_MAX 16384       /* bytes of request line and headers */
#define TIMEOUT_S 2          /* a connection idle this long is closed */
#define MAX_CONNECTIONS 32   /* scrapers at once; more get 503 */
#define MAX_PER_ADDRESS 8    /* from one address at once; more are closed unanswered */

struct td_exporter {
	struct td_httpd *http;
	pthread_mutex_t lock;
	char *text; /* what scrapes get; NULL before the first publish; under lock */
};

static const char content_type[] = "text/plain; version=0.0.4; charset=utf-8";

static void serve(void *ctx, const struct td_httpd_request *req, struct td_httpd_response *resp)
{
	struct td_exporter *x = ctx;
	char *metrics;

	if (strcmp(req->path, "/metrics")) {
		td_httpd_set_text(resp, 404, content_type, "Not found: the metrics are at /metrics.\n");
		return;
	}
	if (strcmp(req->method, "GET")) {
		td_httpd_set_text(resp, 405, content_type, "Method not allowed: use GET.\n");
		td_httpd_add_header(resp, "Allow", "GET");
		return;
	}
	/* A copy, so a slow client never holds up a publish. */
	pthread_mutex_lock(&x->lock);
	metrics = strdup(x->text ? x->text : "");
	pthread_mutex_unlock(&x->lock);
	if (!metrics) {
		td_httpd_set_text(resp, 503, content_type, "Out of memory: try again.\n");
		return;
	}
	resp->status = 200;
	resp->content_type = content_type;
	resp->body = metrics;
	resp->body_len = strlen(metrics);
}

/* ---- the interface ---- */

static void exporter_free(struct td_exporter *x)
{
	td_httpd_stop(x->http);
	pthread_mutex_destroy(&x->lock);
	free(x->text);
	free(x);
}

struct td_exporter *td_exporter_start(const char *listen, char *err, size_t errlen)
{
	struct td_httpd_options o = {
		.listen = listen, .option = "--metrics-listen", .max_body = 0,
		.max_head = HEAD_MAX, .max_connections = MAX_CONNECTIONS,
		.max_per_address = MAX_PER_ADDRESS, .timeout_s = TIMEOUT_S,
		.close_each = true, .handler = serve,
	};
	struct td_exporter *x = calloc(1, sizeof(*x));

	if (!x) {
		snprintf(err, errlen, "out of memory starting the metrics exporter");
		return NULL;
	}
	pthread_mutex_init(&x->lock, NULL);
	o.ctx = x;
	x->http = td_httpd_start(&o, err, errlen);
	if (!x->http) {
		exporter_free(x);
		return NULL;
	}
	return x;
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
	if (exporter)
		exporter_free(exporter);
}
