// SPDX-License-Identifier: BSD-3-Clause
/*
 * Tables, JSON and CSV for query results. Every mode prints the same data
 * in the three formats; tables round to one decimal and add colour on a
 * terminal, the others keep the numbers as computed.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "query_render.h"
#include "format.h"
#include "tma_render.h"
#include "utf8.h"

#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define BOLD "\033[1m"
#define RESET "\033[0m"

#define BAR_WIDTH 40 /* characters for 100% in the funnel */
#define ID_SHOWN 8   /* run id characters in tables: a unique-enough prefix */

bool td_render_wants_color(FILE *out)
{
	const char *no_color = getenv("NO_COLOR");

	return isatty(fileno(out)) && !(no_color && *no_color);
}

/* ---- formatting pieces ---- */

static const char *paint(const struct td_render *r, const char *color)
{
	return r->color ? color : "";
}

static const char *reset(const struct td_render *r)
{
	return r->color ? RESET : "";
}

static const char *percent(double fraction, bool low, char *buf, size_t len)
{
	if (isnan(fraction))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.1f%%%s", 100 * fraction, low ? TD_MARK_LOW_CONFIDENCE : "");
	return buf;
}

static const char *points(double delta, char *buf, size_t len)
{
	if (isnan(delta))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1fpp", 100 * delta);
	return buf;
}

static const char *p_text(double p, char *buf, size_t len)
{
	if (isnan(p))
		snprintf(buf, len, "-");
	else if (p < 0.001)
		snprintf(buf, len, "<0.001");
	else
		snprintf(buf, len, "%.3f", p);
	return buf;
}

static const char *number(double v, int decimals, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", decimals, v);
	return buf;
}

static void legend(const struct td_render *r, bool any_low)
{
	if (any_low)
		fprintf(r->out, "%s" TD_LEGEND_LOW_CONFIDENCE "%s\n", paint(r, YELLOW), reset(r));
}

/* ---- JSON pieces ---- */

