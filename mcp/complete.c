// SPDX-License-Identifier: BSD-3-Clause
/*
 * completion/complete: values for prompt arguments and resource template
 * variables as the user types them: run ids, process names and metric
 * names. Other arguments get no values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "explain.h"
#include "mcp.h"

#define MAX_VALUES 100     /* what the protocol allows in one answer */
#define RUNS_SCANNED 1000  /* the newest runs offer ids and process names */

/* The values that start with the typed prefix, without repeats. */
struct candidates {
	const char *prefix;
	size_t prefix_len;
	bool ignore_case;
	json_t *values; /* the first MAX_VALUES */
	size_t total;
	json_t *seen;   /* every value offered, as keys */
};

static void offer(struct candidates *c, const char *value)
{
	if (!value || (c->ignore_case ? strncasecmp(value, c->prefix, c->prefix_len) :
		       strncmp(value, c->prefix, c->prefix_len)))
		return;
	if (json_object_get(c->seen, value))
		return;
	json_object_set_new(c->seen, value, json_true());
	if (c->total++ < MAX_VALUES)
		json_array_append_new(c->values, json_string(value));
}

/* ---- sources ---- */

static void offer_runs(struct td_mcp_server *s, struct candidates *c, bool processes)
{
	struct td_run_filter filter = { .limit = RUNS_SCANNED };
	struct td_run_summary *runs = NULL;
	struct td_store *store;
	size_t count = 0;
	char err[768];

	if (!(store = td_mcp_store(s, err, sizeof(err))) ||
	    td_store_list_runs(store, &filter, &runs, &count, err, sizeof(err))) {
		td_mcp_log(s, TD_MCP_LOG_WARNING, "no completion from the store: %s", err);
		return;
	}
	for (size_t i = 0; i < count; i++)
		offer(c, processes ? runs[i].process : runs[i].id);
	td_run_summaries_free(runs, count);
}

static void offer_nodes(struct candidates *c, const struct td_explain_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		offer(c, nodes[i].node);
		offer(c, nodes[i].name);
		offer_nodes(c, nodes[i].children, nodes[i].n_children);
	}
}

static void offer_metrics(struct td_mcp_server *s, struct candidates *c)
{
	struct td_explain_listing *listing = NULL;
	const struct td_kb *kb;
	char err[768];

	c->ignore_case = true; /* explain matches names in any case */
	if (!(kb = td_kb_load(err, sizeof(err))) || td_explain_list(kb, NULL, &listing, err, sizeof(err))) {
		td_mcp_log(s, TD_MCP_LOG_WARNING, "no metric completion: %s", err);
		return;
	}
	for (size_t g = 0; g < listing->n_groups; g++) {
		offer_nodes(c, listing->groups[g].roots, listing->groups[g].n_roots);
		offer_nodes(c, listing->groups[g].info, listing->groups[g].n_info);
	}
	td_explain_listing_free(listing);
}

/* What an argument or template variable holds, by its name. */
static void offer_for(struct td_mcp_server *s, const char *argument, struct candidates *c)
{
	if (!strcmp(argument, "run_a") || !strcmp(argument, "run_b") ||
	    !strcmp(argument, "run_id"))
		offer_runs(s, c, false);
	else if (!strcmp(argument, "process"))
		offer_runs(s, c, true);
	else if (!strcmp(argument, "name"))
		offer_metrics(s, c);
}

/* ---- the method ---- */

/* The reference must name a prompt or template we have; -1 otherwise. */
static int check_ref(const json_t *ref, struct td_mcp_error *e)
{
	const char *type = json_string_value(json_object_get(ref, "type"));

	if (type && !strcmp(type, "ref/prompt") && json_is_string(json_object_get(ref, "name")))
		return 0;
	if (type && !strcmp(type, "ref/resource") && json_is_string(json_object_get(ref, "uri")))
		return 0;
	return td_mcp_fail(e, TD_RPC_INVALID_PARAMS,
			   "\"ref\" must be {\"type\": \"ref/prompt\", \"name\": ...} or "
			   "{\"type\": \"ref/resource\", \"uri\": ...}");
}

int td_mcp_complete(struct td_mcp_server *s, const struct td_mcp_request *req, json_t **result,
		    struct td_mcp_error *e)
{
	const json_t *argument = json_object_get(req->params, "argument");
	const char *name, *value;
	struct candidates c = { 0 };

	if (check_ref(json_object_get(req->params, "ref"), e))
		return -1;
	if (!json_is_object(argument) || td_mcp_param_string(argument, "name", true, &name, e) ||
	    td_mcp_param_string(argument, "value", true, &value, e))
		return td_mcp_fail(e, TD_RPC_INVALID_PARAMS,
				   "\"argument\" must be {\"name\": ..., \"value\": ...}, both strings");
	c.prefix = value;
	c.prefix_len = strlen(value);
	c.values = json_array();
	c.seen = json_object();
	offer_for(s, name, &c);
	*result = json_pack("{s:{s:o, s:I, s:b}}", "completion", "values", c.values,
			    "total", (json_int_t)c.total, "hasMore", c.total > MAX_VALUES);
	json_decref(c.seen);
	return 0;
}
