// SPDX-License-Identifier: BSD-3-Clause
/*
 * What kb/explain.c finds, as text for a terminal and as JSON
 * (explain_render.h): `topdown explain` and the MCP server show the same.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "explain_render.h"

#define WRAP_COLUMNS 78
#define TREE_NAME_COLUMN 50 /* where the metric name starts in --list */

/* ---------------------------------------------------------------- text */

/* Length of the next word; a `command` in backticks counts as one word so
 * that it is never split across lines and stays easy to copy. */
static size_t word_length(const char *text)
{
	bool in_code = false;
	size_t n = 0;

	for (; text[n] && (in_code || text[n] != ' '); n++)
		if (text[n] == '`')
			in_code = !in_code;
	return n;
}

/* Prints text word-wrapped; the first line starts after first_indent
 * columns already used, later lines are indented by indent. */
static void print_wrapped(FILE *out, const char *text, int first_indent, int indent)
{
	int column = first_indent;

	while (*text) {
		size_t word = word_length(text);

		if (column > indent && column + 1 + (int)word > WRAP_COLUMNS) {
			fprintf(out, "\n%*s", indent, "");
			column = indent;
		} else if (column > indent) {
			fputc(' ', out);
			column++;
		}
		fprintf(out, "%.*s", (int)word, text);
		column += (int)word;
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

static void print_field(FILE *out, const char *label, const char *value)
{
	fprintf(out, "  %-10s ", label);
	print_wrapped(out, value, 13, 13);
}

static void print_list_field(FILE *out, const char *label, const char *const *items, size_t n)
{
	char line[4096] = "";
	size_t used = 0;

	for (size_t i = 0; i < n && used < sizeof(line); i++)
		used += snprintf(line + used, sizeof(line) - used, "%s%s", i ? ", " : "", items[i]);
	print_field(out, label, line);
}

static void print_placement(FILE *out, const struct td_explanation *e,
			    const struct td_explain_placement *p)
{
	char level[16];

	if (p->path) {
		snprintf(level, sizeof(level), "%d", p->level);
		print_field(out, "path", p->path);
		print_field(out, "level", level);
		print_field(out, "parent", p->parent ? p->parent : "(none: top level)");
	}
	print_field(out, "threshold", p->threshold ? p->threshold : "(none)");
	if (e->computed) {
		print_list_field(out, "models", p->models, p->n_models);
	} else {
		char text[512];

		snprintf(text, sizeof(text),
			 "none: topdown does not compute this node (it needs events beyond "
			 "level 3); `perf stat -M %s -p PID` measures it where perf knows "
			 "the metric.", e->name);
		print_field(out, "models", text);
	}
}

static void print_item(FILE *out, const char *item)
{
	fputs("  - ", out);
	print_wrapped(out, item, 4, 4);
}

static void print_items(FILE *out, const char *heading, const char *const *items)
{
	fprintf(out, "\n%s\n", heading);
	for (size_t i = 0; items[i]; i++)
		print_item(out, items[i]);
}

/* topdown's own way to the code: collect --sample-for, then the hot functions. */
static void print_locate(FILE *out, const struct td_explanation *e)
{
	char what[256], line[768];

	if (!e->sample_event)
		snprintf(what, sizeof(what), "the event that finds it on the CPU's model (--model names it)");
	else if (!strcmp(e->sample_event, TD_SAMPLE_CYCLES))
		snprintf(what, sizeof(what), "cycles on %s, which names no event for it", e->sample_model);
	else
		snprintf(what, sizeof(what), "%s%s on %s", e->sample_event, e->sample_precise ? " precisely" : "",
			 e->sample_model);
	snprintf(line, sizeof(line), "Find its code: `topdown collect --process NAME --sample-for %s` samples %s; "
		 "`topdown query --hot` and `topdown flamegraph -o flame.svg` show where the samples landed.",
		 e->locate_node, what);
	print_item(out, line);
}

void td_explain_print(FILE *out, const struct td_explanation *e)
{
	const struct td_explain_text *t = e->text;
	char metric[256];

	fprintf(out, "%s\n", t->title);
	snprintf(metric, sizeof(metric), "%s (%s%s)", e->name, td_explain_vendor_name(t->vendor),
		 e->kind == TD_METRIC_INFO ? ", info metric" : "");
	print_field(out, "metric", metric);
	if (e->n_aliases)
		print_list_field(out, "aliases", (const char *const *)e->aliases, e->n_aliases);
	for (size_t i = 0; i < e->n_placements; i++) {
		if (i)
			fputc('\n', out);
		print_placement(out, e, &e->placements[i]);
	}
	for (size_t i = 0; i < e->n_notes; i++)
		print_field(out, "note", e->notes[i]);

	fputs("\nWhat it measures\n  ", out);
	print_wrapped(out, t->description, 2, 2);
	print_items(out, "Typical causes", t->causes);
	fputs("\nWhat to do next\n", out);
	print_locate(out, e);
	for (size_t i = 0; t->hints[i]; i++)
		print_item(out, t->hints[i]);

	if (e->n_also) {
		fputs("\nThe name also matches:", out);
		for (size_t i = 0; i < e->n_also; i++)
			fprintf(out, "%s %s %s", i ? "," : "", td_explain_vendor_name(e->also[i]->vendor),
				e->also[i]->name);
		fputs(" (add --model to choose)\n", out);
	}
}

/* Every bit of a group with n models. */
static uint64_t all_models(size_t n)
{
	return n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

/* " [zen5]" when only some of the group's models define the node. */
static void print_node_models(FILE *out, const struct td_explain_group *g,
			      const struct td_explain_node *n)
{
	const char *sep = "  [";

	if (!n->computed) {
		fputs("  (explained, not computed)", out);
		return;
	}
	if (n->models == all_models(g->n_models))
		return;
	for (size_t i = 0; i < g->n_models; i++) {
		if (n->models & ((uint64_t)1 << i)) {
			fprintf(out, "%s%s", sep, g->models[i]);
			sep = ", ";
		}
	}
	fputc(']', out);
}

static void print_node(FILE *out, const struct td_explain_group *g,
		       const struct td_explain_node *n, int depth)
{
	int width = TREE_NAME_COLUMN - 2 * depth;

	fprintf(out, "%*s%-*s %s", 2 * depth, "", width > 1 ? width : 1, n->node, n->name);
	print_node_models(out, g, n);
	fputc('\n', out);
	for (size_t i = 0; i < n->n_children; i++)
		print_node(out, g, &n->children[i], depth + 1);
}

void td_explain_print_listing(FILE *out, const struct td_explain_listing *l)
{
	for (size_t i = 0; i < l->n_groups; i++) {
		const struct td_explain_group *g = &l->groups[i];

		fprintf(out, "%s%s (", i ? "\n" : "", g->label);
		for (size_t k = 0; k < g->n_models; k++)
			fprintf(out, "%s%s", k ? ", " : "", g->models[k]);
		fputs(")\n", out);
		for (size_t k = 0; k < g->n_roots; k++)
			print_node(out, g, &g->roots[k], 1);
		if (g->n_info)
			fputs("  Info metrics\n", out);
		for (size_t k = 0; k < g->n_info; k++) {
			const struct td_explain_node *n = &g->info[k];

			fprintf(out, "    %-*s %s", TREE_NAME_COLUMN - 4, n->name,
				n->text ? n->text->title : "");
			print_node_models(out, g, n);
			fputc('\n', out);
		}
	}
}

/* ---------------------------------------------------------------- JSON */

static json_t *string_array(const char *const *items, size_t n)
{
	json_t *array = json_array();

	for (size_t i = 0; array && i < n; i++) {
		if (json_array_append_new(array, json_string(items[i])) < 0) {
			json_decref(array);
			return NULL;
		}
	}
	return array;
}

static size_t count_items(const char *const *items)
{
	size_t n = 0;

	while (items[n])
		n++;
	return n;
}

static json_t *placement_json(const struct td_explain_placement *p)
{
	return json_pack("{s:s?, s:i, s:s?, s:s?, s:o}", "path", p->path, "level", p->level,
			 "parent", p->parent, "threshold", p->threshold,
			 "models", string_array(p->models, p->n_models));
}

/* Appends what make(item) returns for each item; NULL if any fails. */
static json_t *object_array(const void *items, size_t n, size_t size, json_t *(*make)(const void *))
{
	json_t *array = json_array();

	for (size_t i = 0; array && i < n; i++) {
		if (json_array_append_new(array, make((const char *)items + i * size)) < 0) {
			json_decref(array);
			return NULL;
		}
	}
	return array;
}

static json_t *placement_item(const void *p)
{
	return placement_json(p);
}

static json_t *also_item(const void *p)
{
	const struct td_explain_text *t = *(const struct td_explain_text *const *)p;

	return json_pack("{s:s, s:s, s:s}", "vendor", td_explain_vendor_name(t->vendor),
			 "name", t->name, "title", t->title);
}

json_t *td_explain_json(const struct td_explanation *e)
{
	const struct td_explain_text *t = e->text;
	const struct td_explain_placement *first = &e->placements[0];
	static const struct td_explain_placement none = { 0 };

	if (!e->n_placements)
		first = &none;
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:o, s:s?, s:i, s:s?, s:s?, s:o, s:o, s:o,"
			 " s:s, s:o, s:o, s:o, s:{s:s, s:s?, s:b, s:s?}}",
			 "name", e->name,
			 "vendor", td_explain_vendor_name(t->vendor),
			 "title", t->title,
			 "kind", e->kind == TD_METRIC_TREE ? "tree" : "info",
			 "computed", e->computed,
			 "aliases", string_array((const char *const *)e->aliases, e->n_aliases),
			 "path", first->path,
			 "level", first->level,
			 "parent", first->parent,
			 "threshold", first->threshold,
			 "models", string_array(first->models, first->n_models),
			 "placements", object_array(e->placements, e->n_placements,
						    sizeof(*e->placements), placement_item),
			 "notes", string_array(e->notes, e->n_notes),
			 "description", t->description,
			 "causes", string_array(t->causes, count_items(t->causes)),
			 "hints", string_array(t->hints, count_items(t->hints)),
			 "also", object_array(e->also, e->n_also, sizeof(*e->also), also_item),
			 "locate", "node", e->locate_node, "event", e->sample_event, "precise", e->sample_precise,
			 "model", e->sample_model);
}

/* The names of the group's models a node's mask selects. */
static json_t *node_models_json(const struct td_explain_group *g, const struct td_explain_node *n)
{
	const char *names[TD_EXPLAIN_MAX_GROUP_MODELS];
	size_t count = 0;

	for (size_t i = 0; i < g->n_models; i++)
		if (n->models & ((uint64_t)1 << i))
			names[count++] = g->models[i];
	return string_array(names, count);
}

static json_t *nodes_json(const struct td_explain_group *g, const struct td_explain_node *nodes,
			  size_t n);

static json_t *node_json(const struct td_explain_group *g, const struct td_explain_node *n)
{
	return json_pack("{s:s, s:s?, s:s?, s:i, s:s?, s:b, s:o, s:o}", "name", n->name,
			 "node", n->node, "path", n->path, "level", n->level,
			 "title", n->text ? n->text->title : NULL, "computed", n->computed,
			 "models", node_models_json(g, n),
			 "children", nodes_json(g, n->children, n->n_children));
}

/* An array of node_json() for nodes[0..n). */
static json_t *nodes_json(const struct td_explain_group *g, const struct td_explain_node *nodes,
			  size_t n)
{
	json_t *array = json_array();

	for (size_t i = 0; array && i < n; i++) {
		if (json_array_append_new(array, node_json(g, &nodes[i])) < 0) {
			json_decref(array);
			return NULL;
		}
	}
	return array;
}

static json_t *group_item(const void *p)
{
	const struct td_explain_group *g = p;

	return json_pack("{s:s, s:s, s:o, s:o, s:o}", "label", g->label,
			 "vendor", td_explain_vendor_name(g->vendor),
			 "models", string_array(g->models, g->n_models),
			 "tree", nodes_json(g, g->roots, g->n_roots),
			 "info", nodes_json(g, g->info, g->n_info));
}

json_t *td_explain_listing_json(const struct td_explain_listing *l)
{
	return json_pack("{s:o}", "groups",
			 object_array(l->groups, l->n_groups, sizeof(*l->groups), group_item));
}