static json_t *json_number(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Strings that may not be UTF-8 (thread names cut by the kernel): invalid
 * bytes become '?', since JSON holds UTF-8 only. */
static json_t *json_text(const char *text)
{
	json_t *s;
	char *copy;

	if (!text)
		return json_null();
	if ((s = json_string(text)))
		return s;
	if ((copy = strdup(text)))
		td_utf8_sanitize(copy);
	s = copy ? json_string(copy) : json_null();
	free(copy);
	return s;
}

static json_t *labels_json(const struct td_labels *labels)
{
	json_t *obj = json_object();

	for (size_t i = 0; i < labels->count; i++)
		json_object_set_new(obj, labels->items[i].key, json_text(labels->items[i].value));
	return obj;
}

static void emit_json(const struct td_render *r, json_t *root)
{
	json_dumpf(root, r->out, JSON_INDENT(2));
	fputc('\n', r->out);
	json_decref(root);
}

json_t *td_run_summary_json(const struct td_run_summary *s)
{
	return json_pack("{s:s, s:I, s:I, s:f, s:o, s:i, s:o, s:o, s:I, s:b, s:I}",
			 "run_id", s->id, "started_ns", (json_int_t)s->started_ns,
			 "ended_ns", (json_int_t)s->ended_ns,
			 "duration_s", (s->ended_ns - s->started_ns) / 1e9,
			 "process", json_text(s->process), "level", s->level,
			 "collector", json_text(s->collector), "labels", labels_json(&s->labels),
			 "dropped", (json_int_t)s->dropped, "partial", s->partial,
			 "threads", (json_int_t)s->nr_threads);
}

/* ---- CSV pieces ---- */

/*
 * A field, quoted when it holds a comma or quote (RFC 4180). CSV is read in
 * terminals too (cat, less): its text is escaped as the tables' is, so a
 * control character, line breaks included, never appears raw.
 */
static void csv_text(FILE *out, const char *text, bool last)
{
	size_t need = text ? TD_SAFE_LEN(strlen(text)) : 0;
	char small[1024], *big = need > sizeof(small) ? malloc(need) : NULL;
	const char *safe = text ? td_safe_text(text, big ? big : small, big ? need : sizeof(small)) : NULL;

	if (safe && strpbrk(safe, ",\"")) {
		fputc('"', out);
		for (const char *p = safe; *p; p++) {
			if (*p == '"')
				fputc('"', out);
			fputc(*p, out);
		}
		fputc('"', out);
	} else if (safe) {
		fputs(safe, out);
	}
	fputc(last ? '\n' : ',', out);
	free(big);
}

static void csv_number(FILE *out, double v, bool last)
{
	if (!isnan(v))
		fprintf(out, "%.17g", v);
	fputc(last ? '\n' : ',', out);
}

static void csv_int(FILE *out, long long v, bool last)
{
	fprintf(out, "%lld%c", v, last ? '\n' : ',');
}

static void csv_bool(FILE *out, bool v, bool last)
{
	csv_text(out, v ? "true" : "false", last);
}

/* The labels of a run in one field: a JSON object. */
static void csv_labels(FILE *out, const struct td_labels *labels, bool last)
{
	json_t *obj = labels_json(labels);
	char *text = json_dumps(obj, JSON_COMPACT);

	csv_text(out, text, last);
	free(text);
	json_decref(obj);
}

/* ---- tree ---- */

json_t *td_tree_json(const struct td_tree *t)
{
	json_t *nodes = json_array(), *tree;

	for (size_t i = 0; i < t->nr_nodes; i++) {
		const struct td_tree_node *n = &t->nodes[i];
		json_array_append_new(nodes, json_pack(
			"{s:s, s:s, s:i, s:o, s:o, s:o, s:I, s:I, s:b, s:o, s:b, s:b, s:I}",
			"path", n->path, "name", n->name, "level", n->level,
			"value", json_number(n->value), "min", json_number(n->min),
			"max", json_number(n->max), "samples", (json_int_t)n->nr_values,
			"crossed_samples", (json_int_t)n->nr_crossed, "crossed", n->crossed,
			"confidence", json_number(n->confidence), "low_confidence", n->low_confidence,
			"useful", n->useful, "counted_ns", (json_int_t)n->counted_ns));
	}
	tree = json_pack("{s:I, s:I, s:o, s:o, s:o}", "runs", (json_int_t)t->nr_runs,
			 "samples", (json_int_t)t->nr_samples, "useful", json_number(t->useful),
			 "wasted", json_number(t->wasted), "nodes", nodes);
	if (t->pooled)
		json_object_update_new(tree, json_pack("{s:b, s:s, s:I, s:I}", "pooled", true, "model", t->model,
						       "hosts", (json_int_t)t->nr_hosts,
						       "oncpu_ns", (json_int_t)t->oncpu_ns));
	return tree;
}

static void tree_csv(FILE *out, const struct td_tree *t)
{
	fputs("path,level,value,min,max,samples,crossed_samples,crossed,confidence,"
	      "low_confidence,useful,counted_ns\n", out);
	for (size_t i = 0; i < t->nr_nodes; i++) {
		const struct td_tree_node *n = &t->nodes[i];

		csv_text(out, n->path, false);
		csv_int(out, n->level, false);
		csv_number(out, n->value, false);
		csv_number(out, n->min, false);
		csv_number(out, n->max, false);
		csv_int(out, (long long)n->nr_values, false);
		csv_int(out, (long long)n->nr_crossed, false);
		csv_bool(out, n->crossed, false);
		csv_number(out, n->confidence, false);
		csv_bool(out, n->low_confidence, false);
		csv_bool(out, n->useful, false);
		csv_int(out, (long long)n->counted_ns, true);
	}
}

/* "over 3 runs (4 samples)": what the numbers are averaged over. */
static void coverage(const struct td_render *r, size_t runs, size_t samples)
{
	fprintf(r->out, "over %zu run%s", runs, runs == 1 ? "" : "s");
	if (samples != runs)
		fprintf(r->out, " (%zu samples)", samples);
}

/* A pooled tree's "pooled over 40 runs of 3 hosts, 12.0 s on-CPU": what it
 * was counted over; else coverage(). */
static void tree_coverage(const struct td_render *r, const struct td_tree *t)
{
	char oncpu[32];

	if (!t->pooled)
		return coverage(r, t->nr_runs, t->nr_samples);
	fprintf(r->out, "pooled over %zu run%s", t->nr_runs, t->nr_runs == 1 ? "" : "s");
	if (t->nr_hosts > 1)
		fprintf(r->out, " of %zu hosts", t->nr_hosts);
	fprintf(r->out, ", %s on-CPU", td_format_duration(t->oncpu_ns, oncpu, sizeof(oncpu)));
}

/* "✗ 2/3" or "✓": crossed in most samples, and in how many. */
static void threshold_mark(const struct td_render *r, const struct td_tree_node *n,
			   bool counts)
{
	fprintf(r->out, "%s%s%s", paint(r, n->crossed ? RED : GREEN), n->crossed ? "✗" : "✓",
		reset(r));
	if (counts)
		fprintf(r->out, " %zu/%zu", n->nr_crossed, n->nr_values);
}

/* Whether the tree's rows said how long they were counted (stored before
 * that was kept, or imported: not). */
static bool any_counted(const struct td_tree *t)
{
	for (size_t i = 0; i < t->nr_nodes; i++)
		if (t->nodes[i].counted_ns)
			return true;
	return false;
}

static bool any_low(const struct td_tree *t)
{
	for (size_t i = 0; i < t->nr_nodes; i++)
		if (t->nodes[i].low_confidence)
			return true;
	return false;
}

void td_render_tree(const struct td_render *r, const struct td_tree *t)
{
	bool several = t->nr_samples > 1, counted = !several && (t->pooled || any_counted(t));
	char value[32], lo[32], hi[32], conf[32];

	if (r->format == TD_FORMAT_JSON)
		return emit_json(r, td_tree_json(t));
	if (r->format == TD_FORMAT_CSV)
		return tree_csv(r->out, t);
	fprintf(r->out, "Top-Down tree ");
	tree_coverage(r, t);
	fprintf(r->out, "\n%-48s %8s %17s %10s  %s\n", "NODE", "VALUE",
		several ? "RANGE" : counted ? "COUNTED" : "", "CONFIDENCE", "THRESHOLD");
	for (size_t i = 0; i < t->nr_nodes; i++) {
		const struct td_tree_node *n = &t->nodes[i];
		int indent = 2 * (n->level - 1);

		fprintf(r->out, "%*s%-*s %8s ", indent, "", 48 - indent, n->name,
			percent(n->value, n->low_confidence, value, sizeof(value)));
		if (several)
			fprintf(r->out, "%8s-%-8s ", percent(n->min, false, lo, sizeof(lo)),
				percent(n->max, false, hi, sizeof(hi)));
		else if (counted)
			fprintf(r->out, "%17s ", td_format_duration(n->counted_ns, lo, sizeof(lo)));
		else
			fprintf(r->out, "%17s ", "");
		fprintf(r->out, "%10s  ", percent(n->confidence, false, conf, sizeof(conf)));
		threshold_mark(r, n, several);
		fputc('\n', r->out);
	}
	legend(r, any_low(t));
}

/* A bar of eighths, BAR_WIDTH characters for the whole. */
static void bar(FILE *out, double fraction)
{
	static const char *const eighths[] = { "", "▏", "▎", "▍", "▌", "▋", "▊", "▉" };
	long units = isnan(fraction) ? 0 : lround(fmin(fmax(fraction, 0), 1) * BAR_WIDTH * 8);
	int width = 0;

	for (; units >= 8; units -= 8, width++)
		fputs("█", out);
	if (units) {
		fputs(eighths[units], out);
		width++;
	}
	fprintf(out, "%*s", BAR_WIDTH - width, "");
}

void td_render_funnel(const struct td_render *r, const struct td_tree *t)
{
	char value[32], useful[32], wasted[32];

	if (r->format != TD_FORMAT_TABLE)
		return td_render_tree(r, t);
	fprintf(r->out, "Pipeline slots ");
	tree_coverage(r, t);
	fprintf(r->out, ": %suseful work %s%s, wasted %s\n", paint(r, BOLD),
		percent(t->useful, false, useful, sizeof(useful)), reset(r),
		percent(t->wasted, false, wasted, sizeof(wasted)));
	for (size_t i = 0; i < t->nr_nodes; i++) {
		const struct td_tree_node *n = &t->nodes[i];
		int indent = 2 * (n->level - 1);

		fprintf(r->out, "%*s%-*s %8s ", indent, "", 40 - indent, n->name,
			percent(n->value, n->low_confidence, value, sizeof(value)));
		fputs(paint(r, n->useful ? GREEN : ""), r->out);
		bar(r->out, n->value);
		fputs(reset(r), r->out);
		fputc(' ', r->out);
		threshold_mark(r, n, false);
		if (n->level == 1)
			fprintf(r->out, "  %s", n->useful ? "useful work" : "wasted");
		fputc('\n', r->out);
	}
	legend(r, any_low(t));
}

/* ---- bottlenecks ---- */

json_t *td_bottlenecks_json(const struct td_bottlenecks *b)
{
	json_t *items = json_array();

	for (size_t i = 0; i < b->count; i++) {
		const struct td_bottleneck *x = &b->items[i];

		json_array_append_new(items, json_pack(
			"{s:I, s:s, s:s, s:i, s:o, s:I, s:o, s:b}", "rank", (json_int_t)i + 1,
			"path", x->path, "name", x->name, "level", x->level,
			"value", json_number(x->value), "samples", (json_int_t)x->nr_samples,
			"confidence", json_number(x->confidence), "low_confidence",
			x->low_confidence));
	}
	return json_pack("{s:I, s:I, s:o}", "runs", (json_int_t)b->nr_runs, "samples",
			 (json_int_t)b->nr_samples, "bottlenecks", items);
}

void td_render_bottlenecks(const struct td_render *r, const struct td_bottlenecks *b)
{
	bool low = false;
	char value[32];

	if (r->format == TD_FORMAT_JSON)
		return emit_json(r, td_bottlenecks_json(b));
	if (r->format == TD_FORMAT_CSV) {
		fputs("rank,path,level,value,samples,confidence,low_confidence\n", r->out);
		for (size_t i = 0; i < b->count; i++) {
			const struct td_bottleneck *x = &b->items[i];

			csv_int(r->out, (long long)i + 1, false);
			csv_text(r->out, x->path, false);
			csv_int(r->out, x->level, false);
			csv_number(r->out, x->value, false);
			csv_int(r->out, (long long)x->nr_samples, false);
			csv_number(r->out, x->confidence, false);
			csv_bool(r->out, x->low_confidence, true);
		}
		return;
	}
	fprintf(r->out, "Bottlenecks ");
	coverage(r, b->nr_runs, b->nr_samples);
	fprintf(r->out, "\n%4s  %-56s %8s  %s\n", "RANK", "BOTTLENECK", "VALUE", "SAMPLES");
	for (size_t i = 0; i < b->count; i++) {
		const struct td_bottleneck *x = &b->items[i];

		fprintf(r->out, "%4zu  %s%-56s%s %8s  %zu/%zu\n", i + 1, paint(r, RED), x->path,
			reset(r), percent(x->value, x->low_confidence, value, sizeof(value)),
			x->nr_samples, b->nr_samples);
		low |= x->low_confidence;
	}
	if (!b->count)
		fprintf(r->out, "(no node crosses its threshold)\n");
	legend(r, low);
}

/* ---- runs where a node reaches a value ---- */

json_t *td_run_matches_json(const struct td_run_matches *m)
{
	json_t *items = json_array();

	for (size_t i = 0; i < m->count; i++) {
		const struct td_run_match *x = &m->items[i];
		json_t *item = td_run_summary_json(&x->run);

		json_object_update_new(item, json_pack("{s:s, s:s, s:o, s:b, s:o, s:b}",
			"scope_key", x->scope_key, "path", x->path, "value", json_number(x->value),
			"crossed", x->crossed, "confidence", json_number(x->confidence),
			"low_confidence", x->low_confidence));
		json_array_append_new(items, item);
	}
	return json_pack("{s:o}", "runs", items);
}

void td_render_run_matches(const struct td_render *r, const struct td_run_matches *m)
{
	char started[32], value[32];
	bool low = false;

	if (r->format == TD_FORMAT_JSON)
		return emit_json(r, td_run_matches_json(m));
	if (r->format == TD_FORMAT_CSV) {
		fputs("run_id,started_ns,process,labels,scope_key,path,value,crossed,confidence,"
		      "low_confidence\n", r->out);
		for (size_t i = 0; i < m->count; i++) {
			const struct td_run_match *x = &m->items[i];

			csv_text(r->out, x->run.id, false);
			csv_int(r->out, x->run.started_ns, false);
			csv_text(r->out, x->run.process, false);
			csv_labels(r->out, &x->run.labels, false);
			csv_text(r->out, x->scope_key, false);
			csv_text(r->out, x->path, false);
			csv_number(r->out, x->value, false);
			csv_bool(r->out, x->crossed, false);
			csv_number(r->out, x->confidence, false);
			csv_bool(r->out, x->low_confidence, true);
		}
		return;
	}
	fprintf(r->out, "%-36s  %-19s  %-16s  %-10s  %8s  %s\n", "RUN ID", "STARTED", "PROCESS",
		"SCOPE", "VALUE", "NODE");
	for (size_t i = 0; i < m->count; i++) {
		const struct td_run_match *x = &m->items[i];

		fprintf(r->out, "%-36s  %-19s  ", x->run.id, td_format_time(x->run.started_ns, started, sizeof(started)));
		td_fputs_safe(r->out, x->run.process ? x->run.process : "-", 16);
		fputs("  ", r->out);
		td_fputs_safe(r->out, x->scope_key, 10);
		fprintf(r->out, "  %8s  %s\n", percent(x->value, x->low_confidence, value, sizeof(value)), x->path);
		low |= x->low_confidence;
	}
	if (!m->count)
		fprintf(r->out, "(no run reaches that value)\n");
	legend(r, low);
}

/* ---- threads ---- */

static json_t *thread_line_json(const struct td_thread_breakdown *t,
				const struct td_thread_line *line, bool group)
{
	json_t *values = json_object(), *low = json_array(), *item;

	for (size_t c = 0; c < t->nr_columns; c++) {
		json_object_set_new(values, t->columns[c], json_number(line->values[c]));
		if (line->low_confidence[c])
			json_array_append_new(low, json_string(t->columns[c]));
	}
	if (group)
		item = json_pack("{s:o, s:I}", "name", json_text(line->key), "threads",
				 (json_int_t)line->nr_threads);
	else
		item = json_pack("{s:s, s:o}", "tid", line->key, "comm", json_text(line->comm));
	json_object_update_new(item, json_pack("{s:I, s:o, s:o}", "oncpu_ns",
					       (json_int_t)line->oncpu_ns, "values", values,
					       "low_confidence", low));
	return item;
}

json_t *td_thread_breakdown_json(const struct td_thread_breakdown *t)
{
	json_t *columns = json_array(), *threads = json_array(), *groups = json_array();

	for (size_t c = 0; c < t->nr_columns; c++)
		json_array_append_new(columns, json_string(t->columns[c]));
	for (size_t i = 0; i < t->nr_threads; i++)
		json_array_append_new(threads, thread_line_json(t, &t->threads[i], false));
	for (size_t i = 0; i < t->nr_groups; i++)
		json_array_append_new(groups, thread_line_json(t, &t->groups[i], true));
	return json_pack("{s:o, s:o, s:o, s:o}", "run", td_run_summary_json(&t->run),
			 "columns", columns, "threads", threads, "thread_names", groups);
}

static void threads_csv(FILE *out, const struct td_thread_breakdown *t)
{
	fputs("kind,key,comm,threads,oncpu_ns", out);
	for (size_t c = 0; c < t->nr_columns; c++) {
		fputc(',', out);
		csv_text(out, t->columns[c], c + 1 == t->nr_columns);
	}
	if (!t->nr_columns)
		fputc('\n', out);
	for (int kind = 0; kind < 2; kind++) {
		const struct td_thread_line *lines = kind ? t->groups : t->threads;
		size_t n = kind ? t->nr_groups : t->nr_threads;

		for (size_t i = 0; i < n; i++) {
			csv_text(out, kind ? "thread_name" : "thread", false);
			csv_text(out, lines[i].key, false);
			csv_text(out, lines[i].comm, false);
			csv_int(out, (long long)lines[i].nr_threads, false);
			csv_int(out, (long long)lines[i].oncpu_ns, !t->nr_columns);
			for (size_t c = 0; c < t->nr_columns; c++)
				csv_number(out, lines[i].values[c], c + 1 == t->nr_columns);
		}
	}
}

static bool thread_lines_table(const struct td_render *r, const struct td_thread_breakdown *t,
			       const struct td_thread_line *lines, size_t n, bool group)
{
	size_t shown = group || r->all_threads || n <= TD_THREAD_TABLE_ROWS ? n : TD_THREAD_TABLE_ROWS;
	char oncpu[32], value[32];
	bool low = false;

	fprintf(r->out, "%-16s %8s %9s", group ? "THREAD NAME" : "THREAD",
		group ? "THREADS" : "TID", "ON-CPU");
	for (size_t c = 0; c < t->nr_columns; c++)
		fprintf(r->out, " %16.16s", td_node_name(t->columns[c]));
	fputc('\n', r->out);
	for (size_t i = 0; i < shown; i++) {
		td_fputs_safe(r->out, lines[i].comm, 16);
		if (group)
			fprintf(r->out, " %8zu", lines[i].nr_threads);
		else
			fprintf(r->out, " %8s", lines[i].key);
		fprintf(r->out, " %9s", td_format_duration(lines[i].oncpu_ns, oncpu, sizeof(oncpu)));
		for (size_t c = 0; c < t->nr_columns; c++) {
			fprintf(r->out, " %16s", percent(lines[i].values[c], lines[i].low_confidence[c],
							 value, sizeof(value)));
			low |= lines[i].low_confidence[c];
		}
		fputc('\n', r->out);
	}
	if (shown < n)
		fprintf(r->out, "... %zu more threads (--all-threads lists them, --json too)\n", n - shown);
	return low;
}

void td_render_threads(const struct td_render *r, const struct td_thread_breakdown *t)
{
	char started[32];
	bool low;

	if (r->format == TD_FORMAT_JSON)
		return emit_json(r, td_thread_breakdown_json(t));
	if (r->format == TD_FORMAT_CSV)
		return threads_csv(r->out, t);
	fprintf(r->out, "Run %s (", t->run.id);
	td_fputs_safe(r->out, t->run.process ? t->run.process : "-", 0);
	fprintf(r->out, ", started %s)\n\n", td_format_time(t->run.started_ns, started, sizeof(started)));
	/* the name groups first: short_* is one line, however many threads it had */
	low = thread_lines_table(r, t, t->groups, t->nr_groups, true);
	fputc('\n', r->out);
	low |= thread_lines_table(r, t, t->threads, t->nr_threads, false);
	legend(r, low);
}

/* ---- trend ---- */

json_t *td_trend_json(const struct td_trend *t)
{
	json_t *items = json_array();

	for (size_t i = 0; i < t->count; i++) {
		const struct td_trend_point *p = &t->points[i];

		json_array_append_new(items, json_pack(
			"{s:s, s:I, s:o, s:s, s:o, s:o, s:o, s:o, s:b, s:b}", "run_id", p->run.id,
			"started_ns", (json_int_t)p->run.started_ns, "labels",
			labels_json(&p->run.labels), "scope_key", p->scope_key,
			"value", json_number(p->value), "rolling_mean", json_number(p->mean),
			"rolling_sd", json_number(p->sd), "deviation", json_number(p->deviation),
			"anomaly", p->anomaly, "low_confidence", p->low_confidence));
	}
	return json_pack("{s:s, s:I, s:f, s:I, s:o}", "path", t->path ? t->path : "",
			 "window", (json_int_t)t->window, "sigma", t->sigma,
			 "anomalies", (json_int_t)t->nr_anomalies, "points", items);
}

void td_render_trend(const struct td_render *r, const struct td_trend *t)
{
	char started[32], value[32], mean[32], sd[32], dev[32];
	bool low = false;

	if (r->format == TD_FORMAT_JSON)
		return emit_json(r, td_trend_json(t));
	if (r->format == TD_FORMAT_CSV) {
		fputs("run_id,started_ns,scope_key,value,rolling_mean,rolling_sd,deviation,"
		      "anomaly,low_confidence\n", r->out);
		for (size_t i = 0; i < t->count; i++) {
			const struct td_trend_point *p = &t->points[i];

			csv_text(r->out, p->run.id, false);
			csv_int(r->out, p->run.started_ns, false);
			csv_text(r->out, p->scope_key, false);
			csv_number(r->out, p->value, false);
			csv_number(r->out, p->mean, false);
			csv_number(r->out, p->sd, false);
			csv_number(r->out, p->deviation, false);
			csv_bool(r->out, p->anomaly, false);
			csv_bool(r->out, p->low_confidence, true);
		}
		return;
	}
	fprintf(r->out, "%s over %zu sample%s; rolling mean of the %zu before each; "
		"anomalies beyond %.1f sd: %zu\n", t->path, t->count, t->count == 1 ? "" : "s",
		t->window, t->sigma, t->nr_anomalies);
	fprintf(r->out, "%-19s  %-*s  %8s  %12s  %8s  %9s\n", "STARTED", ID_SHOWN, "RUN",
		"VALUE", "ROLLING MEAN", "SD", "DEVIATION");
	for (size_t i = 0; i < t->count; i++) {
		const struct td_trend_point *p = &t->points[i];

		fprintf(r->out, "%-19s  %-*.*s  %8s  %12s  %8s  %9s%s%s%s\n",
			td_format_time(p->run.started_ns, started, sizeof(started)), ID_SHOWN,
			ID_SHOWN, p->run.id, percent(p->value, p->low_confidence, value, sizeof(value)),
			percent(p->mean, false, mean, sizeof(mean)),
			percent(p->sd, false, sd, sizeof(sd)), number(p->deviation, 1, dev, sizeof(dev)),
			paint(r, RED), p->anomaly ? "  anomaly" : "", reset(r));
		low |= p->low_confidence;
	}
	legend(r, low);
}

/* ---- compare ---- */

static json_t *side_json(const struct td_sample_stats *s)
{
	return json_pack("{s:I, s:o, s:o, s:o, s:o}", "n", (json_int_t)s->n,
			 "mean", json_number(s->mean), "sd", json_number(s->sd),
			 "min", json_number(s->min), "max", json_number(s->max));
}

json_t *td_comparison_json(const struct td_comparison *c)
{
	json_t *items = json_array();

	for (size_t i = 0; i < c->count; i++) {
		const struct td_metric_change *x = &c->items[i];

		json_array_append_new(items, json_pack(
			"{s:o, s:s, s:s, s:i, s:b, s:s, s:o, s:o, s:o, s:o, s:o, s:b}",
			"thread_name", json_text(x->group), "path", x->path, "name", x->name,
			"level", x->level, "higher_is_better", x->higher_is_better,
			"change", td_change_name(x->change), "a", side_json(&x->a),
			"b", side_json(&x->b), "delta", json_number(x->delta),
			"p_value", json_number(x->p_value),
			"effect_size", json_number(x->effect_size),
			"low_confidence", x->low_confidence));
	}
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:o}", "test", "welch",
			 "effect_size", "cohens_d", "runs_a", (json_int_t)c->nr_runs_a,
			 "runs_b", (json_int_t)c->nr_runs_b,
			 "regressions", (json_int_t)c->nr_regressions,
			 "improvements", (json_int_t)c->nr_improvements, "metrics", items);
}

