// SPDX-License-Identifier: BSD-3-Clause
/*
 * MCP prompts: three investigations an engineer starts often, written as
 * the sequence of tool calls that answers each.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "mcp.h"

#define MAX_PROMPT_ARGS 2

struct prompt_arg {
	const char *name, *description;
	bool required;
	bool labels; /* "key=value[,key=value...]" */
};

struct prompt {
	const char *name, *title, *description;
	struct prompt_arg args[MAX_PROMPT_ARGS];
	/* The instructions, given the arguments (labels already as JSON objects). */
	char *(*text)(const char *const values[MAX_PROMPT_ARGS]);
};

static char *diagnose_text(const char *const v[MAX_PROMPT_ARGS])
{
	char *text = NULL, filters[512];

	snprintf(filters, sizeof(filters), "process \"%s\"%s%s", v[0], v[1] ? " and labels " : "",
		 v[1] ? v[1] : "");
	if (asprintf(&text,
		"Find out what limits the CPU performance of %s, with the topdown tools.\n"
		"1. Call query_bottlenecks with %s: the most frequent bottlenecks of the matching "
		"runs. If nothing matches, call list_profiling_runs to see the processes stored and "
		"list_labels for the labels.\n"
		"2. Call get_funnel with the same filters: how the pipeline slots split between useful "
		"work (Retiring) and each kind of waste.\n"
		"3. Call explain_metric with the top bottleneck's name: its causes and what to do.\n"
		"4. Call get_thread_breakdown with the same filters, sorted by that bottleneck: "
		"whether some threads or thread names suffer more than the rest.\n"
		"Then answer in a few lines: the main bottleneck and its share of slots, the threads "
		"it concerns, any low-confidence values, and the two or three next steps "
		"explain_metric suggests (counters to check, perf record commands).",
		v[0], filters) < 0)
		return NULL;
	return text;
}

static char *compare_text(const char *const v[MAX_PROMPT_ARGS])
{
	char *text = NULL;

	if (asprintf(&text,
		"Compare the builds labeled %s (the baseline) and %s, with the topdown tools.\n"
		"1. Call compare_by_labels with labels_a %s and labels_b %s. If a side has no runs, "
		"call list_labels to see the label values that exist.\n"
		"2. For each regression, call explain_metric with its name: what the node means and "
		"what usually causes it to grow.\n"
		"3. If a regression is large, call compare_by_labels again with by_thread_name true "
		"to see which threads it comes from.\n"
		"Then report the regressions and improvements with their change in percentage "
		"points, how sure each is (p-value, effect size, runs per side, low confidence), and "
		"what to look at in the code first.",
		v[0], v[1], v[0], v[1]) < 0)
		return NULL;
	return text;
}

static char *regression_text(const char *const v[MAX_PROMPT_ARGS])
{
	char *text = NULL;

	if (asprintf(&text,
		"Explain why run %s behaves worse than run %s, with the topdown tools.\n"
		"1. Call compare_runs with run_a \"%s\" and run_b \"%s\": the nodes that changed "
		"beyond the threshold.\n"
		"2. Call get_run_tree for each run to see the changes in the context of the whole "
		"tree.\n"
		"3. Call explain_metric for the deepest regressed nodes.\n"
		"4. Call get_thread_breakdown with run_id \"%s\", sorted by the main regressed node: "
		"which threads carry the change.\n"
		"Then explain the regression: what the CPU now spends its slots on, in which threads, "
		"the likely causes, and how to confirm them (counters, perf record).",
		v[1], v[0], v[0], v[1], v[1]) < 0)
		return NULL;
	return text;
}

#define LABELS_HELP "labels as key=value, several separated by commas (git_branch=main,test_name=get)"

static const struct prompt prompts[] = {
	{ "diagnose_bottleneck", "Diagnose a process's bottleneck",
	  "Find what limits a process's CPU performance: bottlenecks, funnel, threads, next steps.",
	  { { "process", "The process name, as collected (e.g. redis-server).", true, false },
	    { "labels", "Only runs with these " LABELS_HELP ".", false, true } },
	  diagnose_text },
	{ "compare_builds", "Compare two builds",
	  "What changed in the Top-Down tree between two labeled sets of runs, and why.",
	  { { "label_a", "The baseline: " LABELS_HELP ".", true, true },
	    { "label_b", "The build compared against it: " LABELS_HELP ".", true, true } },
	  compare_text },
	{ "explain_regression", "Explain a regression between two runs",
	  "Why one run is worse than another: the nodes that changed, in which threads, and the "
	  "likely causes.",
	  { { "run_a", "The good run: its id or a unique prefix.", true, false },
	    { "run_b", "The worse run: its id or a unique prefix.", true, false } },
	  regression_text },
};

#define NR_PROMPTS (sizeof(prompts) / sizeof(prompts[0]))

