// SPDX-License-Identifier: BSD-3-Clause
/*
 * The Streamable HTTP transport: the checks every request passes, the
 * sessions, and the answer's framing (mcp/streamable.h).
 *
 * Threads: each connection has one (user/http), so two requests of one
 * session can run at once: a tools/call streaming a collection's
 * progress, and the notifications/cancelled that ends it. A session's
 * server is not thread-safe, so each dispatch holds the session's lock;
 * a stream waits for the collection's output without it, on copies of
 * the child's pipes, and takes it only to step the collection.
 *
 * While the lock is held, what the server sends goes to the outbox of
 * the request holding it; a message sent with no request listening (a
 * log line of a cancelled collection) is dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "mcp.h"
#include "streamable.h"

#define SESSION_ID_BYTES 16
#define KEEPALIVE_MS 1000     /* an SSE comment this often keeps a quiet stream open */
#define TOKEN_MIN 16
#define TOKEN_MAX 4096
#define DRAIN_GRACE_MS 10000  /* on SIGTERM: a collection's longest run, and this */
#define HTTP_MAX_HEAD 32768   /* request line and headers */
/* An idle connection is closed after this: a stream writes a comment each
 * second and a request being answered is not idle, so only a quiet or
 * stalled client is cut, and its place comes back soon. */
#define HTTP_TIMEOUT_S 15
#define HTTP_CONNECTIONS_PER_SESSION 4 /* a stream, a cancel, a retry... */
#define HTTP_ADDRESS_SHARE 4  /* one address holds at most this fraction of the connections */

static const char json_mime[] = "application/json";

/* The messages the server sent while a request held its session. */
struct outbox {
	char **texts;
	size_t n, cap;
	bool response;   /* one of them answers the request */
	bool overflowed; /* one was lost (out of memory) */
};

struct session {
	char id[2 * SESSION_ID_BYTES + 1];
	char client[TD_HTTPD_PEER_MAX]; /* who started it: the address, or the token's mark */
	struct td_mcp_server *server;
	pthread_mutex_t lock;    /* the server answers one thing at a time */
	struct outbox *out;      /* under lock: where the server's messages go */
	int64_t last_used_ns;    /* under the table's lock, as are the two below */
	unsigned users;          /* requests holding it */
	bool ended;              /* out of the table (DELETE, expiry): freed by its last user */
};

