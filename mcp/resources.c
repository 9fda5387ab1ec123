// SPDX-License-Identifier: BSD-3-Clause
/*
 * MCP resources: stored runs and their trees (topdown://runs/...), the
 * knowledge base (topdown://metrics, as `topdown explain --json` shows
 * it) and a note on the method (topdown://methodology).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain_render.h"
#include "explain.h"
#include "mcp.h"
#include "query.h"
#include "query_render.h"
#include "format.h"

#define RUNS_PREFIX "topdown://runs/"
#define METRICS_URI "topdown://metrics"
#define METHODOLOGY_URI "topdown://methodology"
#define TREE_SUFFIX "/tree"

static const char methodology[] =
	"# How topdown measures\n\n"
	"Top-Down Microarchitecture Analysis (TMA) accounts for every pipeline slot of the CPU: "
	"each cycle the core can issue a fixed number of micro-operations (its slots). A slot "
	"either retires useful work (Retiring) or is wasted, and the waste is charged to one "
	"of three causes:\n\n"
	"- Frontend_Bound: the front end delivered no micro-operation (instruction cache or "
	"TLB misses, decoding limits, branch resteers);\n"
	"- Bad_Speculation: work was issued and thrown away (branch mispredictions, machine "
	"clears);\n"
	"- Backend_Bound: micro-operations waited for the back end (Memory_Bound: caches and "
	"DRAM; Core_Bound: execution ports and dividers).\n\n"
	"The four level-1 nodes add up to the whole; each node splits into children down to "
	"level 3 or 4. Read it top down: find the largest level-1 waste, then its largest "
	"child, and so on. A node whose value crosses its threshold (given per model by the "
	"vendor) is flagged; the deepest flagged node of a branch is a bottleneck.\n\n"
	"## What topdown stores\n\n"
	"topdown counts per thread with eBPF on every context switch, so threads of one "
	"process (a main loop and its I/O threads) are told apart. A run is one collection: "
	"its window, its labels (git_branch, test_name, host, ...), and the tree computed for "
	"each thread, each thread name with its digits folded (io_thd_*), and each process. "
	"Runs can also be imported from perf stat output.\n\n"
	"## Reading the numbers\n\n"
	"- Values are fractions of pipeline slots from 0 to 1 (0.25 is 25% of the slots).\n"
	"- Counters are multiplexed when there are more events than counters; a value whose "
	"events were counted less than half the time is marked low_confidence: treat it as "
	"a hint, and collect longer or at a shallower level to firm it up.\n"
	"- Over several runs, a sample is one process (or thread) of one run; means, ranges and "
	"tests are over samples.\n"
	"- Comparisons report the change in percentage points, Welch's t-test p-value (with "
	"two or more samples a side) and Cohen's d. A rise of a stall category is a "
	"regression; a rise of Retiring is an improvement.\n\n"
	"## Where to go next\n\n"
	"explain_metric tells what a node means and what to try: the counters to look at and "
	"the perf record command that finds the code responsible.\n";

static json_t *contents(const char *uri, const char *mime, const char *text)
{
	return json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri, "mimeType", mime,
			 "text", text);
}

/* The JSON value as the text of a resource; takes value. */
static json_t *json_contents(const char *uri, json_t *value)
{
	char *text = value ? json_dumps(value, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
	json_t *result = text ? contents(uri, "application/json", text) : NULL;

	free(text);
	json_decref(value);
	return result;
}

static int not_found(struct td_mcp_error *e, const char *uri, const char *why)
{
	td_mcp_fail(e, TD_RPC_RESOURCE_NOT_FOUND, "%s", why);
	e->data = json_pack("{s:s}", "uri", uri);
	return -1;
}

/* ---- the runs ---- */

static json_t *run_resource(const struct td_run_summary *r)
{
	char started[32], uri[sizeof(RUNS_PREFIX) + TD_RUN_ID_LEN], title[256];

	snprintf(uri, sizeof(uri), RUNS_PREFIX "%s", r->id);
	snprintf(title, sizeof(title), "%s, %s", r->process ? r->process : "run",
		 td_format_time(r->started_ns, started, sizeof(started)));
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "uri", uri, "name", r->id, "title", title,
			 "description", "a stored run: its window, process, labels and threads",
			 "mimeType", "application/json");
}

