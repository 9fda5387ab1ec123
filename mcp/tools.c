// SPDX-License-Identifier: BSD-3-Clause
/*
 * The MCP tools: tools/list and tools/call.
 *
 * Each tool is a row of the table at the end: its arguments (from which
 * both its inputSchema and the check of a call's arguments are made), its
 * outputSchema, and a function that asks user/query/query.c, storage or the kb
 * and hands the answer to the CLI's own renderers: the JSON builders of
 * user/render/query_render.h for structuredContent, the table renderers for the
 * text. Nothing here computes a number.
 *
 * Size. A result is cut to the tool's limit argument and then, if the text
 * and structured content together still exceed RESULT_BUDGET bytes (about
 * 10,000 tokens), to fewer items; either cut says so in both.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain_render.h"
#include "collect.h"
#include "explain.h"
#include "mcp.h"
#include "parse.h"
#include "query.h"
#include "hot.h"
#include "query_render.h"
#include "format.h"

#define RESULT_BUDGET 32768 /* bytes of text plus structured content */
#define DEFAULT_THRESHOLD_PCT 1.0

/* ---- argument definitions ---- */

enum arg_type { ARG_STRING, ARG_INTEGER, ARG_NUMBER, ARG_BOOLEAN, ARG_LABELS };

struct arg_def {
	const char *name;
	enum arg_type type;
	bool required;
	double min, max; /* integers and numbers */
	double dflt;     /* integers and numbers: the value when absent; NAN: none */
	const char *description;
};

#define LABEL_EXAMPLE "e.g. {\"git_branch\": \"unstable\", \"test_name\": \"memtier-get\"}"
#define ARG_LABELS_FILTER \
	{ "labels", ARG_LABELS, false, 0, 0, NAN, \
	  "Only runs carrying all these labels, " LABEL_EXAMPLE "." }
#define ARG_PROCESS \
	{ "process", ARG_STRING, false, 0, 0, NAN, \
	  "Only runs of this process, as it was collected (e.g. redis-server)." }
#define ARG_LAST \
	{ "last", ARG_STRING, false, 0, 0, NAN, \
	  "Only runs started within this long before now: a number and a unit (ms, s, m, h, d), " \
	  "e.g. 24h or 7d." }
#define ARG_RUN_ID(required) \
	{ "run_id", ARG_STRING, required, 0, 0, NAN, \
	  "A run id, or a prefix of at least 8 characters that only one run starts with " \
	  "(list_profiling_runs shows them)." }
#define ARG_THREAD \
	{ "thread", ARG_STRING, false, 0, 0, NAN, \
	  "Threads instead of whole processes: a thread name (io_thd_3 and io_thd_* both mean " \
	  "the io_thd_* group) or a thread id." }
#define ARG_MAX_LEVEL(dflt, what) \
	{ "max_level", ARG_INTEGER, false, 1, 4, dflt, \
	  "Deepest Top-Down tree level (1-4); default: " what "." }
#define ARG_LIMIT(dflt, max, what) \
	{ "limit", ARG_INTEGER, false, 1, max, dflt, "At most this many " what "." }
#define ARG_NODE(what) \
	{ "node", ARG_STRING, true, 0, 0, NAN, \
	  what ": a tree node (DRAM_Bound) or its dotted path " \
	  "(Backend_Bound.Memory_Bound.DRAM_Bound)." }
#define ARG_COMPARE_OPTIONS \
	{ "threshold_pct", ARG_NUMBER, false, 0, 100, DEFAULT_THRESHOLD_PCT, \
	  "Smallest change, in percentage points of pipeline slots, that counts." }, \
	{ "alpha", ARG_NUMBER, false, 0.000001, 0.5, 0.05, \
	  "Welch's t-test p-value below which a change is real (with 2 or more runs a side)." }, \
	{ "by_thread_name", ARG_BOOLEAN, false, 0, 0, NAN, \
	  "Compare each thread name (io_thd_*, main, ...) instead of whole processes." }, \
	ARG_MAX_LEVEL(NAN, "every level"), \
	ARG_LIMIT(20, 500, "metrics, regressions and improvements first")
#define ARG_END { NULL, 0, false, 0, 0, NAN, NULL }

/* ---- output schemas ----
 * Written with ' for " to stay readable; schema_load() swaps them back. */

#define S_NUM "{'type':['number','null']}"
#define S_INT "{'type':'integer'}"
#define S_STR "{'type':'string'}"
#define S_OPT_STR "{'type':['string','null']}"
#define S_BOOL "{'type':'boolean'}"
#define S_LABELS "{'type':'object','additionalProperties':{'type':'string'}}"
#define S_TRUNCATION "'truncated':" S_BOOL ",'total':" S_INT
#define S_RUN_PROPS \
	"'run_id':" S_STR ",'started_ns':" S_INT ",'ended_ns':" S_INT \
	",'duration_s':{'type':'number'},'process':" S_OPT_STR ",'level':" S_INT \
	",'collector':" S_OPT_STR ",'labels':" S_LABELS ",'dropped':" S_INT \
	",'partial':" S_BOOL ",'threads':" S_INT
#define S_RUN "{'type':'object','properties':{" S_RUN_PROPS "},'required':['run_id','labels']}"
#define S_OBJECT(props, required) \
	"{'type':'object','properties':{" props "},'required':[" required "]}"
#define S_ARRAY(items) "{'type':'array','items':" items "}"

static const char bottlenecks_schema[] = S_OBJECT(
	"'runs':" S_INT ",'samples':" S_INT ",'bottlenecks':" S_ARRAY(S_OBJECT(
		"'rank':" S_INT ",'path':" S_STR ",'name':" S_STR ",'level':" S_INT
		",'value':" S_NUM ",'samples':" S_INT ",'confidence':" S_NUM
		",'low_confidence':" S_BOOL, "'path','value','samples'"))
	"," S_TRUNCATION, "'runs','samples','bottlenecks','truncated'");

#define S_TREE_PROPS \
	"'runs':" S_INT ",'samples':" S_INT ",'useful':" S_NUM ",'wasted':" S_NUM \
	",'nodes':" S_ARRAY(S_OBJECT( \
		"'path':" S_STR ",'name':" S_STR ",'level':" S_INT ",'value':" S_NUM \
		",'min':" S_NUM ",'max':" S_NUM ",'samples':" S_INT ",'crossed_samples':" S_INT \
		",'crossed':" S_BOOL ",'confidence':" S_NUM ",'low_confidence':" S_BOOL \
		",'useful':" S_BOOL ",'counted_ns':" S_INT, "'path','level','value','crossed'")) \
	",'pooled':" S_BOOL ",'model':" S_STR ",'hosts':" S_INT ",'oncpu_ns':" S_INT \
	"," S_TRUNCATION

static const char funnel_schema[] = S_OBJECT(S_TREE_PROPS, "'runs','nodes','truncated'");
static const char run_tree_schema[] = S_OBJECT(
	"'run_id':" S_STR "," S_TREE_PROPS, "'run_id','nodes','truncated'");

static const char runs_schema[] = S_OBJECT(
	"'runs':" S_ARRAY(S_RUN) "," S_TRUNCATION, "'runs','truncated'");

static const char runs_above_schema[] = S_OBJECT(
	"'runs':" S_ARRAY(S_OBJECT(S_RUN_PROPS ",'scope_key':" S_STR ",'path':" S_STR
				   ",'value':" S_NUM ",'crossed':" S_BOOL ",'confidence':" S_NUM
				   ",'low_confidence':" S_BOOL, "'run_id','path','value'"))
	"," S_TRUNCATION, "'runs','truncated'");