struct td_mcp_http {
	struct td_mcp_http_options o;
	char host[TD_HTTPD_HOST_MAX]; /* of the listen address */
	int port;                     /* of the listen address; 0: the kernel's pick, in each request */
	unsigned per_client;          /* sessions one client may hold */
	bool tls;                     /* served as https */
	pthread_mutex_t lock;         /* the table */
	struct session **sessions;    /* o.max_sessions slots, NULL when free */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the checks ---- */

bool td_mcp_http_origin_allowed(const char *origin, bool tls, const char *listen_host, int port)
{
	const char *scheme = tls ? "https://" : "http://", *start, *end;
	char host[TD_HTTPD_HOST_MAX], *rest;
	long given = tls ? 443 : 80;

	if (!origin)
		return true;
	if (strncasecmp(origin, scheme, strlen(scheme)))
		return false; /* another scheme, "null" (a sandboxed page, a file), garbage */
	start = origin + strlen(scheme);
	if (*start == '[') {
		start++;
		end = strchr(start, ']');
	} else {
		end = start + strcspn(start, ":/");
	}
	if (!end || end == start || end - start >= (long)sizeof(host))
		return false;
	memcpy(host, start, (size_t)(end - start));
	host[end - start] = '\0';
	end += *end == ']';
	if (*end == ':') {
		errno = 0;
		given = strtol(end + 1, &rest, 10);
		if (errno || rest == end + 1 || (*rest && *rest != '/'))
			return false;
	} else if (*end && *end != '/') {
		return false;
	}
	return given == port &&
	       (td_httpd_host_is_loopback(host) || !strcasecmp(host, listen_host));
}

bool td_mcp_http_token_matches(const char *authorization, const char *token)
{
	size_t want = strlen(token), given_len;
	const char *given;
	unsigned char diff;

	if (!authorization || strncasecmp(authorization, "Bearer ", 7))
		return false;
	given = authorization + 7 + strspn(authorization + 7, " ");
	given_len = strlen(given);
	/* every byte of the token is looked at, whatever was sent */
	diff = given_len != want;
	for (size_t i = 0; i < want; i++)
		diff |= (unsigned char)token[i] ^ (unsigned char)given[i < given_len ? i : 0];
	return !diff;
}

/* Whether a header's list (Accept) names type; "*" parts are not read as it. */
static bool lists_type(const char *list, const char *type)
{
	size_t len = strlen(type);

	while (list && *list) {
		list += strspn(list, " \t,");
		if (!strncasecmp(list, type, len) && strchr(" \t;,", list[len]))
			return true;
		list = strchr(list, ',');
	}
	return false;
}

/* No Accept, or any type at all, is a plain HTTP client: it gets JSON. */
static bool accepts_json(const char *accept)
{
	return !accept || lists_type(accept, json_mime) || lists_type(accept, "application/*") ||
	       lists_type(accept, "*/*");
}

static bool is_json_type(const char *content_type)
{
	return content_type && lists_type(content_type, json_mime) &&
	       !strchr(content_type, ','); /* one type, parameters allowed */
}

/* ---- answers ---- */

/* status with a JSON-RPC error as the body (id null): what HTTP clients
 * and MCP clients both can read. */
static void refuse(struct td_httpd_response *resp, int status, int code, const char *message)
{
	json_t *error = td_rpc_error(NULL, code, message, NULL);
	char *text = error ? json_dumps(error, JSON_COMPACT) : NULL;

	json_decref(error);
	resp->status = text ? status : 503;
	resp->content_type = text ? json_mime : NULL;
	resp->body = text;
	resp->body_len = text ? strlen(text) : 0;
}

static void outbox_release(struct outbox *out)
{
	for (size_t i = 0; i < out->n; i++)
		free(out->texts[i]);
	free(out->texts);
	memset(out, 0, sizeof(*out));
}

/* The server's write callback: into the outbox of whoever holds the session. */
static int session_write(void *ctx, const char *text, size_t len)
{
	struct session *ss = ctx;
	struct outbox *out = ss->out;
	char *copy;

	if (!out)
		return 0;
	if (out->n == out->cap) {
		size_t cap = out->cap ? 2 * out->cap : 8;
		char **grown = realloc(out->texts, cap * sizeof(*grown));

		if (!grown) {
			out->overflowed = true;
			return 0;
		}
		out->texts = grown;
		out->cap = cap;
	}
	if (!(copy = strndup(text, len))) {
		out->overflowed = true;
		return 0;
	}
	if (!td_rpc_text_is_notification(copy))
		out->response = true;
	out->texts[out->n++] = copy;
	return 0;
}

/* "event: message" records, the notifications before the response (a
 * debug log line about the answer comes after it otherwise). */
static char *sse_records(const struct outbox *out, size_t from)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = from; i < out->n; i++)
			if (td_rpc_text_is_notification(out->texts[i]) == !pass)
				fprintf(f, "event: message\ndata: %s\n\n", out->texts[i]);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

static void answer(struct td_httpd_response *resp, const struct outbox *out, bool sse)
{
	char *text = NULL;

	if (out->overflowed) {
		refuse(resp, 503, TD_RPC_INTERNAL_ERROR, "out of memory answering: try again");
		return;
	}
	if (sse) {
		text = sse_records(out, 0);
		resp->content_type = "text/event-stream";
	} else {
		for (size_t i = 0; i < out->n && !text; i++)
			if (!td_rpc_text_is_notification(out->texts[i]))
				text = strdup(out->texts[i]);
		resp->content_type = json_mime;
	}
	if (!text) {
		refuse(resp, 503, TD_RPC_INTERNAL_ERROR, "out of memory answering: try again");
		return;
	}
	resp->status = 200;
	resp->body = text;
	resp->body_len = strlen(text);
	if (sse)
		td_httpd_add_header(resp, "Cache-Control", "no-cache");
}