static void comparison_csv(FILE *out, const struct td_comparison *c)
{
	fputs("thread_name,path,level,higher_is_better,change,a_n,a_mean,a_sd,b_n,b_mean,b_sd,"
	      "delta,p_value,effect_size,low_confidence\n", out);
	for (size_t i = 0; i < c->count; i++) {
		const struct td_metric_change *x = &c->items[i];

		csv_text(out, x->group, false);
		csv_text(out, x->path, false);
		csv_int(out, x->level, false);
		csv_bool(out, x->higher_is_better, false);
		csv_text(out, td_change_name(x->change), false);
		csv_int(out, (long long)x->a.n, false);
		csv_number(out, x->a.mean, false);
		csv_number(out, x->a.sd, false);
		csv_int(out, (long long)x->b.n, false);
		csv_number(out, x->b.mean, false);
		csv_number(out, x->b.sd, false);
		csv_number(out, x->delta, false);
		csv_number(out, x->p_value, false);
		csv_number(out, x->effect_size, false);
		csv_bool(out, x->low_confidence, true);
	}
}

/* "40.0% ± 1.2%" or "40.0%" for one sample. */
static const char *mean_sd(const struct td_sample_stats *s, bool low, char *buf, size_t len)
{
	char mean[16], sd[16];

	if (isnan(s->sd))
		snprintf(buf, len, "%s", percent(s->mean, low, mean, sizeof(mean)));
	else
		snprintf(buf, len, "%s ± %s", percent(s->mean, low, mean, sizeof(mean)),
			 percent(s->sd, false, sd, sizeof(sd)));
	return buf;
}