#define S_THREAD_LINE(key) \
	S_OBJECT(key ",'oncpu_ns':" S_INT ",'values':{'type':'object','additionalProperties':" \
		 S_NUM "},'low_confidence':" S_ARRAY(S_STR), "'oncpu_ns','values'")
/* run is absent only from an empty answer (no run matches: TD_QUERY_NOTHING). */
static const char threads_schema[] = S_OBJECT(
	"'run':" S_RUN ",'columns':" S_ARRAY(S_STR)
	",'threads':" S_ARRAY(S_THREAD_LINE("'tid':" S_STR ",'comm':" S_OPT_STR))
	",'thread_names':" S_ARRAY(S_THREAD_LINE("'name':" S_STR ",'threads':" S_INT))
	"," S_TRUNCATION, "'columns','threads','thread_names','truncated'");

#define S_SIDE S_OBJECT("'n':" S_INT ",'mean':" S_NUM ",'sd':" S_NUM ",'min':" S_NUM \
			",'max':" S_NUM, "'n','mean'")
static const char comparison_schema[] = S_OBJECT(
	"'test':" S_STR ",'effect_size':" S_STR ",'runs_a':" S_INT ",'runs_b':" S_INT
	",'regressions':" S_INT ",'improvements':" S_INT ",'metrics':" S_ARRAY(S_OBJECT(
		"'thread_name':" S_OPT_STR ",'path':" S_STR ",'name':" S_STR ",'level':" S_INT
		",'higher_is_better':" S_BOOL
		",'change':{'enum':['unchanged','regression','improvement','only-a','only-b']}"
		",'a':" S_SIDE ",'b':" S_SIDE ",'delta':" S_NUM ",'p_value':" S_NUM
		",'effect_size':" S_NUM ",'low_confidence':" S_BOOL,
		"'path','change','a','b','delta'"))
	"," S_TRUNCATION, "'runs_a','runs_b','regressions','improvements','metrics','truncated'");

static const char trend_schema[] = S_OBJECT(
	"'path':" S_STR ",'window':" S_INT ",'sigma':{'type':'number'},'anomalies':" S_INT
	",'points':" S_ARRAY(S_OBJECT(
		"'run_id':" S_STR ",'started_ns':" S_INT ",'labels':" S_LABELS
		",'scope_key':" S_STR ",'value':" S_NUM ",'rolling_mean':" S_NUM
		",'rolling_sd':" S_NUM ",'deviation':" S_NUM ",'anomaly':" S_BOOL
		",'low_confidence':" S_BOOL, "'run_id','value','anomaly'"))
	"," S_TRUNCATION, "'path','anomalies','points','truncated'");

#define S_PLACEMENT S_OBJECT("'path':" S_OPT_STR ",'level':" S_INT ",'parent':" S_OPT_STR \
			     ",'threshold':" S_OPT_STR ",'models':" S_ARRAY(S_STR), "'level'")
static const char explain_schema[] = S_OBJECT(
	"'name':" S_STR ",'vendor':" S_STR ",'title':" S_STR ",'kind':{'enum':['tree','info']}"
	",'computed':" S_BOOL ",'aliases':" S_ARRAY(S_STR) ",'path':" S_OPT_STR
	",'level':" S_INT ",'parent':" S_OPT_STR ",'threshold':" S_OPT_STR
	",'models':" S_ARRAY(S_STR) ",'placements':" S_ARRAY(S_PLACEMENT)
	",'notes':" S_ARRAY(S_STR) ",'description':" S_STR ",'causes':" S_ARRAY(S_STR)
	",'hints':" S_ARRAY(S_STR) ",'also':" S_ARRAY(S_OBJECT(
		"'vendor':" S_STR ",'name':" S_STR ",'title':" S_STR, "'name'"))
	",'locate':" S_OBJECT("'node':" S_STR ",'event':" S_OPT_STR ",'precise':" S_BOOL
			      ",'model':" S_OPT_STR, "'node'"),
	"'name','title','description','causes','hints'");

/* total and truncated count key=value pairs */
static const char labels_schema[] = S_OBJECT(
	"'runs':" S_INT ",'keys':" S_ARRAY(S_OBJECT(
		"'key':" S_STR ",'runs':" S_INT ",'distinct_values':" S_INT
		",'values':" S_ARRAY(S_OBJECT("'value':" S_STR ",'runs':" S_INT, "'value','runs'")),
		"'key','runs','distinct_values','values'"))
	"," S_TRUNCATION, "'runs','keys','truncated'");

static const char hot_schema[] = S_OBJECT(
	"'runs':" S_INT ",'event':" S_STR ",'unit':" S_STR ",'samples':" S_INT ",'lost_samples':" S_INT
	",'unresolved_frames':" S_NUM ",'functions':" S_ARRAY(S_OBJECT(
		"'rank':" S_INT ",'function':" S_STR ",'module':" S_OPT_STR ",'file':" S_OPT_STR
		",'line':{'type':['integer','null']},'self_samples':" S_INT ",'total_samples':" S_INT
		",'self':" S_NUM ",'total':" S_NUM, "'function','self','total'"))
	"," S_TRUNCATION, "'runs','samples','functions','truncated'");

static const char flamegraph_schema[] = S_OBJECT(
	"'runs':" S_INT ",'event':" S_STR ",'unit':" S_STR ",'samples':" S_INT
	",'stacks':" S_ARRAY(S_OBJECT("'stack':" S_STR ",'count':" S_INT, "'stack','count'"))
	"," S_TRUNCATION, "'runs','samples','stacks','truncated'");

static const char collect_schema[] = S_OBJECT(
	"'run_id':" S_STR ",'process':" S_STR ",'duration_s':{'type':'number'}"
	",'duration_capped':" S_BOOL ",'partial':" S_BOOL ",'dropped':" S_INT
	",'threads':" S_INT ",'intervals':" S_INT ",'events':" S_ARRAY(S_STR)
	",'tma':{'type':['object','null']}",
	"'run_id','process','duration_s','threads'");

/* ---- a call ---- */

struct tool;

struct tool_call {
	struct td_mcp_server *s;
	const struct tool *tool;
	const json_t *args;
	struct td_store *store;
	struct td_run_selection sel; /* labels, process, last, run_id: what the run filter is made of */
	char err[1024];
};

/* What the tool answers: the data and its rendering, or err. */
struct tool_output {
	json_t *structured;
	char *text;
};

/* What tools/call takes as arguments: more is refused as a tool error. */
#define MAX_ARGS_BYTES 65536
#define MAX_ARGS_DEPTH 2 /* {"labels": {"k": "v"}} */

struct tool {
	const char *name, *title, *description;
	const struct arg_def *args;
	const char *output_schema;
	bool read_only, needs_store;
	int (*run)(struct tool_call *c, struct tool_output *out); /* 0, or <0 with c->err */
	/*
	 * The structured answer when the question matches nothing
	 * (TD_QUERY_NOTHING): its schema's required fields, empty, in the
	 * schemas' quoting; run_tool adds the hint, and the run_id or node
	 * asked about.
	 */
	const char *empty;
};