/* ---- sessions ---- */

static void session_free(struct session *ss)
{
	td_mcp_server_free(ss->server);
	pthread_mutex_destroy(&ss->lock);
	free(ss);
	/* A session's store connection and answers were allocated by the
	 * threads of its connections, in glibc arenas that keep what is freed:
	 * handing the free pages back keeps the server's RSS at its resting
	 * size from one burst of sessions to the next (bench_mcp_http.sh). */
	malloc_trim(0);
}

/* Ends the sessions unused for longer than the idle limit. Table locked. */
static void expire(struct td_mcp_http *h)
{
	int64_t now = now_ns();

	for (unsigned i = 0; i < h->o.max_sessions; i++) {
		struct session *ss = h->sessions[i];

		if (ss && !ss->users && now - ss->last_used_ns > (int64_t)h->o.session_idle_ns) {
			h->sessions[i] = NULL;
			session_free(ss);
		}
	}
}

/* The session named id, held (release it with session_put); NULL if none. */
static struct session *session_get(struct td_mcp_http *h, const char *id)
{
	struct session *found = NULL;

	pthread_mutex_lock(&h->lock);
	expire(h);
	for (unsigned i = 0; i < h->o.max_sessions && !found; i++)
		if (h->sessions[i] && !strcmp(h->sessions[i]->id, id))
			found = h->sessions[i];
	if (found) {
		found->users++;
		found->last_used_ns = now_ns();
	}
	pthread_mutex_unlock(&h->lock);
	return found;
}

static void session_put(struct td_mcp_http *h, struct session *ss)
{
	bool gone;

	pthread_mutex_lock(&h->lock);
	ss->last_used_ns = now_ns();
	gone = --ss->users == 0 && ss->ended;
	pthread_mutex_unlock(&h->lock);
	if (gone)
		session_free(ss);
}

/* Takes ss out of the table: nobody finds it again, its last user frees it. */
static void session_end(struct td_mcp_http *h, struct session *ss)
{
	pthread_mutex_lock(&h->lock);
	for (unsigned i = 0; i < h->o.max_sessions; i++)
		if (h->sessions[i] == ss)
			h->sessions[i] = NULL;
	ss->ended = true;
	pthread_mutex_unlock(&h->lock);
}

/*
 * A place for a session of client, table locked: a free slot, or one
 * freed by ending a session nobody is using. A client at its cap gives up
 * its own longest idle session; else, with the table full, the longest
 * idle session of anyone ends. Ended sessions go to *gone for the caller
 * to free unlocked; the slot, or max_sessions when every candidate is in
 * use.
 */
static unsigned make_room(struct td_mcp_http *h, const char *client, struct session **gone)
{
	unsigned mine = 0, slot = h->o.max_sessions, oldest = h->o.max_sessions,
		 oldest_mine = h->o.max_sessions, victim;

	*gone = NULL;
	for (unsigned i = 0; i < h->o.max_sessions; i++) {
		struct session *ss = h->sessions[i];

		if (!ss) {
			slot = slot < h->o.max_sessions ? slot : i;
			continue;
		}
		if (!ss->users && (oldest == h->o.max_sessions ||
				   ss->last_used_ns < h->sessions[oldest]->last_used_ns))
			oldest = i;
		if (strcmp(ss->client, client))
			continue;
		mine++;
		if (!ss->users && (oldest_mine == h->o.max_sessions ||
				   ss->last_used_ns < h->sessions[oldest_mine]->last_used_ns))
			oldest_mine = i;
	}
	if (mine < h->per_client && slot < h->o.max_sessions)
		return slot;
	victim = mine >= h->per_client ? oldest_mine : oldest;
	if (victim < h->o.max_sessions) {
		*gone = h->sessions[victim];
		h->sessions[victim] = NULL;
		(*gone)->ended = true;
	}
	return victim;
}

