// SPDX-License-Identifier: BSD-3-Clause
/*
 * The /metrics text: the last window's Top-Down gauges and the agent's
 * health in the Prometheus text exposition format 0.0.4.
 *
 * Families, each with one HELP and one TYPE line before its samples (a
 * Top-Down family only when it has samples):
 *
 *   topdown_tma_process_ratio{process,metric,<user labels>}               gauge
 *   topdown_tma_process_confidence_ratio{same labels}                     gauge
 *   topdown_tma_thread_group_ratio{process,thread_group,metric,<user>}    gauge
 *   topdown_tma_thread_group_confidence_ratio{same labels}                gauge
 *   topdown_agent_{windows,partial_windows,dropped,runs_spooled,
 *                  runs_replayed,runs_stored_late,runs_lost,
 *                  cpu_seconds,bpf_seconds}_total                         counter
 *   topdown_agent_{spool_runs,store_queue_runs,overhead_ratio,
 *                  duty_ratio}                                            gauge
 *
 * What is exported. Whole-run rows (interval_seq -1: the window) of
 * levels 1 and 2, per process and per thread group; metric is the dotted
 * path ("Backend_Bound.Memory_Bound"). Process and thread group are two
 * families, not one with an optional label, so that sum() over a family
 * never adds a group to its process. Thread (tid) rows never: tids churn,
 * and every new one would be a new series. A value that is undefined
 * (NaN) is left out, so the series shows a gap: exported as NaN it would
 * turn every sum() and avg() over the family into NaN. The confidence
 * families carry the fraction of the window each value's events were
 * counted; below 0.5 the value is low-confidence (TD_CONFIDENCE_LOW), and
 * a label saying so would start a new series each time it flipped.
 *
 * Labels. Values have '\\', '"' and newline escaped, and bytes that are
 * not UTF-8 (thread names the kernel cut mid-character) become '?', since
 * Prometheus refuses a scrape with invalid UTF-8. User label keys become
 * label names: characters other than letters, digits and '_' (our keys
 * allow '.' and '-') become '_'; a key that would then start with a digit
 * or "__" (reserved by Prometheus), be empty, or be one of ours (process,
 * thread_group, metric) gets the prefix "user_"; a name still taken by an
 * earlier user label gets "_2", "_3", ... so no value is dropped.
 *
 * One series, one sample. A window holds one run per target, and a
 * target name may match several processes, in one run or in several
 * (two redis-server instances): their rows share the process label. Of
 * the processes (and of the thread groups) that would give the same
 * series, the one with the most on-CPU time in the window is exported,
 * all its nodes together (ties: the earlier run, then the smaller key).
 * A pid label would keep them apart, but pids churn like tids (a
 * restarting worker is a new series each time); ratios cannot be
 * averaged back into one tree (the engine sums counters, never ratios);
 * and the busiest process is the one whose slots the ratios describe
 * best.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "engine.h"
#include "exporter.h"
#include "utf8.h"

#define USER_PREFIX "user_"

/* The whole-run rows of one process or thread group of one run. */
struct source {
	const struct td_run *run;
	size_t run_index;
	enum td_metric_scope scope;
	const char *scope_key;
	char *process;     /* label values, escaped */
	char *group;       /* NULL for a process */
	uint64_t oncpu_ns; /* decides between sources of the same series */
	bool kept;
	size_t nr_rows, cap_rows;
	const struct td_metric_row **rows;
};

struct sources {
	size_t count, cap;
	struct source *items;
};

struct tma_family {
	const char *name, *help;
	enum td_metric_scope scope;
	bool confidence; /* samples are the rows' confidence, not their value */
};

static const struct tma_family tma_families[] = {
	{ "topdown_tma_process_ratio",
	  "Top-Down level 1 and 2 nodes of the last window per process: the fraction of pipeline slots.",
	  TD_SCOPE_PROCESS, false },
	{ "topdown_tma_process_confidence_ratio",
	  "The fraction of the last window the events of each topdown_tma_process_ratio were counted; below 0.5 it is low-confidence.",
	  TD_SCOPE_PROCESS, true },
	{ "topdown_tma_thread_group_ratio",
	  "Top-Down level 1 and 2 nodes of the last window per thread name (digits folded to *): the fraction of pipeline slots.",
	  TD_SCOPE_GROUP, false },
	{ "topdown_tma_thread_group_confidence_ratio",
	  "The fraction of the last window the events of each topdown_tma_thread_group_ratio were counted; below 0.5 it is low-confidence.",
	  TD_SCOPE_GROUP, true },
};