static const struct arg_def *arg_def(const struct tool *t, const char *name)
{
	for (const struct arg_def *a = t->args; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

/* The argument as given, else its default (0 without one). */
static double arg_number(const struct tool_call *c, const char *name)
{
	const json_t *value = json_object_get(c->args, name);
	const struct arg_def *def = arg_def(c->tool, name);

	if (value)
		return json_number_value(value);
	return def && !isnan(def->dflt) ? def->dflt : 0;
}

static long arg_int(const struct tool_call *c, const char *name)
{
	return (long)arg_number(c, name);
}

static const char *arg_string(const struct tool_call *c, const char *name)
{
	return json_string_value(json_object_get(c->args, name));
}

static bool arg_bool(const struct tool_call *c, const char *name)
{
	return json_is_true(json_object_get(c->args, name));
}

static int fail(struct tool_call *c, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct tool_call *c, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return ret;
}

/* ---- checking arguments against the definitions ---- */

static const char *type_name(enum arg_type type)
{
	static const char *const names[] = {
		[ARG_STRING] = "a string", [ARG_INTEGER] = "an integer",
		[ARG_NUMBER] = "a number", [ARG_BOOLEAN] = "true or false",
		[ARG_LABELS] = "an object of string values",
	};

	return names[type];
}

static bool labels_valid(const json_t *value)
{
	const char *key;
	json_t *v;

	if (!json_is_object(value))
		return false;
	json_object_foreach((json_t *)value, key, v)
		if (!json_is_string(v))
			return false;
	return true;
}

static bool type_matches(const struct arg_def *def, const json_t *value)
{
	switch (def->type) {
	case ARG_STRING: return json_is_string(value);
	case ARG_INTEGER: /* JSON Schema counts 10.0 as an integer too */
		return json_is_integer(value) ||
		       (json_is_real(value) && json_real_value(value) == floor(json_real_value(value)));
	case ARG_NUMBER: return json_is_number(value);
	case ARG_BOOLEAN: return json_is_boolean(value);
	case ARG_LABELS: return labels_valid(value);
	}
	return false;
}

static bool in_range(const struct arg_def *def, const json_t *value)
{
	double v = json_number_value(value);

	if (def->type != ARG_INTEGER && def->type != ARG_NUMBER)
		return true;
	return v >= def->min && v <= def->max;
}

/* The argument names of t, "a, b, c", for messages. */
static void list_args(const struct tool *t, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (const struct arg_def *a = t->args; a->name && used < len; a++)
		used += snprintf(buf + used, len - used, "%s%s", used ? ", " : "", a->name);
}

/* How deep JSON nests: a scalar is 0, [] or {} 1. */
static size_t json_depth(const json_t *value, size_t limit)
{
	size_t deepest = 0, depth, i;
	const char *key;
	json_t *item;

	if (!limit || (!json_is_object(value) && !json_is_array(value)))
		return 0;
	if (json_is_object(value)) {
		json_object_foreach((json_t *)value, key, item)
			if ((depth = json_depth(item, limit - 1)) > deepest)
				deepest = depth;
	} else {
		json_array_foreach(value, i, item)
			if ((depth = json_depth(item, limit - 1)) > deepest)
				deepest = depth;
	}
	return deepest + 1;
}

/*
 * Every argument known, of its type, in range; every required one there;
 * the whole within MAX_ARGS_BYTES and MAX_ARGS_DEPTH. A failure is the
 * model's to fix, so it is a tool result with isError (MCP 2025-11-25,
 * SEP-1303), with the message naming the argument and what it takes.
 */
static int check_args(const struct tool *t, const json_t *args, struct td_mcp_error *e)
{
	const struct arg_def *def;
	const char *name;
	char names[512];
	json_t *value;
	size_t bytes = json_dumpb(args, NULL, 0, JSON_COMPACT);

	if (bytes > MAX_ARGS_BYTES)
		return td_mcp_fail(e, TD_RPC_INVALID_PARAMS, "%s: the arguments take %zu bytes; the limit is %d",
				   t->name, bytes, MAX_ARGS_BYTES);
	if (json_depth(args, MAX_ARGS_DEPTH + 1) > MAX_ARGS_DEPTH)
		return td_mcp_fail(e, TD_RPC_INVALID_PARAMS, "%s: the arguments nest deeper than %d levels, the "
				   "limit (labels is an object of strings)", t->name, MAX_ARGS_DEPTH);

	json_object_foreach((json_t *)args, name, value) {
		if (!(def = arg_def(t, name))) {
			list_args(t, names, sizeof(names));
			return td_mcp_fail(e, TD_RPC_INVALID_PARAMS,
					   "%s has no argument '%.64s'; its arguments are: %s",
					   t->name, name, names[0] ? names : "none");
		}
		if (!type_matches(def, value) || !in_range(def, value)) {
			if (def->type == ARG_INTEGER || def->type == ARG_NUMBER)
				return td_mcp_fail(e, TD_RPC_INVALID_PARAMS,
						   "%s: argument '%s' must be %s from %g to %g",
						   t->name, name, type_name(def->type), def->min,
						   def->max);
			return td_mcp_fail(e, TD_RPC_INVALID_PARAMS, "%s: argument '%s' must be %s",
					   t->name, name, type_name(def->type));
		}
	}
	for (def = t->args; def->name; def++)
		if (def->required && !json_object_get(args, def->name))
			return td_mcp_fail(e, TD_RPC_INVALID_PARAMS,
					   "%s needs the argument '%s': %s", t->name, def->name,
					   def->description);
	return 0;
}

/* ---- schemas ---- */

static json_t *schema_load(const char *text)
{
	char *copy = strdup(text);
	json_t *schema;

	for (char *p = copy; p && *p; p++)
		if (*p == '\'')
			*p = '"';
	schema = copy ? json_loads(copy, 0, NULL) : NULL;
	free(copy);
	return schema;
}

/* A bound or default, as an integer for integer arguments. */
static json_t *bound_json(const struct arg_def *a, double value)
{
	return a->type == ARG_INTEGER ? json_integer((json_int_t)value) : json_real(value);
}

static json_t *arg_schema(const struct arg_def *a)
{
	static const char *const types[] = {
		[ARG_STRING] = "string", [ARG_INTEGER] = "integer", [ARG_NUMBER] = "number",
		[ARG_BOOLEAN] = "boolean", [ARG_LABELS] = "object",
	};
	json_t *schema = json_pack("{s:s, s:s}", "type", types[a->type], "description",
				   a->description);

	if (!schema)
		return NULL;
	if (a->type == ARG_INTEGER || a->type == ARG_NUMBER) {
		json_object_set_new(schema, "minimum", bound_json(a, a->min));
		json_object_set_new(schema, "maximum", bound_json(a, a->max));
		if (!isnan(a->dflt))
			json_object_set_new(schema, "default", bound_json(a, a->dflt));
	}
	if (a->type == ARG_LABELS)
		json_object_set_new(schema, "additionalProperties", json_pack("{s:s}", "type", "string"));
	return schema;
}

static json_t *input_schema(const struct tool *t)
{
	json_t *props = json_object(), *required = json_array();

	for (const struct arg_def *a = t->args; a->name; a++) {
		json_object_set_new(props, a->name, arg_schema(a));
		if (a->required)
			json_array_append_new(required, json_string(a->name));
	}
	return json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props,
			 "required", required, "additionalProperties", false);
}

static json_t *tool_json(const struct tool *t)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:s, s:b, s:b, s:b, s:b}}",
			 "name", t->name, "title", t->title, "description", t->description,
			 "inputSchema", input_schema(t), "outputSchema",
			 schema_load(t->output_schema), "annotations", "title", t->title,
			 "readOnlyHint", t->read_only, "destructiveHint", false,
			 "idempotentHint", t->read_only, "openWorldHint", false);
}

/* ---- results and their size ---- */

/* Renders the first `shown` items of a result: the structured content and,
 * into text, the table. */
typedef json_t *(*view_fn)(const void *result, size_t shown, FILE *text);

static size_t output_size(const struct tool_output *out)
{
	return json_dumpb(out->structured, NULL, 0, JSON_COMPACT) + strlen(out->text);
}

static void output_release(struct tool_output *out)
{
	json_decref(out->structured);
	free(out->text);
	memset(out, 0, sizeof(*out));
}