/* A new session of client, held, in a free slot; NULL with *status 503
 * when no slot can be freed, 500 when out of randomness or memory. */
static struct session *session_new(struct td_mcp_http *h, const char *client, int *status)
{
	unsigned char random[SESSION_ID_BYTES];
	struct session *ss = calloc(1, sizeof(*ss)), *gone = NULL;
	unsigned slot;

	*status = 500;
	if (!ss || getrandom(random, sizeof(random), 0) != sizeof(random))
		goto fail;
	for (size_t i = 0; i < sizeof(random); i++)
		snprintf(ss->id + 2 * i, 3, "%02x", random[i]);
	snprintf(ss->client, sizeof(ss->client), "%s", client);
	pthread_mutex_init(&ss->lock, NULL);
	ss->server = td_mcp_server_new(&h->o.mcp, session_write, ss);
	if (!ss->server) {
		pthread_mutex_destroy(&ss->lock);
		goto fail;
	}
	ss->users = 1;
	pthread_mutex_lock(&h->lock);
	expire(h);
	slot = make_room(h, client, &gone);
	if (slot < h->o.max_sessions) {
		ss->last_used_ns = now_ns();
		h->sessions[slot] = ss;
	}
	pthread_mutex_unlock(&h->lock);
	if (gone)
		session_free(gone); /* nobody used it: no request holds it */
	if (slot < h->o.max_sessions)
		return ss;
	*status = 503;
	session_free(ss);
	return NULL;
fail:
	free(ss);
	return NULL;
}

/* ---- a collection's answer, streamed ---- */

/*
 * Waits up to wait_ms for the collection answering id to have output or
 * progress due, then steps it, what it sends going to out. false once no
 * collection answers id any more (it answered, or was cancelled).
 */
static bool pump(struct session *ss, const json_t *id, struct outbox *out, int wait_ms)
{
	struct pollfd fds[2], copies[2];
	size_t n;
	int timeout;
	bool running;

	pthread_mutex_lock(&ss->lock);
	if (!td_mcp_collect_answers(ss->server, id)) {
		pthread_mutex_unlock(&ss->lock);
		return false;
	}
	n = td_mcp_collect_pollfds(ss->server, fds, 2);
	timeout = td_mcp_collect_timeout_ms(ss->server);
	/* copies: a cancel in another request closes the originals meanwhile */
	for (size_t i = 0; i < n; i++) {
		copies[i] = fds[i];
		copies[i].fd = fcntl(fds[i].fd, F_DUPFD_CLOEXEC, 0);
	}
	pthread_mutex_unlock(&ss->lock);
	poll(copies, n, timeout < 0 || timeout > wait_ms ? wait_ms : timeout);
	for (size_t i = 0; i < n; i++)
		if (copies[i].fd >= 0)
			close(copies[i].fd);

	pthread_mutex_lock(&ss->lock);
	if (td_mcp_collect_answers(ss->server, id)) {
		n = td_mcp_collect_pollfds(ss->server, fds, 2);
		poll(fds, n, 0);
		ss->out = out;
		td_mcp_collect_step(ss->server, fds, n);
		ss->out = NULL;
	}
	running = td_mcp_collect_answers(ss->server, id);
	pthread_mutex_unlock(&ss->lock);
	return running;
}

struct stream {
	struct td_mcp_http *h;
	struct session *ss; /* held */
	json_t *id;
	struct outbox out;
	size_t sent;        /* messages of out already framed */
	char *chunk;        /* framed, not yet all handed over */
	size_t chunk_len, chunk_off;
	bool over;          /* the collection no longer runs */
};