static const char *change_color(enum td_change change)
{
	return change == TD_CHANGE_REGRESSION ? RED : change == TD_CHANGE_IMPROVEMENT ? GREEN :
	       change == TD_CHANGE_NONE ? "" : YELLOW;
}

void td_render_comparison(const struct td_render *r, const struct td_comparison *c)
{
	char a[80], b[80], delta[32], p[32], d[32], metric[160], group[TD_SAFE_LEN(TD_COMM_LEN)];
	bool low = false;

	if (r->format == TD_FORMAT_JSON)
		return emit_json(r, td_comparison_json(c));
	if (r->format == TD_FORMAT_CSV)
		return comparison_csv(r->out, c);
	fprintf(r->out, "A: %zu run%s, B: %zu run%s; %zu regression%s, %zu improvement%s "
		"(Welch's t-test, effect size Cohen's d)\n", c->nr_runs_a,
		c->nr_runs_a == 1 ? "" : "s", c->nr_runs_b, c->nr_runs_b == 1 ? "" : "s",
		c->nr_regressions, c->nr_regressions == 1 ? "" : "s", c->nr_improvements,
		c->nr_improvements == 1 ? "" : "s");
	fprintf(r->out, "%-11s  %-48s  %-17s  %-17s  %8s  %6s  %6s\n", "CHANGE", "METRIC",
		"A", "B", "DELTA", "P", "D");
	for (size_t i = 0; i < c->count; i++) {
		const struct td_metric_change *x = &c->items[i];

		if (x->group)
			snprintf(metric, sizeof(metric), "%s: %s", td_safe_text(x->group, group, sizeof(group)), x->path);
		else
			snprintf(metric, sizeof(metric), "%s", x->path);
		fprintf(r->out, "%s%-11s%s  %-48s  ", paint(r, change_color(x->change)),
			td_change_name(x->change), reset(r), metric);
		td_fputs_safe(r->out, x->a.n ? mean_sd(&x->a, x->low_confidence, a, sizeof(a)) : "-", 17);
		fputs("  ", r->out);
		td_fputs_safe(r->out, x->b.n ? mean_sd(&x->b, x->low_confidence, b, sizeof(b)) : "-", 17);
		fprintf(r->out, "  %8s  %6s  %6s\n", points(x->delta, delta, sizeof(delta)),
			p_text(x->p_value, p, sizeof(p)), number(x->effect_size, 2, d, sizeof(d)));
		low |= x->low_confidence;
	}
	legend(r, low);
}