/* raw as a label value between quotes; NULL when out of memory. */
static char *label_value(const char *raw)
{
	char *out = malloc(2 * strlen(raw) + 1), *o = out;
	const unsigned char *p = (const unsigned char *)raw;

	if (!out)
		return NULL;
	while (*p) {
		size_t n = td_utf8_char_len(p);

		if (n == 0) {
			*o++ = '?';
			p++;
			continue;
		}
		if (*p == '\\' || *p == '"' || *p == '\n')
			*o++ = '\\';
		if (*p == '\n') {
			*o++ = 'n';
		} else {
			memcpy(o, p, n);
			o += n;
		}
		p += n;
	}
	*o = '\0';
	return out;
}

/* ---- user labels ---- */

static bool is_ours(const char *name)
{
	return !strcmp(name, "process") || !strcmp(name, "thread_group") || !strcmp(name, "metric");
}

static bool is_name_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* key as a label name none of names[0..n) has; NULL when out of memory. */
static char *label_name(const char *key, char *const *names, size_t n)
{
	size_t prefix = strlen(USER_PREFIX), len = strlen(key), room = prefix + len + 24;
	char *name = malloc(room), *sanitised;

	if (!name)
		return NULL;
	memcpy(name, USER_PREFIX, prefix);
	sanitised = name + prefix;
	for (size_t i = 0; i < len; i++)
		sanitised[i] = is_name_char(key[i]) ? key[i] : '_';
	sanitised[len] = '\0';
	if (sanitised[0] && !(sanitised[0] >= '0' && sanitised[0] <= '9') &&
	    strncmp(sanitised, "__", 2) && !is_ours(sanitised))
		memmove(name, sanitised, len + 1);
	len = strlen(name);
	for (unsigned suffix = 2;; suffix++) {
		bool taken = false;

		for (size_t i = 0; i < n && !taken; i++)
			taken = !strcmp(names[i], name);
		if (!taken)
			return name;
		snprintf(name + len, room - len, "_%u", suffix);
	}
}