static ssize_t stream_read(void *ctx, char *buf, size_t max)
{
	struct stream *st = ctx;

	for (;;) {
		if (st->chunk_off < st->chunk_len) {
			size_t n = st->chunk_len - st->chunk_off < max ? st->chunk_len - st->chunk_off : max;

			memcpy(buf, st->chunk + st->chunk_off, n);
			st->chunk_off += n;
			return (ssize_t)n;
		}
		free(st->chunk);
		st->chunk = NULL;
		st->chunk_len = st->chunk_off = 0;
		if (st->out.overflowed)
			return -1;
		if (st->sent < st->out.n) {
			if (!(st->chunk = sse_records(&st->out, st->sent)))
				return -1;
			st->chunk_len = strlen(st->chunk);
			st->sent = st->out.n;
			continue;
		}
		if (st->out.response || st->over)
			return 0; /* answered, or cancelled: nothing more will come */
		st->over = !pump(st->ss, st->id, &st->out, KEEPALIVE_MS);
		if (!st->over && st->sent == st->out.n) {
			/* a comment: keeps proxies and our idle timeout from closing a
			 * quiet stream, and finds out whether the client is still there */
			if (!(st->chunk = strdup(": waiting\n\n")))
				return -1;
			st->chunk_len = strlen(st->chunk);
		}
	}
}

/* The stream is over. A client gone before the answer is taken to have
 * cancelled: nothing could deliver the answer now. */
static void stream_end(void *ctx)
{
	struct stream *st = ctx;

	pthread_mutex_lock(&st->ss->lock);
	td_mcp_collect_cancel(st->ss->server, st->id);
	pthread_mutex_unlock(&st->ss->lock);
	session_put(st->h, st->ss);
	json_decref(st->id);
	outbox_release(&st->out);
	free(st->chunk);
	free(st);
}

/* Answers the request the running collection will answer: as a stream
 * (taking out and the hold on ss), or, for a client that takes no
 * stream, once the answer is there. */
static void answer_later(struct td_mcp_http *h, struct session *ss, const json_t *id,
			 struct outbox *out, bool sse, struct td_httpd_response *resp)
{
	struct stream *st;

	if (!sse) {
		while (!out->response && pump(ss, id, out, KEEPALIVE_MS))
			;
		if (out->response)
			answer(resp, out, false);
		else
			resp->status = 202; /* cancelled: nothing answers it */
		outbox_release(out);
		session_put(h, ss);
		return;
	}
	st = calloc(1, sizeof(*st));
	if (!st || !(st->id = json_deep_copy(id))) {
		free(st);
		pthread_mutex_lock(&ss->lock);
		td_mcp_collect_cancel(ss->server, id);
		pthread_mutex_unlock(&ss->lock);
		outbox_release(out);
		session_put(h, ss);
		refuse(resp, 503, TD_RPC_INTERNAL_ERROR, "out of memory answering: try again");
		return;
	}
	st->h = h;
	st->ss = ss;
	st->out = *out;
	resp->status = 200;
	resp->content_type = "text/event-stream";
	td_httpd_add_header(resp, "Cache-Control", "no-cache");
	resp->read = stream_read;
	resp->end = stream_end;
	resp->stream_ctx = st;
}

/* ---- one request ---- */

/* Passes body to the session's server and answers with what it sends. */
static void dispatch(struct td_mcp_http *h, struct session *ss, const struct td_rpc_message *msg,
		     const struct td_httpd_request *req, bool sse, struct td_httpd_response *resp)
{
	struct outbox out = { 0 };
	bool later, timed_out;

	pthread_mutex_lock(&ss->lock);
	ss->out = &out;
	td_mcp_handle_line(ss->server, req->body, req->body_len);
	ss->out = NULL;
	later = msg->kind == TD_RPC_REQUEST && !out.response &&
		td_mcp_collect_answers(ss->server, msg->id);
	timed_out = msg->kind == TD_RPC_REQUEST && td_mcp_request_timed_out(ss->server);
	pthread_mutex_unlock(&ss->lock);
	if (later) {
		answer_later(h, ss, msg->id, &out, sse, resp);
		return;
	}
	if (timed_out) {
		/* the time limit's own status, the JSON-RPC error saying why as its body */
		answer(resp, &out, false);
		if (resp->status == 200)
			resp->status = 504;
	} else if (msg->kind == TD_RPC_REQUEST) {
		/* notifications ride along only where the client takes a stream */
		answer(resp, &out, sse && out.n > 1);
	} else {
		resp->status = 202;
	}
	outbox_release(&out);
	session_put(h, ss);
}