/* ---- labels ---- */

json_t *td_label_set_json(const struct td_label_set *set)
{
	json_t *keys = json_array();

	for (size_t i = 0; i < set->count; i++) {
		const struct td_label_key *k = &set->keys[i];
		json_t *values = json_array();

		for (size_t j = 0; j < k->count; j++)
			json_array_append_new(values, json_pack("{s:o, s:I}",
				"value", json_text(k->values[j].value),
				"runs", (json_int_t)k->values[j].nr_runs));
		json_array_append_new(keys, json_pack("{s:o, s:I, s:I, s:o}", "key", json_text(k->key),
			"runs", (json_int_t)k->nr_runs, "distinct_values", (json_int_t)k->nr_values,
			"values", values));
	}
	return json_pack("{s:I, s:o}", "runs", (json_int_t)set->nr_runs, "keys", keys);
}

#define LABEL_KEY_WIDTH 24
#define LABEL_VALUES_AT (LABEL_KEY_WIDTH + 17) /* where the values column starts */

/* A key's values, one a line; the first on the key's own line. */
static void label_values(const struct td_render *r, const struct td_label_key *k)
{
	for (size_t j = 0; j < k->count; j++) {
		fprintf(r->out, "%*s", j ? LABEL_VALUES_AT : 0, "");
		td_fputs_safe(r->out, k->values[j].value, 0);
		fprintf(r->out, " (%zu)\n", k->values[j].nr_runs);
	}
	if (k->nr_values > k->count)
		fprintf(r->out, "%*s(%zu more)\n", k->count ? LABEL_VALUES_AT : 0, "",
			k->nr_values - k->count);
}

