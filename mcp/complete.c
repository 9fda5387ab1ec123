// SPDX-License-Identifier: BSD-3-Clause
/*
 * completion/complete: values for prompt arguments and resource template
 * variables as the user types them: run ids, process names, metric names,
 * and label keys and values. Other arguments get no values.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "explain.h"
#include "mcp.h"
#include "query.h"

#define MAX_VALUES 100     /* what the protocol allows in one answer */
#define RUNS_SCANNED 1000  /* the newest runs offer ids, process names and labels */

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

/* Offers the argument head (len bytes of the typed text) followed by key=value. */
static void offer_label(struct candidates *c, size_t head_len, const char *key,
			const char *value)
{
	char *text = NULL;

	if (asprintf(&text, "%.*s%s=%s", (int)head_len, c->prefix, key, value) >= 0)
		offer(c, text);
	free(text);
}

/*
 * Labels as the prompts take them, "key=value[,key=value...]": the last
 * pair is completed, its key before '=' (offered as "key=", the value to
 * follow) and its value after it, from the labels of the newest runs. The
 * pairs before it narrow those runs as they will narrow the question, and
 * their keys are not offered again. Each candidate is the whole argument,
 * which is what a client puts in the field.
 */
static void offer_labels(struct td_mcp_server *s, struct candidates *c)
{
	const char *comma = strrchr(c->prefix, ','), *pair = comma ? comma + 1 : c->prefix;
	const char *eq = strchr(pair, '=');
	size_t head_len = (size_t)(pair - c->prefix);
	char key[TD_LABEL_KEY_MAX + 1], err[768];
	struct td_labels before;
	struct td_run_filter filter = { .labels = &before, .limit = RUNS_SCANNED };
	struct td_label_set *set = NULL;
	struct td_store *store;
	int ret;

	td_labels_init(&before);
	if (!(store = td_mcp_store(s, err, sizeof(err))))
		ret = -EIO;
	else
		ret = td_mcp_labels_from_text(c->prefix, head_len, &before, err, sizeof(err));
	if (!ret && eq && (size_t)(eq - pair) > TD_LABEL_KEY_MAX)
		ret = -EINVAL; /* too long to be a key */
	if (!ret) {
		snprintf(key, sizeof(key), "%.*s", eq ? (int)(eq - pair) : 0, pair);
		ret = td_query_labels(store, &filter, eq ? key : NULL, eq ? 0 : 1, &set, err,
				      sizeof(err));
	}
	/* Typing is not done yet: what fails to parse or match offers nothing. */
	if (ret && ret != -EINVAL && ret != -ENOENT && ret != TD_QUERY_NOTHING)
		td_mcp_log(s, TD_MCP_LOG_WARNING, "no label completion: %s", err);
	for (size_t i = 0; !ret && i < set->count; i++) {
		const struct td_label_key *k = &set->keys[i];

		if (!eq && !td_labels_get(&before, k->key))
			offer_label(c, head_len, k->key, "");
		/* a value with a comma cannot be written in this form */
		for (size_t j = 0; eq && j < k->count; j++)
			if (!strchr(k->values[j].value, ','))
				offer_label(c, head_len, k->key, k->values[j].value);
	}
	td_label_set_free(set);
	td_labels_free(&before);
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
	else if (!strcmp(argument, "labels") || !strcmp(argument, "label_a") ||
		 !strcmp(argument, "label_b"))
		offer_labels(s, c);
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