/*
 * Who a request comes from, for the sessions' cap per client: the
 * client's address; with a token, every client proves the same secret and
 * so counts as one, whose cap is the whole table (then only the longest
 * idle rule decides who makes room).
 */
static const char *client_of(const struct td_mcp_http *h, const struct td_httpd_request *req)
{
	if (h->o.token)
		return "token";
	return req->peer ? req->peer : "";
}

static void post(struct td_mcp_http *h, const struct td_httpd_request *req,
		 struct td_httpd_response *resp)
{
	const char *accept = td_httpd_header(req, "Accept");
	const char *session_id = td_httpd_header(req, "Mcp-Session-Id");
	bool sse = lists_type(accept, "text/event-stream");
	struct td_rpc_message msg;
	struct session *ss;
	int status;

	if (!is_json_type(td_httpd_header(req, "Content-Type"))) {
		refuse(resp, 415, TD_RPC_INVALID_REQUEST,
		       "send the JSON-RPC message with Content-Type: application/json");
		return;
	}
	if (!sse && !accepts_json(accept)) {
		refuse(resp, 406, TD_RPC_INVALID_REQUEST,
		       "accept application/json and text/event-stream (the Accept header)");
		return;
	}
	td_rpc_parse(req->body, req->body_len, &msg);
	if (msg.kind == TD_RPC_INVALID) {
		refuse(resp, 400, msg.error_code, msg.error);
	} else if (msg.kind == TD_RPC_REQUEST && !strcmp(msg.method, "initialize")) {
		if (!(ss = session_new(h, client_of(h, req), &status))) {
			refuse(resp, status, TD_RPC_INTERNAL_ERROR, status == 503 ?
			       "too many sessions, every one busy: end one (DELETE /mcp) or try again shortly" :
			       "cannot start a session (out of memory or randomness): try again");
		} else {
			char id[sizeof(ss->id)];

			memcpy(id, ss->id, sizeof(id));
			pthread_mutex_lock(&h->lock);
			ss->users++; /* until the answer shows whether it initialized */
			pthread_mutex_unlock(&h->lock);
			dispatch(h, ss, &msg, req, sse, resp);
			if (ss->server->initialized)
				td_httpd_add_header(resp, "Mcp-Session-Id", id);
			else
				session_end(h, ss);
			session_put(h, ss);
		}
	} else if (!session_id) {
		refuse(resp, 400, TD_RPC_INVALID_REQUEST,
		       "no Mcp-Session-Id header: send initialize first, then the session id it gave");
	} else if (!(ss = session_get(h, session_id))) {
		refuse(resp, 404, TD_RPC_INVALID_REQUEST,
		       "unknown or expired session: send initialize for a new one");
	} else {
		dispatch(h, ss, &msg, req, sse, resp);
	}
	td_rpc_message_release(&msg);
}

static void delete(struct td_mcp_http *h, const struct td_httpd_request *req,
		   struct td_httpd_response *resp)
{
	const char *session_id = td_httpd_header(req, "Mcp-Session-Id");
	struct session *ss = session_id ? session_get(h, session_id) : NULL;

	if (!session_id) {
		refuse(resp, 400, TD_RPC_INVALID_REQUEST, "name the session to end in Mcp-Session-Id");
		return;
	}
	if (!ss) {
		refuse(resp, 404, TD_RPC_INVALID_REQUEST, "unknown or expired session");
		return;
	}
	session_end(h, ss);
	session_put(h, ss);
	resp->status = 204;
}