void td_render_labels(const struct td_render *r, const struct td_label_set *set)
{
	if (r->format == TD_FORMAT_JSON)
		return emit_json(r, td_label_set_json(set));
	fprintf(r->out, "Labels of %zu run%s\n", set->nr_runs, set->nr_runs == 1 ? "" : "s");
	td_fputs_safe(r->out, "KEY", LABEL_KEY_WIDTH);
	fprintf(r->out, " %6s %7s  %s\n", "RUNS", "VALUES", "VALUE (RUNS)");
	for (size_t i = 0; i < set->count; i++) {
		const struct td_label_key *k = &set->keys[i];

		fputs(paint(r, BOLD), r->out);
		td_fputs_safe(r->out, k->key, LABEL_KEY_WIDTH);
		fprintf(r->out, "%s %6zu %7zu  ", reset(r), k->nr_runs, k->nr_values);
		label_values(r, k);
	}
	if (!set->count)
		fprintf(r->out, "(no labels)\n");
}

/* ---- whole runs, for export ---- */

/*
 * A thread row as JSON; NULL when out of memory. Every insertion is
 * checked: jansson drops a value it cannot add and says so only in its
 * return, and a thread without one of its counters must not be written
 * as if whole (the export then fails, naming the memory).
 */
static json_t *thread_json(const struct td_run *run, const struct td_thread_row *t)
{
	json_t *counters = json_object();
	char comm[TD_COMM_LEN];

	snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(comm) - 1, t->comm);
	for (size_t e = 0; counters && e < run->nr_events; e++) {
		json_t *counter = json_pack("{s:o, s:o}", "value", json_number(t->counters[e].value),
					    "running_fraction", json_number(t->counters[e].running_fraction));

		if (!counter || json_object_set_new(counters, run->event_names[e], counter)) {
			json_decref(counters);
			return NULL;
		}
	}
	return json_pack("{s:I, s:I, s:o, s:b, s:I, s:I, s:I, s:I, s:I, s:o}",
			 "tid", (json_int_t)t->tid, "pid", (json_int_t)t->pid,
			 "comm", json_text(comm), "exited", t->exited,
			 "oncpu_ns", (json_int_t)t->oncpu_ns,
			 "voluntary_switches", (json_int_t)t->voluntary_switches,
			 "involuntary_switches", (json_int_t)t->involuntary_switches,
			 "migrations", (json_int_t)t->migrations,
			 "runq_wait_ns", (json_int_t)t->runq_wait_ns, "counters", counters);
}

static json_t *threads_json(const struct td_run *run, const struct td_thread_row *threads,
			    size_t n)
{
	json_t *array = json_array();

	for (size_t i = 0; array && i < n; i++)
		if (json_array_append_new(array, thread_json(run, &threads[i]))) { /* NULL or no room */
			json_decref(array);
			return NULL;
		}
	return array;
}

/* The CLI's form of a metric row, with the scope it belongs to; NULL when out of memory. */
static json_t *metric_json(const struct td_metric_row *m)
{
	json_t *row = td_metric_row_json(m);

	if (row && json_object_update_new(row, json_pack("{s:s, s:o, s:i}", "scope", td_scope_name(m->scope),
							 "scope_key", json_text(m->scope_key),
							 "interval_seq", m->interval_seq))) {
		json_decref(row);
		return NULL;
	}
	return row;
}

void td_export_csv_header(FILE *out)
{
	fputs("run_id,started_ns,ended_ns,process,collector,labels,scope,scope_key,"
	      "interval_seq,path,parent,level,value,threshold_crossed,confidence,counted_ns\n", out);
}

/* The run's own columns, the start of each of its lines. */
static void csv_run_columns(FILE *out, const struct td_run *run)
{
	csv_text(out, run->id, false);
	csv_int(out, run->started_ns, false);
	csv_int(out, run->ended_ns, false);
	csv_text(out, run->process, false);
	csv_text(out, run->collector, false);
	csv_labels(out, &run->labels, false);
}

/* ---- whole runs, streamed (export) ---- */

/*
 * One run as a JSON object, indented as json_dumpf(JSON_INDENT(2)) would
 * indent the whole (the same bytes as the run built in memory and dumped
 * at once), written as the walk hands its parts over: the header's fields
 * one by one, then "intervals" and "metrics" one element at a time, their
 * brackets and commas written here.
 */
struct json_export {
	FILE *out;
	bool in_metrics; /* the "intervals" array is closed, "metrics" open */
	size_t n;        /* elements in the array open */
	char *piece;     /* the piece being dumped, indented (reused) */
	size_t len, cap;
	int depth;
};

/*
 * jansson's output for a piece, into x->piece with the piece's depth
 * added: jansson starts each line with the spaces of its own depth only,
 * so each newline gets two spaces per outer level after it (a JSON string
 * never holds a raw newline). One fwrite per piece: jansson hands over
 * each token on its own, and a write per token cost a quarter of the time.
 */
static int append_indented(const char *buffer, size_t size, void *data)
{
	struct json_export *x = data;
	size_t need = x->len + size * (1 + 2 * (size_t)x->depth);

	if (need > x->cap) {
		size_t cap = need > 2 * x->cap ? need : 2 * x->cap;
		char *grown = realloc(x->piece, cap);

		if (!grown)
			return -1;
		x->piece = grown;
		x->cap = cap;
	}
	for (const char *end = buffer + size, *nl; buffer < end; buffer = nl) {
		nl = memchr(buffer, '\n', (size_t)(end - buffer));
		nl = nl ? nl + 1 : end;
		memcpy(x->piece + x->len, buffer, (size_t)(nl - buffer));
		x->len += (size_t)(nl - buffer);
		if (nl[-1] == '\n') {
			memset(x->piece + x->len, ' ', 2 * (size_t)x->depth);
			x->len += 2 * (size_t)x->depth;
		}
	}
	return 0;
}

/* Writes json (its reference taken) at depth; -1 when it could not. */
static int dump_at(struct json_export *x, json_t *json, int depth)
{
	int ret;

	x->len = 0;
	x->depth = depth;
	ret = json ? json_dump_callback(json, append_indented, x, JSON_INDENT(2) | JSON_ENCODE_ANY) : -1;
	json_decref(json);
	if (ret == 0 && fwrite(x->piece, 1, x->len, x->out) != x->len)
		ret = -1;
	return ret;
}