static int render_view(const void *result, size_t shown, view_fn view, struct tool_output *out)
{
	struct td_mcp_text text;

	if (td_mcp_text_open(&text))
		return -ENOMEM;
	out->structured = view(result, shown, text.out);
	td_mcp_text_close(&text);
	out->text = text.text;
	if (!out->structured || !out->text) {
		output_release(out);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Appends the truncation fields and notice. total is exact, or with
 * more_exist only known to exceed what was shown.
 */
static int mark_truncation(struct tool_call *c, struct tool_output *out, size_t shown,
			   size_t total, bool more_exist, bool by_budget)
{
	const struct arg_def *limit = arg_def(c->tool, "limit");
	bool truncated = shown < total || more_exist;
	char *text = NULL, of[48] = "";
	int n;

	json_object_set_new(out->structured, "truncated", json_boolean(truncated));
	if (!more_exist)
		json_object_set_new(out->structured, "total", json_integer((json_int_t)total));
	if (!truncated)
		return 0;
	if (!more_exist)
		snprintf(of, sizeof(of), " of %zu", total);
	if (by_budget)
		n = asprintf(&text, "%s\n[showing %zu%s: more would not fit in one answer; narrow the "
			     "question with labels, process, last or run_id]\n", out->text, shown, of);
	else
		n = asprintf(&text, "%s\n[showing %zu%s: raise limit (up to %g) or narrow the "
			     "question with labels, process, last or run_id]\n", out->text, shown,
			     of, limit ? limit->max : (double)total);
	if (n < 0)
		return -ENOMEM;
	free(out->text);
	out->text = text;
	return 0;
}

/*
 * The first min(available, limit) items, fewer if they would not fit
 * RESULT_BUDGET: each try scales the count by how far over it was.
 * available is the exact total unless more_exist says there are more.
 */
static int fit(struct tool_call *c, const void *result, size_t available, bool more_exist,
	       size_t limit, view_fn view, struct tool_output *out)
{
	size_t shown = available < limit ? available : limit, size;
	bool by_budget = false;

	for (;;) {
		if (render_view(result, shown, view, out))
			return fail(c, -ENOMEM, "out of memory rendering the answer");
		size = output_size(out);
		if (size <= RESULT_BUDGET || shown == 0)
			break;
		output_release(out);
		by_budget = true;
		shown = (size_t)((double)shown * RESULT_BUDGET / size * 0.9);
	}
	if (mark_truncation(c, out, shown, available, more_exist, by_budget))
		return fail(c, -ENOMEM, "out of memory rendering the answer");
	return 0;
}

static struct td_render table_to(FILE *text)
{
	return (struct td_render){ .out = text, .format = TD_FORMAT_TABLE };
}

/* ---- run filters ---- */

int td_mcp_labels_from_json(const json_t *object, struct td_labels *labels, char *err,
			    size_t errlen)
{
	const char *key;
	json_t *value;

	json_object_foreach((json_t *)object, key, value) {
		char *pair = NULL;
		int ret;

		if (strchr(key, '=')) {
			snprintf(err, errlen, "bad label key '%.64s': a key cannot hold '='; pass "
				 "labels as {\"git_branch\": \"unstable\"}", key);
			return -EINVAL;
		}
		if (asprintf(&pair, "%s=%s", key, json_string_value(value)) < 0) {
			snprintf(err, errlen, "out of memory reading labels");
			return -ENOMEM;
		}
		ret = td_labels_parse_arg(labels, pair, err, errlen);
		free(pair);
		if (ret)
			return ret;
	}
	return 0;
}

static int labels_from_json(struct tool_call *c, const json_t *object, struct td_labels *labels)
{
	return td_mcp_labels_from_json(object, labels, c->err, sizeof(c->err));
}

/*
 * labels, process, last and run_id, as a run filter (pointing into c):
 * the selection the CLI's --label, --process, --last and --run-id make,
 * through the same query function.
 */
static int run_filter(struct tool_call *c, struct td_run_filter *filter)
{
	const char *last = arg_string(c, "last");
	int ret = labels_from_json(c, json_object_get(c->args, "labels"), &c->sel.labels);

	c->sel.process = arg_string(c, "process");
	c->sel.run_id = arg_string(c, "run_id");
	if (!ret && c->sel.process && !*c->sel.process)
		ret = fail(c, -EINVAL, "argument 'process' takes a process name, e.g. \"redis-server\"");
	if (!ret && last && td_parse_duration_ns(last, "argument 'last'", &c->sel.last_ns, c->err, sizeof(c->err)))
		ret = -EINVAL;
	if (!ret)
		ret = td_run_selection_filter(&c->sel, c->store, filter, c->err, sizeof(c->err));
	return ret;
}

static int query_from_args(struct tool_call *c, struct td_query *q)
{
	*q = (struct td_query){ .thread = arg_string(c, "thread"),
				.max_level = (int)arg_int(c, "max_level") };
	return run_filter(c, &q->runs);
}

/* ---- list_profiling_runs ---- */

struct run_list {
	struct td_run_summary *runs;
	size_t count;
};

static void run_line(FILE *text, const struct td_run_summary *r)
{
	char started[32], duration[32];

	fprintf(text, "%s  %s  %s  %s  %zu threads", r->id,
		td_format_time(r->started_ns, started, sizeof(started)),
		td_format_duration(r->ended_ns - r->started_ns, duration, sizeof(duration)),
		r->process ? r->process : "-", r->nr_threads);
	for (size_t l = 0; l < r->labels.count; l++)
		fprintf(text, "%s%s=%s", l ? "," : "  ", r->labels.items[l].key,
			r->labels.items[l].value);
	fprintf(text, "%s\n", r->partial ? " (partial)" : "");
}

static json_t *runs_view(const void *result, size_t shown, FILE *text)
{
	const struct run_list *list = result;
	json_t *runs = json_array();

	fprintf(text, "%zu run%s, newest first\n", shown, shown == 1 ? "" : "s");
	for (size_t i = 0; i < shown; i++) {
		json_array_append_new(runs, td_run_summary_json(&list->runs[i]));
		run_line(text, &list->runs[i]);
	}
	return json_pack("{s:o}", "runs", runs);
}

static int list_profiling_runs(struct tool_call *c, struct tool_output *out)
{
	struct td_run_filter filter;
	struct run_list list = { 0 };
	size_t limit = arg_int(c, "limit");
	int ret = run_filter(c, &filter);

	if (ret)
		return ret;
	filter.limit = limit + 1; /* one more tells whether there are more */
	ret = td_store_list_runs(c->store, &filter, &list.runs, &list.count, c->err, sizeof(c->err));
	if (!ret && !list.count)
		ret = fail(c, TD_QUERY_NOTHING, "no stored run matches these filters; without filters "
			   "list_profiling_runs shows the processes and labels stored, and "
			   "collect_topdown or `topdown import` adds runs");
	if (!ret)
		ret = fit(c, &list, list.count, list.count > limit, limit, runs_view, out);
	td_run_summaries_free(list.runs, list.count);
	return ret;
}

/* ---- list_labels ---- */

/*
 * The items are the key=value pairs, taken rank by rank: each key's most
 * frequent value, then each key's second, and so on. A cut to fit keeps
 * every key with its most frequent values rather than the first keys whole.
 */
static json_t *labels_view(const void *result, size_t shown, FILE *text)
{
	const struct td_label_set *set = result;
	struct td_label_set view = *set;
	struct td_render r = table_to(text);
	bool more = true;
	json_t *json;

	if (!(view.keys = calloc(set->count + 1, sizeof(*view.keys))))
		return NULL;
	for (size_t i = 0; i < set->count; i++) {
		view.keys[i] = set->keys[i];
		view.keys[i].count = 0;
	}
	for (size_t rank = 0; shown && more; rank++) {
		more = false;
		for (size_t i = 0; i < set->count && shown; i++) {
			if (set->keys[i].count <= rank)
				continue;
			view.keys[i].count++;
			shown--;
			more = true;
		}
	}
	td_render_labels(&r, &view);
	json = td_label_set_json(&view);
	free(view.keys);
	return json;
}

static int list_labels(struct tool_call *c, struct tool_output *out)
{
	struct td_label_set *set = NULL;
	struct td_run_filter filter;
	size_t kept = 0, total = 0;
	int ret = run_filter(c, &filter);

	if (!ret)
		ret = td_query_labels(c->store, &filter, arg_string(c, "key"), arg_int(c, "limit"),
				      &set, c->err, sizeof(c->err));
	if (ret)
		return ret;
	for (size_t i = 0; i < set->count; i++) {
		kept += set->keys[i].count;
		total += set->keys[i].nr_values;
	}
	ret = fit(c, set, total, false, kept, labels_view, out);
	td_label_set_free(set);
	return ret;
}

/* ---- query_bottlenecks ---- */

static json_t *bottlenecks_view(const void *result, size_t shown, FILE *text)
{
	struct td_bottlenecks view = *(const struct td_bottlenecks *)result;
	struct td_render r = table_to(text);

	view.count = shown;
	td_render_bottlenecks(&r, &view);
	return td_bottlenecks_json(&view);
}

static int query_bottlenecks(struct tool_call *c, struct tool_output *out)
{
	struct td_bottlenecks *b = NULL;
	struct td_query q;
	int ret = query_from_args(c, &q);

	if (!ret)
		ret = td_query_bottlenecks(c->store, &q, &b, c->err, sizeof(c->err));
	if (!ret)
		ret = fit(c, b, b->count, false, arg_int(c, "limit"), bottlenecks_view, out);
	td_bottlenecks_free(b);
	return ret;
}

/* ---- query_by_bottleneck ---- */

static json_t *runs_above_view(const void *result, size_t shown, FILE *text)
{
	struct td_run_matches view = *(const struct td_run_matches *)result;
	struct td_render r = table_to(text);

	view.count = shown;
	td_render_run_matches(&r, &view);
	return td_run_matches_json(&view);
}

static int query_by_bottleneck(struct tool_call *c, struct tool_output *out)
{
	struct td_run_matches *m = NULL;
	struct td_query q;
	int ret = query_from_args(c, &q);

	if (!ret)
		ret = td_query_runs_above(c->store, &q, arg_string(c, "node"),
					  arg_number(c, "min_pct") / 100, &m, c->err, sizeof(c->err));
	if (!ret)
		ret = fit(c, m, m->count, false, arg_int(c, "limit"), runs_above_view, out);
	td_run_matches_free(m);
	return ret;
}

/* ---- get_funnel and get_run_tree ---- */

static json_t *funnel_view(const void *result, size_t shown, FILE *text)
{
	struct td_tree view = *(const struct td_tree *)result;
	struct td_render r = table_to(text);

	view.nr_nodes = shown;
	td_render_funnel(&r, &view);
	return td_tree_json(&view);
}

static json_t *tree_view(const void *result, size_t shown, FILE *text)
{
	struct td_tree view = *(const struct td_tree *)result;
	struct td_render r = table_to(text);

	view.nr_nodes = shown;
	td_render_tree(&r, &view);
	return td_tree_json(&view);
}

static int tree_tool(struct tool_call *c, view_fn view, struct tool_output *out)
{
	struct td_tree *t = NULL;
	struct td_query q;
	int ret = query_from_args(c, &q);

	q.top_n = arg_int(c, "top_children");
	q.pooled = arg_bool(c, "pooled");
	if (!ret)
		ret = td_query_tree(c->store, &q, &t, c->err, sizeof(c->err));
	if (!ret)
		ret = fit(c, t, t->nr_nodes, false, t->nr_nodes, view, out);
	if (!ret && q.runs.run_id)
		json_object_set_new(out->structured, "run_id", json_string(q.runs.run_id));
	td_tree_free(t);
	return ret;
}

static int get_funnel(struct tool_call *c, struct tool_output *out)
{
	return tree_tool(c, funnel_view, out);
}

static int get_run_tree(struct tool_call *c, struct tool_output *out)
{
	return tree_tool(c, tree_view, out);
}

/* ---- get_thread_breakdown ---- */

static json_t *threads_view(const void *result, size_t shown, FILE *text)
{
	struct td_thread_breakdown view = *(const struct td_thread_breakdown *)result;
	struct td_render r = table_to(text);

	view.nr_threads = view.nr_threads < shown ? view.nr_threads : shown;
	view.nr_groups = view.nr_groups < shown ? view.nr_groups : shown;
	td_render_threads(&r, &view);
	return td_thread_breakdown_json(&view);
}

static int get_thread_breakdown(struct tool_call *c, struct tool_output *out)
{
	struct td_thread_breakdown *t = NULL;
	struct td_query q;
	int ret = query_from_args(c, &q);

	if (!ret)
		ret = td_query_threads(c->store, &q, arg_string(c, "sort"), &t, c->err,
				       sizeof(c->err));
	if (!ret)
		ret = fit(c, t, t->nr_threads > t->nr_groups ? t->nr_threads : t->nr_groups,
			  false, arg_int(c, "limit"), threads_view, out);
	td_thread_breakdown_free(t);
	return ret;
}

/* ---- get_hot_functions ---- */

static json_t *hot_view(const void *result, size_t shown, FILE *text)
{
	struct td_hot view = *(const struct td_hot *)result;
	struct td_render r = table_to(text);

	view.nr_functions = shown;
	td_render_hot(&r, &view);
	return td_hot_json(&view);
}

static int get_hot_functions(struct tool_call *c, struct tool_output *out)
{
	struct td_hot *hot = NULL;
	struct td_query q;
	int ret = query_from_args(c, &q);

	if (!ret)
		ret = td_query_hot(c->store, &q, &hot, c->err, sizeof(c->err));
	if (!ret)
		ret = fit(c, hot, hot->nr_functions, false, arg_int(c, "limit"), hot_view, out);
	td_hot_free(hot);
	return ret;
}

/* ---- get_flamegraph ---- */

static int by_count(const void *a, const void *b)
{
	const struct td_folded *x = a, *y = b;

	return x->count != y->count ? (x->count > y->count ? -1 : 1) : strcmp(x->stack, y->stack);
}

/* The heaviest stacks: the folded set is sorted by weight before fit() cuts it. */
static json_t *folded_view(const void *result, size_t shown, FILE *text)
{
	struct td_folded_set view = *(const struct td_folded_set *)result;
	json_t *stacks = json_array();

	view.nr_stacks = shown;
	td_render_folded(text, &view);
	for (size_t i = 0; i < shown; i++)
		json_array_append_new(stacks, json_pack("{s:s, s:I}", "stack", view.stacks[i].stack, "count",
							(json_int_t)view.stacks[i].count));
	return json_pack("{s:I, s:s, s:s, s:I, s:o}", "runs", (json_int_t)view.nr_runs, "event", view.event,
			 "unit", view.unit, "samples", (json_int_t)view.samples, "stacks", stacks);
}

static int get_flamegraph(struct tool_call *c, struct tool_output *out)
{
	struct td_folded_set *set = NULL;
	struct td_query q;
	int ret = query_from_args(c, &q);

	if (!ret)
		ret = td_query_folded(c->store, &q, NULL, &set, c->err, sizeof(c->err));
	if (!ret) {
		qsort(set->stacks, set->nr_stacks, sizeof(*set->stacks), by_count);
		ret = fit(c, set, set->nr_stacks, false, arg_int(c, "limit"), folded_view, out);
	}
	td_folded_set_free(set);
	return ret;
}

/* ---- query_trend ---- */

static json_t *trend_view(const void *result, size_t shown, FILE *text)
{
	struct td_trend view = *(const struct td_trend *)result;
	struct td_render r = table_to(text);

	/* the newest points: the end of the array */
	view.points += view.count - shown;
	view.count = shown;
	view.nr_anomalies = 0;
	for (size_t i = 0; i < shown; i++)
		view.nr_anomalies += view.points[i].anomaly;
	td_render_trend(&r, &view);
	return td_trend_json(&view);
}

static int query_trend(struct tool_call *c, struct tool_output *out)
{
	struct td_trend *t = NULL;
	struct td_query q;
	int ret = query_from_args(c, &q);

	if (!ret)
		ret = td_query_trend(c->store, &q, arg_string(c, "node"), arg_int(c, "window"),
				     arg_number(c, "sigma"), &t, c->err, sizeof(c->err));
	if (!ret)
		ret = fit(c, t, t->count, false, arg_int(c, "limit"), trend_view, out);
	td_trend_free(t);
	return ret;
}

/* ---- compare_runs and compare_by_labels ---- */

static json_t *comparison_view(const void *result, size_t shown, FILE *text)
{
	struct td_comparison view = *(const struct td_comparison *)result;
	struct td_render r = table_to(text);

	view.count = shown;
	td_render_comparison(&r, &view);
	return td_comparison_json(&view);
}

static int compare(struct tool_call *c, struct td_compare_args *args, struct tool_output *out)
{
	struct td_comparison *result = NULL;
	int ret;

	args->by_thread_name = arg_bool(c, "by_thread_name");
	args->max_level = (int)arg_int(c, "max_level");
	args->threshold = arg_number(c, "threshold_pct") / 100;
	args->alpha = arg_number(c, "alpha");
	ret = td_compare(c->store, args, &result, c->err, sizeof(c->err));
	if (!ret)
		ret = fit(c, result, result->count, false, arg_int(c, "limit"), comparison_view, out);
	td_comparison_free(result);
	return ret;
}

static int compare_runs(struct tool_call *c, struct tool_output *out)
{
	char id_a[TD_RUN_ID_LEN], id_b[TD_RUN_ID_LEN];
	struct td_compare_args args = { .a.run_id = id_a, .b.run_id = id_b };
	int ret = td_store_resolve_run_id(c->store, arg_string(c, "run_a"), id_a, c->err,
					  sizeof(c->err));

	if (!ret)
		ret = td_store_resolve_run_id(c->store, arg_string(c, "run_b"), id_b, c->err,
					      sizeof(c->err));
	return ret ? ret : compare(c, &args, out);
}

/* One side: its labels on top of the shared filter's. */
static int side_filter(struct tool_call *c, const struct td_run_filter *shared, const char *name,
		       struct td_labels *labels, struct td_run_filter *side)
{
	int ret = labels_from_json(c, json_object_get(c->args, name), labels);

	if (!ret && td_labels_copy(labels, shared->labels) < 0)
		ret = fail(c, -ENOMEM, "out of memory reading labels");
	*side = *shared;
	side->labels = labels;
	return ret;
}

static int compare_by_labels(struct tool_call *c, struct tool_output *out)
{
	struct td_labels labels_a, labels_b;
	struct td_compare_args args = { 0 };
	struct td_run_filter shared;
	int ret;

	td_labels_init(&labels_a);
	td_labels_init(&labels_b);
	ret = run_filter(c, &shared);
	if (!ret)
		ret = side_filter(c, &shared, "labels_a", &labels_a, &args.a);
	if (!ret)
		ret = side_filter(c, &shared, "labels_b", &labels_b, &args.b);
	if (!ret)
		ret = compare(c, &args, out);
	td_labels_free(&labels_a);
	td_labels_free(&labels_b);
	return ret;
}

/* ---- explain_metric ---- */

static int explain_metric(struct tool_call *c, struct tool_output *out)
{
	const struct td_kb *kb = td_kb_load(c->err, sizeof(c->err));
	struct td_explanation *e = NULL;
	struct td_mcp_text text;
	int ret;

	if (!kb)
		return -EINVAL;
	ret = td_explain_lookup(kb, arg_string(c, "name"), arg_string(c, "model"), &e, c->err,
				sizeof(c->err));
	if (ret)
		return ret;
	if (td_mcp_text_open(&text) == 0) {
		td_explain_print(text.out, e);
		td_mcp_text_close(&text);
	}
	out->text = text.text;
	out->structured = td_explain_json(e);
	td_explanation_free(e);
	if (!out->text || !out->structured) {
		output_release(out);
		return fail(c, -ENOMEM, "out of memory explaining the metric");
	}
	return 0;
}

/* ---- the table ---- */

static const struct arg_def list_runs_args[] = {
	ARG_LABELS_FILTER, ARG_PROCESS, ARG_LAST, ARG_LIMIT(20, 200, "runs, newest first"), ARG_END,
};

static const struct arg_def labels_args[] = {
	{ "key", ARG_STRING, false, 0, 0, NAN,
	  "Only this label key and its values (e.g. git_branch); default: every key." },
	ARG_LABELS_FILTER, ARG_PROCESS, ARG_LAST,
	ARG_LIMIT(10, 1000, "values per key, the most frequent"), ARG_END,
};

static const struct arg_def bottlenecks_args[] = {
	ARG_LABELS_FILTER, ARG_PROCESS, ARG_LAST, ARG_RUN_ID(false), ARG_THREAD,
	ARG_MAX_LEVEL(NAN, "every level"), ARG_LIMIT(10, 100, "bottlenecks, most frequent first"),
	ARG_END,
};

static const struct arg_def by_bottleneck_args[] = {
	ARG_NODE("The node to look for"),
	{ "min_pct", ARG_NUMBER, false, 0, 100, 0,
	  "Only runs where the node takes at least this percentage of pipeline slots." },
	ARG_LABELS_FILTER, ARG_PROCESS, ARG_LAST, ARG_THREAD,
	ARG_LIMIT(20, 200, "runs, largest value first"), ARG_END,
};

#define ARG_TOP_CHILDREN \
	{ "top_children", ARG_INTEGER, false, 1, 50, NAN, \
	  "Keep only this many children of each node, the largest; default: all." }

static const struct arg_def funnel_args[] = {
	ARG_LABELS_FILTER, ARG_PROCESS, ARG_LAST, ARG_RUN_ID(false), ARG_THREAD,
	ARG_MAX_LEVEL(NAN, "every level"), ARG_TOP_CHILDREN,
	{ "pooled", ARG_BOOLEAN, false, 0, 0, NAN,
	  "One tree from the matching runs' counts pooled, each event over all the time its counter "
	  "group counted, with that time per node (counted_ns), instead of the mean of each run's tree: "
	  "for hosts with few counters, whose windows each count some groups only, and for hosts "
	  "of one label set whose group rotations were offset. The runs must share one CPU model." },
	ARG_END,
};

static const struct arg_def run_tree_args[] = {
	ARG_RUN_ID(true), ARG_THREAD, ARG_MAX_LEVEL(NAN, "every level"), ARG_TOP_CHILDREN,
	ARG_END,
};

static const struct arg_def threads_args[] = {
	ARG_RUN_ID(false), ARG_LABELS_FILTER, ARG_PROCESS, ARG_LAST, ARG_THREAD,
	{ "sort", ARG_STRING, false, 0, 0, NAN,
	  "Sort by this node (e.g. Backend_Bound), largest first; default: by on-CPU time." },
	ARG_MAX_LEVEL(1, "1"), ARG_LIMIT(20, 500, "threads and thread names each"), ARG_END,
};

static const struct arg_def hot_args[] = {
	ARG_RUN_ID(false), ARG_LABELS_FILTER, ARG_PROCESS, ARG_LAST, ARG_THREAD,
	ARG_LIMIT(20, 500, "functions, hottest first"), ARG_END,
};

static const struct arg_def flamegraph_args[] = {
	ARG_RUN_ID(false), ARG_LABELS_FILTER, ARG_PROCESS, ARG_LAST, ARG_THREAD,
	ARG_LIMIT(200, 5000, "stacks, heaviest first"), ARG_END,
};

static const struct arg_def trend_args[] = {
	ARG_NODE("The node to follow"), ARG_LABELS_FILTER, ARG_PROCESS, ARG_LAST, ARG_THREAD,
	{ "window", ARG_INTEGER, false, TD_TREND_MIN_HISTORY, 1000, 10,
	  "How many earlier runs each point is judged against." },
	{ "sigma", ARG_NUMBER, false, 0.1, 100, 3,
	  "How many standard deviations from that window make an anomaly." },
	ARG_LIMIT(50, 1000, "points, the newest"), ARG_END,
};

static const struct arg_def compare_runs_args[] = {
	{ "run_a", ARG_STRING, true, 0, 0, NAN, "The baseline run: its id or a unique prefix." },
	{ "run_b", ARG_STRING, true, 0, 0, NAN,
	  "The run compared against it: its id or a unique prefix." },
	ARG_COMPARE_OPTIONS, ARG_END,
};

static const struct arg_def compare_labels_args[] = {
	{ "labels_a", ARG_LABELS, true, 0, 0, NAN,
	  "The baseline runs: those with all these labels, e.g. {\"git_branch\": \"main\"}." },
	{ "labels_b", ARG_LABELS, true, 0, 0, NAN,
	  "The runs compared against them, e.g. {\"git_branch\": \"feature\"}." },
	{ "labels", ARG_LABELS, false, 0, 0, NAN,
	  "Labels both sides must carry too, e.g. {\"test_name\": \"memtier-get\"}." },
	ARG_PROCESS, ARG_LAST, ARG_COMPARE_OPTIONS, ARG_END,
};

static const struct arg_def explain_args[] = {
	{ "name", ARG_STRING, true, 0, 0, NAN,
	  "A metric: a tree node (DRAM_Bound), its dotted path, or a vendor name "
	  "(tma_dram_bound, backend_bound); any case." },
	{ "model", ARG_STRING, false, 0, 0, NAN,
	  "Only as this CPU model defines it (spr, skx, neoverse-v2, zen4, ...)." },
	ARG_END,
};

static const struct arg_def collect_args[] = {
	{ "process", ARG_STRING, false, 0, 0, NAN,
	  "Collect every process of this name (comm or executable basename), and ones that "
	  "start during the window." },
	{ "pid", ARG_STRING, false, 0, 0, NAN, "Collect these process ids: 4242 or 4242,4243." },
	{ "system_wide", ARG_BOOLEAN, false, 0, 0, NAN, "Collect every process." },
	{ "duration", ARG_STRING, false, 0, 0, NAN,
	  "How long: a number and a unit (ms, s, m, h), e.g. 30s; default 10s; capped by the "
	  "server's --max-duration." },
	{ "interval", ARG_STRING, false, 0, 0, NAN, "Length of each interval inside the run; default 1s." },
	{ "level", ARG_INTEGER, false, 1, 4, 1, "Depth of the Top-Down tree to count." },
	{ "cpu_model", ARG_STRING, false, 0, 0, NAN, "The CPU's model instead of the detected one." },
	{ "labels", ARG_LABELS, false, 0, 0, NAN, "Labels for the run, " LABEL_EXAMPLE "." },
	ARG_END,
};

/* collect_topdown runs in the server's loop (mcp/collect.c); not through run. */
static const struct tool tools[] = {
	{ "collect_topdown", "Collect a Top-Down profile",
	  "Counts a running process (or pids, or the whole system) for a while and stores one "
	  "labeled run with its Top-Down tree per thread, thread name and process. Say what to "
	  "count with process, pid or system_wide, and how long with duration; labels tag the run. "
	  "Needs the server started with --allow-collect, root or CAP_BPF+CAP_PERFMON, and a "
	  "hardware PMU for the tree. Sends progress when the request has a progressToken. Next: "
	  "query_bottlenecks or get_run_tree with the run_id it returns.",
	  collect_args, collect_schema, false, false, NULL, NULL },
	{ "query_bottlenecks", "Top bottlenecks",
	  "The bottlenecks of the matching runs, most frequent first: per run (and process or "
	  "thread), the deepest Top-Down nodes above their thresholds, with their mean share of "
	  "pipeline slots. The first question to ask about a process; narrow it with process, "
	  "labels, last, run_id or thread. Next: explain_metric on a node for its causes, "
	  "get_hot_functions for the code, query_by_bottleneck for the other runs it hurts.",
	  bottlenecks_args, bottlenecks_schema, true, true, query_bottlenecks,
	  "{'runs':0,'samples':0,'bottlenecks':[],'truncated':false}" },
	{ "query_by_bottleneck", "Runs where a node is high",
	  "The runs where one Top-Down node reaches at least min_pct of pipeline slots, largest "
	  "first: which tests, branches or builds suffer from it. node names it (from "
	  "query_bottlenecks); labels, process and last narrow the runs. Next: compare_runs "
	  "against a run without it, or query_trend on the node.",
	  by_bottleneck_args, runs_above_schema, true, true, query_by_bottleneck,
	  "{'runs':[],'truncated':false}" },
	{ "get_funnel", "Where the pipeline slots go",
	  "The Top-Down tree averaged over the matching runs, as a funnel: useful work "
	  "(Retiring) against what is wasted, each node's share and whether it crosses its "
	  "threshold. Narrow it with labels, process, last or run_id; max_level and top_children "
	  "trim it. Next: explain_metric on a wasteful node, get_run_tree for one run.",
	  funnel_args, funnel_schema, true, true, get_funnel,
	  "{'runs':0,'nodes':[],'truncated':false}" },
	{ "compare_runs", "Compare two runs",
	  "What changed from run_a to run_b, node by node: regressions and improvements beyond "
	  "threshold_pct, first. list_profiling_runs gives the run ids; for many runs per side use "
	  "compare_by_labels. Next: explain_metric on a regressed node.",
	  compare_runs_args, comparison_schema, true, true, compare_runs,
	  "{'runs_a':0,'runs_b':0,'regressions':0,'improvements':0,'metrics':[],'truncated':false}" },
	{ "compare_by_labels", "Compare two sets of runs",
	  "What changed between the runs with labels_a and those with labels_b (e.g. two "
	  "branches or builds): per node, the means, the change, Welch's t-test p-value and "
	  "Cohen's d; regressions and improvements first. list_labels shows the labels there are. "
	  "Next: explain_metric on a regressed node, get_hot_functions on each side for the code.",
	  compare_labels_args, comparison_schema, true, true, compare_by_labels,
	  "{'runs_a':0,'runs_b':0,'regressions':0,'improvements':0,'metrics':[],'truncated':false}" },
	{ "explain_metric", "Explain a Top-Down metric",
	  "What a Top-Down node or metric means, its place in the tree and threshold, typical "
	  "causes, and what to do next (counters to check, perf record or topdown commands). name "
	  "is the node, as query_bottlenecks or get_funnel show it; model narrows it to one CPU. "
	  "Next: query_by_bottleneck for the runs it is high in.",
	  explain_args, explain_schema, true, false, explain_metric, NULL },
	{ "list_profiling_runs", "List stored runs",
	  "The stored runs, newest first, with their ids, process, duration, thread count and "
	  "labels. Narrow it with labels, process or last. Next: a run_id to get_run_tree, "
	  "get_thread_breakdown or compare_runs.",
	  list_runs_args, runs_schema, true, true, list_profiling_runs,
	  "{'runs':[],'truncated':false}" },
	{ "list_labels", "List label keys and values",
	  "The label keys of the stored runs (git_branch, test_name, ...) and each key's values "
	  "with how many runs carry them, most frequent first: what the labels arguments of the "
	  "other tools can match (query_bottlenecks, compare_by_labels, ...). key narrows it to one "
	  "key. total and truncated count key=value pairs.",
	  labels_args, labels_schema, true, true, list_labels,
	  "{'runs':0,'keys':[],'truncated':false}" },
	{ "get_thread_breakdown", "Per-thread Top-Down",
	  "The Top-Down values of each thread and each thread name (io_thd_* and such) of one "
	  "run (run_id, or the newest matching run), busiest first or sorted by a node (sort). "
	  "Next: a thread name as the thread argument of query_bottlenecks or get_hot_functions.",
	  threads_args, threads_schema, true, true, get_thread_breakdown,
	  "{'columns':[],'threads':[],'thread_names':[],'truncated':false}" },
	{ "get_run_tree", "Top-Down tree of a run",
	  "Every node of one run's Top-Down tree (run_id, from list_profiling_runs) with its "
	  "value, range, confidence and threshold; thread narrows it to threads. Next: "
	  "explain_metric on a node above its threshold.",
	  run_tree_args, run_tree_schema, true, true, get_run_tree,
	  "{'run_id':'','nodes':[],'truncated':false}" },
	{ "get_hot_functions", "Where the samples land",
	  "The functions where the sampled event landed in the matching runs (collected with "
	  "--sample): each one's self share (samples in it) and total share (samples with it on the "
	  "stack), hottest first, with its module and source line. After a bottleneck: which code. "
	  "Narrow it with run_id, process, labels or thread. Next: get_flamegraph for the stacks.",
	  hot_args, hot_schema, true, true, get_hot_functions,
	  "{'runs':0,'event':'','unit':'','samples':0,'functions':[],'truncated':false}" },
	{ "get_flamegraph", "Sampled stacks (folded)",
	  "The sampled stacks of the matching runs as folded text (group;frame;...;frame COUNT, "
	  "outermost frame first, led by the thread name group), heaviest first, cut to fit one "
	  "answer: what a flame graph is drawn from. `topdown flamegraph` draws it as an SVG. "
	  "Narrow it with run_id, process, labels or thread. get_hot_functions sums it per function.",
	  flamegraph_args, flamegraph_schema, true, true, get_flamegraph,
	  "{'runs':0,'event':'','unit':'','samples':0,'stacks':[],'truncated':false}" },
	{ "query_trend", "A node over time",
	  "One node's value run after run, oldest first, each judged against the window of runs "
	  "before it; points beyond sigma standard deviations are flagged as anomalies. labels "
	  "(e.g. one branch) and process narrow the runs. Next: compare_runs between an anomaly "
	  "and the run before it.",
	  trend_args, trend_schema, true, true, query_trend,
	  "{'path':'','anomalies':0,'points':[],'truncated':false}" },
};

#define NR_TOOLS (sizeof(tools) / sizeof(tools[0]))

static const struct tool *find_tool(const char *name)
{
	for (size_t i = 0; i < NR_TOOLS; i++)
		if (!strcmp(tools[i].name, name))
			return &tools[i];
	return NULL;
}

int td_mcp_tools_list(struct td_mcp_server *s, const struct td_mcp_request *req, json_t **result,
		      struct td_mcp_error *e)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < NR_TOOLS; i++) {
		if (json_array_append_new(list, tool_json(&tools[i])) < 0) {
			json_decref(list);
			return td_mcp_fail(e, TD_RPC_INTERNAL_ERROR, "cannot describe tool %s",
					   tools[i].name);
		}
	}
	return td_mcp_page_result(s, req, "tools", list, result, e);
}