/* ",name=\"value\"..." for every user label ("" for none); NULL when out of memory. */
static char *user_labels_text(const struct td_labels *labels)
{
	size_t count = labels ? labels->count : 0, done = 0, len;
	char **names = calloc(count + 1, sizeof(*names)), *text = NULL, *value;
	FILE *out = open_memstream(&text, &len);
	bool ok = names && out;

	for (; ok && done < count; done++) {
		names[done] = label_name(labels->items[done].key, names, done);
		value = label_value(labels->items[done].value);
		ok = names[done] && value;
		if (ok)
			fprintf(out, ",%s=\"%s\"", names[done], value);
		free(value);
	}
	if (out) {
		ok = ok && !ferror(out);
		ok = fclose(out) == 0 && ok;
	}
	for (size_t i = 0; names && i < count; i++)
		free(names[i]);
	free(names);
	if (!ok) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- sources ---- */

static bool exported_row(const struct td_metric_row *m)
{
	return m->interval_seq == -1 && m->level >= 1 && m->level <= 2 && m->path &&
	       m->scope_key && (m->scope == TD_SCOPE_PROCESS || m->scope == TD_SCOPE_GROUP);
}

static uint64_t source_oncpu_ns(const struct source *s)
{
	const struct td_run *run = s->run;
	unsigned long pid = strtoul(s->scope_key, NULL, 10);
	uint64_t sum = 0;

	for (size_t i = 0; i < run->nr_threads; i++) {
		const struct td_thread_row *th = &run->threads[i];
		char group[TD_COMM_LEN * 2];

		if (s->scope == TD_SCOPE_GROUP) {
			td_thread_group_name(th->comm, group, sizeof(group));
			if (strcmp(group, s->scope_key))
				continue;
		} else if (th->pid != pid) {
			continue;
		}
		sum += th->oncpu_ns;
	}
	return sum;
}

static void sources_free(struct sources *src)
{
	for (size_t i = 0; i < src->count; i++) {
		free(src->items[i].process);
		free(src->items[i].group);
		free(src->items[i].rows);
	}
	free(src->items);
}

/* The source of row m among the run's sources (from first on); a new
 * one when it has none. NULL when out of memory. */
static struct source *source_of(struct sources *src, size_t first, size_t run_index,
				const struct td_run *run, const struct td_metric_row *m)
{
	struct source *s, *grown;

	/* The engine writes a scope's rows together: the last source first. */
	for (size_t i = src->count; i-- > first;) {
		s = &src->items[i];
		if (s->scope == m->scope && !strcmp(s->scope_key, m->scope_key))
			return s;
	}
	grown = td_grow(src->items, &src->cap, src->count, sizeof(*src->items));
	if (!grown)
		return NULL;
	src->items = grown;
	s = &src->items[src->count++];
	*s = (struct source){ .run = run, .run_index = run_index, .scope = m->scope,
			      .scope_key = m->scope_key };
	s->process = label_value(run->process ? run->process : "");
	if (m->scope == TD_SCOPE_GROUP)
		s->group = label_value(m->scope_key);
	if (!s->process || (m->scope == TD_SCOPE_GROUP && !s->group))
		return NULL;
	s->oncpu_ns = source_oncpu_ns(s);
	return s;
}

static int add_run(struct sources *src, size_t run_index, const struct td_run *run)
{
	size_t first = src->count;

	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *m = &run->metrics[i];
		const struct td_metric_row **grown;
		struct source *s;

		if (!exported_row(m))
			continue;
		s = source_of(src, first, run_index, run, m);
		if (!s)
			return -ENOMEM;
		grown = td_grow(s->rows, &s->cap_rows, s->nr_rows, sizeof(*s->rows));
		if (!grown)
			return -ENOMEM;
		s->rows = grown;
		s->rows[s->nr_rows++] = m;
	}
	return 0;
}

/* The sources that give the same series sort together, the one to keep first. */
static int by_series_then_rank(const void *a, const void *b)
{
	const struct source *x = a, *y = b;
	int c;

	if (x->scope != y->scope)
		return x->scope == TD_SCOPE_PROCESS ? -1 : 1;
	if ((c = strcmp(x->process, y->process)))
		return c;
	if (x->group && (c = strcmp(x->group, y->group)))
		return c;
	if (x->oncpu_ns != y->oncpu_ns)
		return x->oncpu_ns > y->oncpu_ns ? -1 : 1;
	if (x->run_index != y->run_index)
		return x->run_index < y->run_index ? -1 : 1;
	return strcmp(x->scope_key, y->scope_key);
}

static bool same_series(const struct source *x, const struct source *y)
{
	return x->scope == y->scope && !strcmp(x->process, y->process) &&
	       (!x->group || !strcmp(x->group, y->group));
}

static int collect_sources(struct sources *src, const struct td_run *const *runs, size_t nr_runs)
{
	for (size_t i = 0; i < nr_runs; i++) {
		int rc = add_run(src, i, runs[i]);

		if (rc)
			return rc;
	}
	if (src->count)
		qsort(src->items, src->count, sizeof(*src->items), by_series_then_rank);
	for (size_t i = 0; i < src->count; i++)
		src->items[i].kept = i == 0 || !same_series(&src->items[i - 1], &src->items[i]);
	return 0;
}

/* ---- writing ---- */