/* Why a piece of run_id could not be written: the stream's error, else
 * building or encoding the value failed, which is memory. */
static int json_failed(const struct json_export *x, const char *run_id, char *err, size_t errlen)
{
	bool written = !ferror(x->out);

	snprintf(err, errlen, "cannot write run %s as JSON: %s", run_id,
		 written ? "out of memory; free memory and retry" : strerror(errno));
	return written ? -ENOMEM : -EIO;
}

/* The next element of the array open, at depth 2 ("[" before the first). */
static int json_element(struct json_export *x, json_t *json, const char *run_id, char *err, size_t errlen)
{
	if (fputs(x->n++ ? ",\n    " : "[\n    ", x->out) < 0 || dump_at(x, json, 2) < 0)
		return json_failed(x, run_id, err, errlen);
	return 0;
}

static void json_close_array(struct json_export *x)
{
	fputs(x->n ? "\n  ]" : "[]", x->out);
	x->n = 0;
}

static int json_export_header(void *ctx, const struct td_run *run, char *err, size_t errlen)
{
	struct json_export *x = ctx;
	struct td_run_summary sum = {
		.started_ns = run->started_ns, .ended_ns = run->ended_ns,
		.process = run->process, .level = run->level, .collector = run->collector,
		.labels = run->labels, .dropped = run->dropped, .partial = run->partial,
		.nr_threads = run->nr_threads,
	};
	json_t *head, *events = json_array(), *value;
	const char *key;
	size_t fields = 0;
	bool whole;

	memcpy(sum.id, run->id, sizeof(sum.id));
	head = td_run_summary_json(&sum);
	whole = head && events;
	for (size_t e = 0; whole && e < run->nr_events; e++)
		whole = !json_array_append_new(events, json_text(run->event_names[e]));
	/* the _new calls take their value's reference whether they add it or not */
	whole = whole && !json_object_set_new(head, "events", json_incref(events)) &&
		!json_object_set_new(head, "thread_rows", threads_json(run, run->threads, run->nr_threads));
	json_decref(events);
	if (!whole) {
		json_decref(head);
		return json_failed(x, run->id, err, errlen);
	}
	fputs("{", x->out);
	json_object_foreach(head, key, value) {
		fputs(fields++ ? ",\n  " : "\n  ", x->out);
		if (dump_at(x, json_string(key), 1) < 0 || fputs(": ", x->out) < 0 ||
		    dump_at(x, json_incref(value), 1) < 0) {
			json_decref(head);
			return json_failed(x, run->id, err, errlen);
		}
	}
	json_decref(head);
	fputs(",\n  \"intervals\": ", x->out);
	return 0;
}

static int json_export_interval(void *ctx, const struct td_run *run, const struct td_interval *iv,
				char *err, size_t errlen)
{
	return json_element(ctx, json_pack("{s:I, s:I, s:I, s:o}", "seq", (json_int_t)iv->seq,
					   "start_ns", (json_int_t)iv->start_ns, "end_ns",
					   (json_int_t)iv->end_ns, "threads",
					   threads_json(run, iv->threads, iv->nr_threads)),
			    run->id, err, errlen);
}

static int json_export_metric(void *ctx, const struct td_run *run, const struct td_metric_row *row,
			      char *err, size_t errlen)
{
	struct json_export *x = ctx;

	if (!x->in_metrics) {
		json_close_array(x);
		fputs(",\n  \"metrics\": ", x->out);
		x->in_metrics = true;
	}
	return json_element(x, metric_json(row), run->id, err, errlen);
}

/*
 * CSV: a line per metric row as they come, each starting with the run's
 * columns, formatted once when the header comes; a run without metric
 * rows still gets its line, with those fields empty.
 */
struct csv_export {
	FILE *out;
	char *run_columns;
	size_t n;
};

static int csv_export_header(void *ctx, const struct td_run *run, char *err, size_t errlen)
{
	struct csv_export *x = ctx;
	size_t len = 0;
	FILE *columns = open_memstream(&x->run_columns, &len);

	if (columns) {
		csv_run_columns(columns, run);
		if (fclose(columns) == 0)
			return 0;
	}
	snprintf(err, errlen, "out of memory writing run %s as CSV", run->id);
	return -ENOMEM;
}

static int csv_export_metric(void *ctx, const struct td_run *run, const struct td_metric_row *m,
			     char *err, size_t errlen)
{
	struct csv_export *x = ctx;

	x->n++;
	fputs(x->run_columns, x->out);
	csv_text(x->out, td_scope_name(m->scope), false);
	csv_text(x->out, m->scope_key, false);
	csv_int(x->out, m->interval_seq, false);
	csv_text(x->out, m->path, false);
	csv_text(x->out, m->parent, false);
	csv_int(x->out, m->level, false);
	csv_number(x->out, m->value, false);
	csv_bool(x->out, m->threshold_crossed, false);
	csv_number(x->out, m->confidence, false);
	csv_int(x->out, (long long)m->counted_ns, true);
	if (ferror(x->out)) {
		snprintf(err, errlen, "cannot write run %s as CSV: %s", run->id, strerror(errno));
		return -EIO;
	}
	return 0;
}

int td_export_run(struct td_store *store, const char *run_id, enum td_format format, FILE *out,
		  char *err, size_t errlen)
{
	struct json_export json = { .out = out };
	struct csv_export csv = { .out = out };
	struct td_run_visitor v;
	int ret;

	if (format == TD_FORMAT_CSV) {
		v = (struct td_run_visitor){ csv_export_header, NULL, csv_export_metric, &csv };
		ret = td_store_walk_run(store, run_id, &v, err, errlen);
		if (ret == 0 && !csv.n) {
			fputs(csv.run_columns, out);
			fputs(",,,,,,,,,\n", out);
		}
		free(csv.run_columns);
		return ret;
	}
	v = (struct td_run_visitor){ json_export_header, json_export_interval, json_export_metric, &json };
	ret = td_store_walk_run(store, run_id, &v, err, errlen);
	free(json.piece);
	if (ret == 0) {
		if (!json.in_metrics) {
			json_close_array(&json);
			fputs(",\n  \"metrics\": []", out);
		} else {
			json_close_array(&json);
		}
		fputs("\n}", out);
	}
	return ret;
}

/* ---- locate: hot functions, their comparison, folded stacks ---- */