/* The run uri names, resolved; -1 with a not-found error. */
static struct td_store *resolve_run(struct td_mcp_server *s, const char *uri, const char *text,
				    char id[TD_RUN_ID_LEN], struct td_mcp_error *e)
{
	struct td_store *store;
	char err[768];

	if (!(store = td_mcp_store(s, err, sizeof(err)))) {
		td_mcp_fail(e, TD_RPC_INTERNAL_ERROR, "%s", err);
		return NULL;
	}
	if (td_store_resolve_run_id(store, text, id, err, sizeof(err))) {
		not_found(e, uri, err);
		return NULL;
	}
	return store;
}

static int read_run(struct td_mcp_server *s, const char *uri, const char *text, json_t **result,
		    struct td_mcp_error *e)
{
	struct td_run_summary *runs = NULL;
	char id[TD_RUN_ID_LEN], err[768];
	struct td_run_filter filter = { .run_id = id };
	struct td_store *store = resolve_run(s, uri, text, id, e);
	size_t count = 0;

	if (!store)
		return -1;
	if (td_store_list_runs(store, &filter, &runs, &count, err, sizeof(err)))
		return td_mcp_fail(e, TD_RPC_INTERNAL_ERROR, "%s", err);
	if (count)
		*result = json_contents(uri, td_run_summary_json(&runs[0]));
	td_run_summaries_free(runs, count);
	return count ? 0 : not_found(e, uri, "no such run");
}

static int read_run_tree(struct td_mcp_server *s, const char *uri, const char *text,
			 json_t **result, struct td_mcp_error *e)
{
	char id[TD_RUN_ID_LEN], err[768];
	struct td_query q = { .runs.run_id = id };
	struct td_store *store = resolve_run(s, uri, text, id, e);
	struct td_tree *tree = NULL;
	int ret;

	if (!store)
		return -1;
	ret = td_query_tree(store, &q, &tree, err, sizeof(err));
	if (ret == -ENOENT || ret == TD_QUERY_NOTHING) /* a run with no tree has no tree resource */
		return not_found(e, uri, err);
	if (ret)
		return td_mcp_fail(e, TD_RPC_INTERNAL_ERROR, "%s", err);
	*result = json_contents(uri, td_tree_json(tree));
	td_tree_free(tree);
	return 0;
}

/* ---- the knowledge base ---- */

static int read_metrics(const char *uri, json_t **result, struct td_mcp_error *e)
{
	const struct td_kb *kb;
	struct td_explain_listing *listing = NULL;
	char err[768];

	if (!(kb = td_kb_load(err, sizeof(err))) || td_explain_list(kb, NULL, &listing, err, sizeof(err)))
		return td_mcp_fail(e, TD_RPC_INTERNAL_ERROR, "%s", err);
	*result = json_contents(uri, td_explain_listing_json(listing));
	td_explain_listing_free(listing);
	return 0;
}

static int read_metric(const char *uri, const char *name, json_t **result, struct td_mcp_error *e)
{
	const struct td_kb *kb;
	struct td_explanation *x = NULL;
	char err[768];
	int ret;

	if (!(kb = td_kb_load(err, sizeof(err))))
		return td_mcp_fail(e, TD_RPC_INTERNAL_ERROR, "%s", err);
	ret = td_explain_lookup(kb, name, NULL, &x, err, sizeof(err));
	if (ret == -ENOENT)
		return not_found(e, uri, err);
	if (ret)
		return td_mcp_fail(e, TD_RPC_INTERNAL_ERROR, "%s", err);
	*result = json_contents(uri, td_explain_json(x));
	td_explanation_free(x);
	return 0;
}

/* ---- the methods ---- */

static bool has_prefix(const char *text, const char *prefix)
{
	return strncmp(text, prefix, strlen(prefix)) == 0;
}