void td_mcp_http_handle(void *ctx, const struct td_httpd_request *req,
			struct td_httpd_response *resp)
{
	struct td_mcp_http *h = ctx;
	const char *version = td_httpd_header(req, "MCP-Protocol-Version");

	if (strcmp(req->path, "/mcp")) {
		refuse(resp, 404, TD_RPC_INVALID_REQUEST, "not found: the MCP endpoint is /mcp");
	} else if (!td_mcp_http_origin_allowed(td_httpd_header(req, "Origin"), req->tls, h->host,
					       req->port ? req->port : h->port)) {
		/* a web page must not drive a local server (DNS rebinding), nor
		 * may another local server's page (another port) */
		refuse(resp, 403, TD_RPC_INVALID_REQUEST,
		       "forbidden Origin: only pages of this server's own origin (scheme, host and port) may call");
	} else if (h->o.token &&
		   !td_mcp_http_token_matches(td_httpd_header(req, "Authorization"), h->o.token)) {
		refuse(resp, 401, TD_RPC_INVALID_REQUEST,
		       "send the server's token as Authorization: Bearer TOKEN");
		td_httpd_add_header(resp, "WWW-Authenticate", "Bearer realm=\"topdown\"");
	} else if (version && !td_mcp_protocol_supported(version)) {
		refuse(resp, 400, TD_RPC_INVALID_REQUEST,
		       "unsupported MCP-Protocol-Version: use 2025-11-25, 2025-06-18, 2025-03-26 or 2024-11-05");
	} else if (!strcmp(req->method, "POST")) {
		post(h, req, resp);
	} else if (!strcmp(req->method, "DELETE")) {
		delete(h, req, resp);
	} else {
		/* GET included: we offer no stream the server starts */
		refuse(resp, 405, TD_RPC_INVALID_REQUEST, "use POST for messages, DELETE to end a session");
		td_httpd_add_header(resp, "Allow", "POST, DELETE");
	}
}

/* ---- the keeper, and serving ---- */