json_t *td_hot_json(const struct td_hot *h)
{
	json_t *items = json_array();

	for (size_t i = 0; i < h->nr_functions; i++) {
		const struct td_hot_function *f = &h->functions[i];
		/* symbols and paths are the program's bytes: json_text keeps the item when they are not UTF-8 */
		json_t *item = json_pack("{s:I, s:o, s:o, s:I, s:I, s:o, s:o}", "rank", (json_int_t)i + 1,
					 "function", json_text(f->name), "module", json_text(f->module),
					 "self_samples", (json_int_t)f->self_count, "total_samples",
					 (json_int_t)f->total_count, "self", json_number(f->self_share), "total",
					 json_number(f->total_share));

		json_object_set_new(item, "file", json_text(f->file));
		json_object_set_new(item, "line", f->line ? json_integer(f->line) : json_null());
		json_array_append_new(items, item);
	}
	return json_pack("{s:I, s:s, s:s, s:I, s:I, s:o, s:o}", "runs", (json_int_t)h->nr_runs, "event", h->event,
			 "unit", h->unit, "samples", (json_int_t)h->samples, "lost_samples",
			 (json_int_t)h->lost_samples, "unresolved_frames", json_number(h->unresolved_share),
			 "functions", items);
}

/* "file.c:42", or the module, or "": where a function is. */
static const char *hot_location(const struct td_hot_function *f, char *buf, size_t len)
{
	const char *slash = f->file ? strrchr(f->file, '/') : NULL;

	if (f->file)
		snprintf(buf, len, "%s:%u", slash ? slash + 1 : f->file, f->line);
	else
		snprintf(buf, len, "%s", f->module ? f->module : "");
	return buf;
}

void td_render_hot(const struct td_render *r, const struct td_hot *h)
{
	char self[32], total[32], where[256];

	if (r->format == TD_FORMAT_JSON)
		return emit_json(r, td_hot_json(h));
	if (r->format == TD_FORMAT_CSV) {
		fputs("rank,function,module,file,line,self_samples,total_samples,self,total\n", r->out);
		for (size_t i = 0; i < h->nr_functions; i++) {
			const struct td_hot_function *f = &h->functions[i];

			csv_int(r->out, (long long)i + 1, false);
			csv_text(r->out, f->name, false);
			csv_text(r->out, f->module, false);
			csv_text(r->out, f->file, false);
			csv_int(r->out, f->line, false);
			csv_int(r->out, (long long)f->self_count, false);
			csv_int(r->out, (long long)f->total_count, false);
			csv_number(r->out, f->self_share, false);
			csv_number(r->out, f->total_share, true);
		}
		return;
	}
	fprintf(r->out, "Hot functions, %llu %s ", (unsigned long long)h->samples, h->unit);
	coverage(r, h->nr_runs, h->nr_runs);
	fprintf(r->out, "\n%4s  %7s %7s  %-40s %s\n", "RANK", "SELF", "TOTAL", "FUNCTION", "WHERE");
	for (size_t i = 0; i < h->nr_functions; i++) {
		const struct td_hot_function *f = &h->functions[i];

		fprintf(r->out, "%4zu  %7s %7s  %s", i + 1, percent(f->self_share, false, self, sizeof(self)),
			percent(f->total_share, false, total, sizeof(total)), paint(r, RED));
		td_fputs_safe(r->out, f->name, 40); /* symbols are the traced program's own words */
		fprintf(r->out, "%s ", reset(r));
		td_fputs_safe(r->out, hot_location(f, where, sizeof(where)), 0);
		fputc('\n', r->out);
	}
}

json_t *td_hot_comparison_json(const struct td_hot_comparison *c)
{
	json_t *items = json_array();

	for (size_t i = 0; i < c->nr_changes; i++) {
		const struct td_hot_change *x = &c->changes[i];

		json_array_append_new(items, json_pack("{s:o, s:o, s:o, s:o, s:o}", "function", json_text(x->name),
						       "module", json_text(x->module), "base_self",
						       json_number(x->base_self_share), "self", json_number(x->self_share),
						       "delta", json_number(x->delta)));
	}
	return json_pack("{s:o, s:o, s:o}", "base", td_hot_json(c->base), "current", td_hot_json(c->current),
			 "changes", items);
}

/* One side of the comparison's table: the rises, or the falls read from the end. */
static void hot_changes(const struct td_render *r, const struct td_hot_comparison *c, bool rises, size_t rows)
{
	char base[32], now[32];
	size_t shown = 0;

	for (size_t k = 0; k < c->nr_changes && shown < rows; k++) {
		const struct td_hot_change *x = &c->changes[rises ? k : c->nr_changes - 1 - k];

		if (rises ? x->delta <= 0 : x->delta >= 0)
			break;
		fprintf(r->out, "  %s%+7.1f%s  %7s -> %-7s  ", paint(r, rises ? RED : GREEN), x->delta * 100,
			reset(r), percent(x->base_self_share, false, base, sizeof(base)),
			percent(x->self_share, false, now, sizeof(now)));
		td_fputs_safe(r->out, x->name, 0);
		fputc('\n', r->out);
		shown++;
	}
	if (!shown)
		fprintf(r->out, "  (none)\n");
}

void td_render_hot_comparison(const struct td_render *r, const struct td_hot_comparison *c, size_t rows)
{
	if (r->format == TD_FORMAT_JSON)
		return emit_json(r, td_hot_comparison_json(c));
	if (r->format == TD_FORMAT_CSV) {
		fputs("function,module,base_self,self,delta\n", r->out);
		for (size_t i = 0; i < c->nr_changes; i++) {
			csv_text(r->out, c->changes[i].name, false);
			csv_text(r->out, c->changes[i].module, false);
			csv_number(r->out, c->changes[i].base_self_share, false);
			csv_number(r->out, c->changes[i].self_share, false);
			csv_number(r->out, c->changes[i].delta, true);
		}
		return;
	}
	fprintf(r->out, "Self share of %s, base %llu samples over %zu run%s, current %llu over %zu run%s "
		"(points of the samples)\n", c->current->unit, (unsigned long long)c->base->samples, c->base->nr_runs,
		c->base->nr_runs == 1 ? "" : "s", (unsigned long long)c->current->samples, c->current->nr_runs,
		c->current->nr_runs == 1 ? "" : "s");
	fprintf(r->out, "hotter:\n");
	hot_changes(r, c, true, rows ? rows : SIZE_MAX);
	fprintf(r->out, "cooler:\n");
	hot_changes(r, c, false, rows ? rows : SIZE_MAX);
}

/* Escaped as the tables are: folded text is read in terminals as much as by flamegraph.pl. */
void td_render_folded(FILE *out, const struct td_folded_set *set)
{
	for (size_t i = 0; i < set->nr_stacks; i++)
		if (set->stacks[i].count) {
			td_fputs_safe(out, set->stacks[i].stack, 0);
			fprintf(out, " %llu\n", (unsigned long long)set->stacks[i].count);
		}
}