int td_mcp_resources_read(struct td_mcp_server *s, const struct td_mcp_request *req,
			  json_t **result, struct td_mcp_error *e)
{
	const char *uri;

	if (td_mcp_param_string(req->params, "uri", true, &uri, e))
		return -1;
	if (!strcmp(uri, METHODOLOGY_URI)) {
		*result = contents(uri, "text/markdown", methodology);
		return 0;
	}
	if (!strcmp(uri, METRICS_URI))
		return read_metrics(uri, result, e);
	if (has_prefix(uri, METRICS_URI "/") && uri[sizeof(METRICS_URI)])
		return read_metric(uri, uri + sizeof(METRICS_URI), result, e);
	if (has_prefix(uri, RUNS_PREFIX)) {
		const char *rest = uri + strlen(RUNS_PREFIX);
		size_t len = strlen(rest), tail = strlen(TREE_SUFFIX);
		char id[TD_RUN_ID_LEN + 1];

		if (len > tail && !strcmp(rest + len - tail, TREE_SUFFIX) && len - tail < sizeof(id)) {
			snprintf(id, sizeof(id), "%.*s", (int)(len - tail), rest);
			return read_run_tree(s, uri, id, result, e);
		}
		if (!strchr(rest, '/'))
			return read_run(s, uri, rest, result, e);
	}
	return not_found(e, uri, "no resource has this uri: resources/list and "
			 "resources/templates/list show what there is");
}

static json_t *fixed_resources(void)
{
	return json_pack("[{s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s}]",
		"uri", METRICS_URI, "name", "metrics", "title", "Top-Down metrics of every model",
		"description", "the tree of each CPU model family, as explain_metric names its nodes",
		"mimeType", "application/json",
		"uri", METHODOLOGY_URI, "name", "methodology", "title", "How topdown measures",
		"description", "Top-Down analysis, what a run holds, and how to read the numbers",
		"mimeType", "text/markdown");
}

/* The fixed resources, then the stored runs, newest first. */
int td_mcp_resources_list(struct td_mcp_server *s, const struct td_mcp_request *req,
			  json_t **result, struct td_mcp_error *e)
{
	size_t page = td_mcp_page_size(s), offset, nr_fixed, count = 0, shown = 0;
	struct td_run_summary *runs = NULL;
	struct td_run_filter filter = { 0 };
	struct td_store *store;
	json_t *fixed, *list;
	char err[768];

	if (td_mcp_page_start(req, &offset, e))
		return -1;
	fixed = fixed_resources();
	list = json_array();
	nr_fixed = json_array_size(fixed);
	for (size_t i = offset; list && i < nr_fixed && shown < page; i++, shown++)
		json_array_append(list, json_array_get(fixed, i));
	json_decref(fixed);
	filter.limit = offset + page + 1; /* one more shows whether another page follows */
	if (!(store = td_mcp_store(s, err, sizeof(err))) ||
	    td_store_list_runs(store, &filter, &runs, &count, err, sizeof(err)))
		td_mcp_log(s, TD_MCP_LOG_WARNING, "resources/list shows no runs: %s", err);
	for (size_t i = offset > nr_fixed ? offset - nr_fixed : 0; list && i < count && shown < page;
	     i++, shown++)
		json_array_append_new(list, run_resource(&runs[i]));
	td_run_summaries_free(runs, count);
	*result = list ? json_pack("{s:o}", "resources", list) : NULL;
	if (*result)
		td_mcp_next_cursor(*result, offset, shown, nr_fixed + count);
	return 0;
}

int td_mcp_resource_templates_list(struct td_mcp_server *s, const struct td_mcp_request *req,
				   json_t **result, struct td_mcp_error *e)
{
	json_t *templates = json_pack(
		"[{s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s}]",
		"uriTemplate", RUNS_PREFIX "{run_id}", "name", "run", "title", "A stored run",
		"description", "its window, process, labels and thread count; run_id may be a "
		"unique prefix of 8 characters or more", "mimeType", "application/json",
		"uriTemplate", RUNS_PREFIX "{run_id}" TREE_SUFFIX, "name", "run_tree",
		"title", "The Top-Down tree of a run",
		"description", "every node with its value, range, confidence and threshold",
		"mimeType", "application/json",
		"uriTemplate", METRICS_URI "/{name}", "name", "metric",
		"title", "A Top-Down metric explained",
		"description", "what it means, where it sits in the tree, causes and next steps",
		"mimeType", "application/json");

	return td_mcp_page_result(s, req, "resourceTemplates", templates, result, e);
}