struct td_mcp_http *td_mcp_http_new(const struct td_mcp_http_options *o, char *err,
				    size_t errlen)
{
	struct td_mcp_http *h;
	long port;
	char host[TD_HTTPD_HOST_MAX];

	const char *prefix = o->option_prefix ? o->option_prefix : "";
	char listen_option[32];

	snprintf(listen_option, sizeof(listen_option), "--%slisten", prefix);
	if (td_httpd_parse_listen(o->listen, listen_option, true, host, &port, err, errlen) < 0)
		return NULL;
	if (!o->token && !td_httpd_host_is_loopback(host)) {
		snprintf(err, errlen, "%s %s is not loopback: give --%stoken-file FILE so that "
			 "only clients with the token get in", listen_option, o->listen, prefix);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		goto oom;
	h->o = *o;
	if (!h->o.max_sessions)
		h->o.max_sessions = TD_MCP_HTTP_DEFAULT_SESSIONS;
	if (!h->o.session_idle_ns)
		h->o.session_idle_ns = TD_MCP_HTTP_DEFAULT_IDLE_NS;
	memcpy(h->host, host, sizeof(host));
	h->port = (int)port;
	/* a quarter of the table each, so that one client's leaked or hoarded
	 * sessions leave the others room */
	h->per_client = o->token ? h->o.max_sessions :
			h->o.max_sessions / 4 ? h->o.max_sessions / 4 : 1;
	h->sessions = calloc(h->o.max_sessions, sizeof(*h->sessions));
	if (!h->sessions) {
		free(h);
		goto oom;
	}
	pthread_mutex_init(&h->lock, NULL);
	return h;
oom:
	snprintf(err, errlen, "out of memory starting the MCP server");
	return NULL;
}

void td_mcp_http_free(struct td_mcp_http *h)
{
	if (!h)
		return;
	for (unsigned i = 0; i < h->o.max_sessions; i++)
		if (h->sessions[i])
			session_free(h->sessions[i]);
	free(h->sessions);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

struct td_httpd *td_mcp_http_listen(struct td_mcp_http *h, struct td_httpd_options *http,
				    char *err, size_t errlen)
{
	unsigned sessions = h->o.max_sessions ? h->o.max_sessions : TD_MCP_HTTP_DEFAULT_SESSIONS;
	struct sigaction ignore = { .sa_handler = SIG_IGN };

	sigaction(SIGPIPE, &ignore, NULL);
	http->listen = h->o.listen;
	http->max_body = TD_RPC_MAX_LINE;
	http->max_head = HTTP_MAX_HEAD;
	http->max_connections = HTTP_CONNECTIONS_PER_SESSION * sessions;
	http->max_per_address = http->max_connections / HTTP_ADDRESS_SHARE ?
				http->max_connections / HTTP_ADDRESS_SHARE : 1;
	http->timeout_s = HTTP_TIMEOUT_S;
	http->handler = td_mcp_http_handle;
	http->ctx = h;
	h->tls = http->tls_cert != NULL;
	return td_httpd_start(http, err, errlen);
}

void td_mcp_http_announce(const struct td_mcp_http *h, const struct td_httpd *server,
			  const char *who)
{
	bool v6 = strchr(h->host, ':') != NULL;

	fprintf(stderr, "%s: serving MCP at %s://%s%s%s:%d/mcp%s\n", who, h->tls ? "https" : "http",
		v6 ? "[" : "", h->host, v6 ? "]" : "", td_httpd_port(server),
		h->o.token ? " (bearer token required)" : "");
}

void td_mcp_http_close(struct td_mcp_http *h, struct td_httpd *server, const char *who)
{
	uint64_t longest = h->o.mcp.max_duration_ns ? h->o.mcp.max_duration_ns :
			   TD_MCP_DEFAULT_MAX_DURATION_NS;

	if (!server)
		return;
	if (td_httpd_drain(server, (int)(longest / 1000000) + DRAIN_GRACE_MS) < 0)
		fprintf(stderr, "%s: MCP requests still running were cut off\n", who);
	td_httpd_stop(server);
}

int td_mcp_http_serve(struct td_mcp_http *h, struct td_httpd_options *http, char *err,
		      size_t errlen)
{
	static const char who[] = "topdown mcp-serve";
	sigset_t stop, old;
	struct td_httpd *server;
	int sig = 0;

	/* blocked before the server's threads start, so sigwait gets them */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	server = td_mcp_http_listen(h, http, err, errlen);
	if (!server) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return -EINVAL;
	}
	td_mcp_http_announce(h, server, who);
	while (sigwait(&stop, &sig))
		;
	fprintf(stderr, "%s: stopping on %s; finishing the requests in flight\n", who,
		strsignal(sig));
	td_mcp_http_close(h, server, who);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}

int td_mcp_http_read_token(const char *path, const char *option, char **token, char *err,
			   size_t errlen)
{
	char buf[TOKEN_MAX + 1];
	struct stat st;
	ssize_t n;
	size_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -EINVAL;

	*token = NULL;
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s %s: %s", option, path, strerror(errno));
		goto out;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errlen, "%s %s is open to group or others (mode %04o): "
			 "chmod 600 it", option, path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	n = read(fd, buf, TOKEN_MAX);
	len = n > 0 ? strcspn(buf, "\r\n") : 0;
	if (n > 0)
		buf[len < (size_t)n ? len : (size_t)n] = '\0';
	len = n > 0 ? strlen(buf) : 0;
	if (len < TOKEN_MIN || len == TOKEN_MAX || strpbrk(buf, " \t")) {
		snprintf(err, errlen, "%s %s must hold one token of %d to %d characters "
			 "without spaces on its first line, e.g. from `openssl rand -hex 32`", option, path,
			 TOKEN_MIN, TOKEN_MAX - 1);
		goto out;
	}
	if (!(*token = strdup(buf))) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory reading %s %s", option, path);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	return ret;
}
