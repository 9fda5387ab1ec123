/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * collect_topdown: a collection run as `topdown collect --json` in a child
 * process, the same command users run. The child keeps the collector's
 * signal handling and output away from the protocol stream, and
 * cancelling is ending the child. The server's loop watches the child's
 * output and sends progress while it runs; the answer goes out when it
 * ends. One collection at a time.
 */
#ifndef TOPDOWN_MCP_COLLECT_H
#define TOPDOWN_MCP_COLLECT_H

#include <poll.h>

#include "mcp.h"

/*
 * Starts the collection args ask for (checked against the tool's schema).
 * TD_MCP_DEFERRED once it runs; 0 with *result an isError result when it
 * is refused or cannot start.
 */
int td_mcp_collect_start(struct td_mcp_server *s, const struct td_mcp_request *req,
			 const json_t *args, json_t **result);

/* The running child's output pipes, for poll(); returns how many (0 without one). */
size_t td_mcp_collect_pollfds(const struct td_mcp_server *s, struct pollfd *fds, size_t max);
/* How long poll() may sleep before the next progress notification; -1: no limit. */
int td_mcp_collect_timeout_ms(const struct td_mcp_server *s);
/* Reads what the child wrote, sends progress that is due, answers when it has ended. */
void td_mcp_collect_step(struct td_mcp_server *s, const struct pollfd *fds, size_t n);

/* Whether a collection runs that will answer request_id. */
bool td_mcp_collect_answers(const struct td_mcp_server *s, const json_t *request_id);

/* notifications/cancelled: ends the collection answering request_id, if
 * that is the running one; the request is then never answered. */
void td_mcp_collect_cancel(struct td_mcp_server *s, const json_t *request_id);
/* Ends a running collection without answering (the server is exiting). */
void td_mcp_collect_stop(struct td_mcp_server *s);

#endif