/* The result of a tool that did its work. */
static json_t *success(const struct tool_output *out)
{
	return json_pack("{s:[{s:s, s:s}], s:O, s:b}", "content", "type", "text", "text", out->text,
			 "structuredContent", out->structured, "isError", false);
}

/*
 * The answer to a question that matches nothing: the tool's empty result,
 * what was asked about (run_id, node), and the hint as text and as
 * structuredContent.hint. Clients take isError for a failure; this is none.
 */
static json_t *nothing(const struct tool_call *c)
{
	json_t *structured = schema_load(c->tool->empty), *result;

	if (!structured)
		return td_mcp_tool_error("out of memory");
	if (json_object_get(structured, "run_id") && arg_string(c, "run_id"))
		json_object_set_new(structured, "run_id", json_string(arg_string(c, "run_id")));
	if (json_object_get(structured, "path") && arg_string(c, "node"))
		json_object_set_new(structured, "path", json_string(arg_string(c, "node")));
	json_object_set_new(structured, "hint", json_string(c->err));
	json_object_set_new(structured, "total", json_integer(0));
	result = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text", c->err,
			   "structuredContent", structured, "isError", false);
	return result;
}

static json_t *run_tool(struct td_mcp_server *s, const struct tool *t, const json_t *args)
{
	struct tool_call c = { .s = s, .tool = t, .args = args };
	struct tool_output out = { 0 };
	int ret = 0;
	json_t *result;

	td_run_selection_init(&c.sel);
	if (t->needs_store && !(c.store = td_mcp_store(s, c.err, sizeof(c.err))))
		ret = -EIO;
	if (!ret)
		ret = t->run(&c, &out);
	if (ret == TD_QUERY_NOTHING && t->empty) {
		result = nothing(&c);
	} else if (ret) {
		td_mcp_log(s, TD_MCP_LOG_DEBUG, "%s: %s", t->name, c.err);
		result = td_mcp_tool_error(c.err[0] ? c.err : strerror(-ret));
	} else {
		result = success(&out);
	}
	output_release(&out);
	td_run_selection_release(&c.sel);
	return result;
}