/* v as Prometheus parses it: the shortest decimal that reads back as v. */
static void write_value(FILE *out, double v)
{
	char buf[32];

	if (isnan(v) || isinf(v)) {
		fputs(isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf", out);
		return;
	}
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof(buf), "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, out);
}

static void write_header(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int write_tma_family(FILE *out, const struct tma_family *f, const struct sources *src,
			    const char *user)
{
	bool started = false;

	for (size_t i = 0; i < src->count; i++) {
		const struct source *s = &src->items[i];

		if (!s->kept || s->scope != f->scope)
			continue;
		for (size_t r = 0; r < s->nr_rows; r++) {
			const struct td_metric_row *m = s->rows[r];
			double v = f->confidence ? m->confidence : m->value;
			char *path;

			if (!isfinite(m->value) || !isfinite(v))
				continue;
			if (!started)
				write_header(out, f->name, "gauge", f->help);
			started = true;
			path = label_value(m->path);
			if (!path)
				return -ENOMEM;
			fprintf(out, "%s{process=\"%s\"", f->name, s->process);
			if (s->group)
				fprintf(out, ",thread_group=\"%s\"", s->group);
			fprintf(out, ",metric=\"%s\"%s} ", path, user);
			free(path);
			write_value(out, v);
			fputc('\n', out);
		}
	}
	return 0;
}

static void write_health(FILE *out, const struct td_agent_health *h)
{
	const struct {
		const char *name, *type, *help;
		double value;
	} metrics[] = {
		{ "topdown_agent_windows_total", "counter",
		  "Windows stored since the agent started.", (double)h->windows },
		{ "topdown_agent_partial_windows_total", "counter",
		  "Windows cut short.", (double)h->partial_windows },
		{ "topdown_agent_dropped_total", "counter",
		  "Threads and slices the kernel side could not keep.", (double)h->dropped },
		{ "topdown_agent_runs_spooled_total", "counter",
		  "Runs that went to the local spool while the store was unreachable.",
		  (double)h->runs_spooled },
		{ "topdown_agent_runs_replayed_total", "counter",
		  "Spooled runs the store has since taken.", (double)h->runs_replayed },
		{ "topdown_agent_runs_stored_late_total", "counter",
		  "Runs stored (or spooled) more than a window after their window ended: "
		  "a stalled store delayed them, their counts are their window's.",
		  (double)h->runs_stored_late },
		{ "topdown_agent_runs_lost_total", "counter",
		  "Runs neither the store nor the spool took.", (double)h->runs_lost },
		{ "topdown_agent_cpu_seconds_total", "counter",
		  "The agent's own user and system CPU time.", h->agent_cpu_seconds },
		{ "topdown_agent_bpf_seconds_total", "counter",
		  "Run time of the agent's BPF programs.", h->bpf_seconds },
		{ "topdown_agent_spool_runs", "gauge",
		  "Runs waiting in the spool for the store.", (double)h->spool_depth },
		{ "topdown_agent_store_queue_runs", "gauge",
		  "Runs in the agent's memory waiting to be stored or spooled.", (double)h->store_queue },
		{ "topdown_agent_overhead_ratio", "gauge",
		  "Last window: agent CPU and BPF time over the window's wall time times CPUs.",
		  h->overhead_percent / 100 },
		{ "topdown_agent_duty_ratio", "gauge",
		  "Last window: the fraction of it that was counted.", h->duty },
	};

	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++) {
		write_header(out, metrics[i].name, metrics[i].type, metrics[i].help);
		fprintf(out, "%s ", metrics[i].name);
		write_value(out, metrics[i].value);
		fputc('\n', out);
	}
}

char *td_exposition_render(const struct td_run *const *runs, size_t nr_runs,
			   const struct td_labels *labels, const struct td_agent_health *health)
{
	struct sources src = { 0 };
	char *user = NULL, *text = NULL;
	FILE *out = NULL;
	size_t len;
	bool ok = collect_sources(&src, runs, nr_runs) == 0 &&
		  (user = user_labels_text(labels)) && (out = open_memstream(&text, &len));

	for (size_t i = 0; ok && i < sizeof(tma_families) / sizeof(tma_families[0]); i++)
		ok = write_tma_family(out, &tma_families[i], &src, user) == 0;
	if (ok && health)
		write_health(out, health);
	if (out) {
		ok = ok && !ferror(out);
		ok = fclose(out) == 0 && ok;
	}
	sources_free(&src);
	free(user);
	if (!ok) {
		free(text);
		return NULL;
	}
	return text;
}