int td_mcp_prompts_list(struct td_mcp_server *s, const struct td_mcp_request *req,
			json_t **result, struct td_mcp_error *e)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < NR_PROMPTS; i++) {
		const struct prompt *p = &prompts[i];
		json_t *args = json_array();

		for (size_t a = 0; a < MAX_PROMPT_ARGS && p->args[a].name; a++)
			json_array_append_new(args, json_pack("{s:s, s:s, s:b}", "name",
				p->args[a].name, "description", p->args[a].description,
				"required", p->args[a].required));
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:o}", "name", p->name,
			"title", p->title, "description", p->description, "arguments", args));
	}
	return td_mcp_page_result(s, req, "prompts", list, result, e);
}

int td_mcp_labels_from_text(const char *text, size_t len, struct td_labels *labels, char *err,
			    size_t errlen)
{
	char *copy = strndup(text, len), *save = NULL;
	int ret = 0;

	if (!copy) {
		snprintf(err, errlen, "out of memory reading labels");
		return -ENOMEM;
	}
	for (char *pair = strtok_r(copy, ",", &save); !ret && pair;
	     pair = strtok_r(NULL, ",", &save))
		ret = td_labels_parse_arg(labels, pair, err, errlen);
	free(copy);
	return ret;
}

/* "k=v,k2=v2" as the JSON object the tools take; NULL with err. */
static char *labels_as_json(const char *text, char *err, size_t errlen)
{
	char *out = NULL;
	struct td_labels labels;
	json_t *object = json_object();
	int ret = object ? 0 : -1;

	td_labels_init(&labels);
	if (!ret)
		ret = td_mcp_labels_from_text(text, strlen(text), &labels, err, errlen);
	if (!ret && !labels.count) {
		snprintf(err, errlen, "no label given: use key=value, e.g. git_branch=main");
		ret = -1;
	}
	for (size_t i = 0; !ret && i < labels.count; i++)
		json_object_set_new(object, labels.items[i].key, json_string(labels.items[i].value));
	if (!ret)
		out = json_dumps(object, JSON_COMPACT);
	td_labels_free(&labels);
	json_decref(object);
	return out;
}

static const struct prompt *find_prompt(const char *name)
{
	for (size_t i = 0; i < NR_PROMPTS; i++)
		if (!strcmp(prompts[i].name, name))
			return &prompts[i];
	return NULL;
}

static bool has_arg(const struct prompt *p, const char *name)
{
	for (size_t a = 0; a < MAX_PROMPT_ARGS && p->args[a].name; a++)
		if (!strcmp(p->args[a].name, name))
			return true;
	return false;
}

/* The argument values, labels turned into JSON (owned[] to free). */
static int read_args(const struct prompt *p, const json_t *args, const char *values[],
		     char *owned[], struct td_mcp_error *e)
{
	const char *name;
	char err[512];
	json_t *value;

	json_object_foreach((json_t *)args, name, value)
		if (!has_arg(p, name))
			return td_mcp_fail(e, TD_RPC_INVALID_PARAMS, "%s has no argument '%.64s'",
					   p->name, name);
	for (size_t a = 0; a < MAX_PROMPT_ARGS && p->args[a].name; a++) {
		const char *name = p->args[a].name;

		if (td_mcp_param_string(args, name, p->args[a].required, &values[a], e))
			return td_mcp_fail(e, TD_RPC_INVALID_PARAMS, "%s needs the argument '%s': %s",
					   p->name, name, p->args[a].description);
		if (values[a] && !*values[a] && p->args[a].required)
			return td_mcp_fail(e, TD_RPC_INVALID_PARAMS, "%s: '%s' is empty", p->name,
					   name);
		if (values[a] && *values[a] && p->args[a].labels) {
			if (!(owned[a] = labels_as_json(values[a], err, sizeof(err))))
				return td_mcp_fail(e, TD_RPC_INVALID_PARAMS, "%s: %s", name, err);
			values[a] = owned[a];
		} else if (values[a] && !*values[a]) {
			values[a] = NULL;
		}
	}
	return 0;
}

int td_mcp_prompts_get(struct td_mcp_server *s, const struct td_mcp_request *req,
		       json_t **result, struct td_mcp_error *e)
{
	const char *name, *values[MAX_PROMPT_ARGS] = { 0 };
	const json_t *args = json_object_get(req->params, "arguments");
	char *owned[MAX_PROMPT_ARGS] = { 0 }, *text = NULL;
	const struct prompt *p;
	int ret;

	(void)s;
	if (td_mcp_param_string(req->params, "name", true, &name, e))
		return -1;
	if (!(p = find_prompt(name)))
		return td_mcp_fail(e, TD_RPC_INVALID_PARAMS,
				   "unknown prompt '%.64s': prompts/list names the prompts", name);
	if (args && !json_is_object(args))
		return td_mcp_fail(e, TD_RPC_INVALID_PARAMS, "\"arguments\" must be an object");
	ret = read_args(p, args, values, owned, e);
	if (!ret && (text = p->text(values)))
		*result = json_pack("{s:s, s:[{s:s, s:{s:s, s:s}}]}", "description", p->description,
				    "messages", "role", "user", "content", "type", "text", "text", text);
	free(text);
	for (size_t a = 0; a < MAX_PROMPT_ARGS; a++)
		free(owned[a]);
	return ret;
}