int td_mcp_tools_call(struct td_mcp_server *s, const struct td_mcp_request *req, json_t **result,
		      struct td_mcp_error *e)
{
	const json_t *args = json_object_get(req->params, "arguments");
	const struct tool *t;
	json_t *empty = NULL;
	const char *name;
	int ret;

	if (td_mcp_param_string(req->params, "name", true, &name, e))
		return -1;
	if (!(t = find_tool(name)))
		return td_mcp_fail(e, TD_RPC_INVALID_PARAMS,
				   "unknown tool '%.64s': tools/list names the tools", name);
	if (args && !json_is_object(args))
		return td_mcp_fail(e, TD_RPC_INVALID_PARAMS, "\"arguments\" must be an object");
	if (!args)
		args = empty = json_object();
	if (check_args(t, args, e)) { /* the model's to fix: it sees tool results, not protocol errors */
		*result = td_mcp_tool_error(e->message);
		json_decref(empty);
		return *result ? 0 : td_mcp_fail(e, TD_RPC_INTERNAL_ERROR, "out of memory");
	}
	ret = 0;
	if (!t->run)
		ret = td_mcp_collect_start(s, req, args, result);
	else if (ret == 0)
		*result = run_tool(s, t, args);
	json_decref(empty);
	return ret;
}
