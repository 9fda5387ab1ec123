// SPDX-License-Identifier: BSD-3-Clause
/*
 * import: perf stat output → counts → a run with its Top-Down tree.
 *
 * The parser keeps the file's own vocabulary (event names as written, CPU
 * ids, thread names); td_import_build() alone knows models.  Every line is
 * checked against the layout of the first count line, so a file that
 * mixes layouts, or a line cut short, is refused with its line number
 * rather than read into the wrong columns.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "engine.h"
#include "import.h"
#include "utf8.h"

#define MAX_FIELDS 64
#define MAX_MAPPED 4 /* model events one perf event may stand for */

/* ==== parsing ============================================================= */

static int line_error(char *err, size_t errlen, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int line_error(char *err, size_t errlen, int line, const char *fmt, ...)
{
	char what[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "line %d: %s", line, what);
	return -EINVAL;
}

/* A string table: each distinct string once, looked up in O(1). */
struct strtab {
	char ***items; /* the owner's array (ps->events, ps->units) */
	size_t *count;
	size_t cap;
	size_t *hash; /* index + 1 per cell; 0 = empty */
	size_t mask;
};

static size_t str_hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static int strtab_rehash(struct strtab *t)
{
	size_t cells = t->mask ? (t->mask + 1) * 2 : 64;
	size_t *hash = calloc(cells, sizeof(*hash));

	if (!hash)
		return -ENOMEM;
	for (size_t i = 0; i < *t->count; i++) {
		size_t c = str_hash((*t->items)[i]) & (cells - 1);

		while (hash[c])
			c = (c + 1) & (cells - 1);
		hash[c] = i + 1;
	}
	free(t->hash);
	t->hash = hash;
	t->mask = cells - 1;
	return 0;
}

/* The index of s, added when new (*added says so); -ENOMEM. */
static long strtab_intern(struct strtab *t, const char *s, bool *added)
{
	size_t c;

	*added = false;
	if (2 * (*t->count + 1) > t->mask + 1 && strtab_rehash(t))
		return -ENOMEM;
	for (c = str_hash(s) & t->mask; t->hash[c]; c = (c + 1) & t->mask)
		if (strcmp((*t->items)[t->hash[c] - 1], s) == 0)
			return (long)(t->hash[c] - 1);
	if (*t->count == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **grown = reallocarray(*t->items, cap, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		*t->items = grown;
		t->cap = cap;
	}
	(*t->items)[*t->count] = strdup(s);
	if (!(*t->items)[*t->count])
		return -ENOMEM;
	t->hash[c] = ++*t->count;
	*added = true;
	return (long)(*t->count - 1);
}

/* What the count lines of a CSV file start with, before the count. */
enum prefix { PREFIX_NONE, PREFIX_CPU, PREFIX_THREAD, PREFIX_UNIT };

struct layout {
	bool time;
	enum prefix prefix;
};

/* One count line, read but not yet stored. */
struct record {
	double interval_s;
	uint32_t tid;
	char comm[TD_COMM_LEN];
	char unit_id[64];
	const char *event;
	const char *event_unit;
	double value, runtime_ns, running_fraction;
};

struct parser {
	struct td_perf_stat *ps;
	struct strtab events, units;
	size_t cap_counts, cap_event_units;
	char *scratch;            /* a copy of the line being read, as long as it */
	int line;
	bool layout_known;
	struct layout layout;     /* CSV */
	bool json_seen_interval;  /* JSON: what the first count line had */
	bool json_seen_thread, json_seen_unit;
	char *err;
	size_t errlen;
};

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return s;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* A finite decimal number, nothing else ("nan" and "inf" are not counts). */
static bool parse_number(const char *s, double *out)
{
	char *end;

	if (!(isdigit((unsigned char)*s) || *s == '.' || *s == '-' || *s == '+'))
		return false;
	errno = 0;
	*out = strtod(s, &end);
	return end != s && !*end && errno != ERANGE && isfinite(*out);
}

/* -I timestamps: seconds with a fraction, "     1.000123456". */
static bool parse_timestamp(const char *s, double *out)
{
	return strchr(s, '.') && isdigit((unsigned char)*s) && parse_number(s, out) && *out >= 0;
}

/* "comm-tid"; the name itself may contain '-'. */
static bool parse_thread(const char *s, uint32_t *tid, char *comm)
{
	const char *dash = strrchr(s, '-');
	unsigned long long v;

	if (!dash || dash == s || !all_digits(dash + 1) || strlen(dash + 1) > 10)
		return false;
	v = strtoull(dash + 1, NULL, 10);
	if (v == 0 || v > UINT32_MAX)
		return false;
	*tid = (uint32_t)v;
	snprintf(comm, TD_COMM_LEN, "%.*s", (int)(dash - s), s);
	td_utf8_sanitize(comm); /* perf prints the kernel's cut names as they are */
	return true;
}

/* "CPU3", or perf's aggregation ids: S0, S0-D1, S0-D0-C5, S0-D0-L2-ID4,
 * S0-D0-CLS1, N0. */
static bool is_unit_id(const char *s, bool cpu)
{
	if (cpu) {
		if (strncmp(s, "CPU", 3) != 0)
			return false;
		for (s += 3; *s == ' ';)
			s++;
		return all_digits(s);
	}
	if ((*s != 'S' && *s != 'N') || !isdigit((unsigned char)s[1]))
		return false;
	for (s++; *s; s++)
		if (!isdigit((unsigned char)*s) && !isupper((unsigned char)*s) && *s != '-')
			return false;
	return s[-1] != '-';
}

/* The count field: a number, or perf's words for no count. */
static bool parse_count(const char *s, double *value)
{
	if (strcmp(s, "<not counted>") == 0 || strcmp(s, "<not supported>") == 0) {
		*value = NAN;
		return true;
	}
	return parse_number(s, value);
}

/* Whether name has a '/' left open ("cpu/event=0xc2" before ",umask=2/"). */
static bool pmu_open(const char *name)
{
	size_t slashes = 0;

	for (; *name; name++)
		slashes += *name == '/';
	return slashes % 2 == 1;
}

enum verdict { LINE_OK, LINE_SKIP, LINE_BAD };

/*
 * Reads fields f[0..n) with layout l into r.  LINE_SKIP: a line with no
 * count and no event (perf prints extra metrics so).  LINE_BAD with why.
 * The event field is joined back when its PMU terms held commas; the
 * fields are modified in place.
 */
static enum verdict read_fields(char **f, size_t n, struct layout l, struct record *r,
				char *why, size_t whylen)
{
	size_t i = 0, need = (size_t)l.time + (l.prefix == PREFIX_UNIT ? 2 : l.prefix != PREFIX_NONE) + 3;

	if (n < need) {
		snprintf(why, whylen, "expected at least %zu fields, found %zu", need, n);
		return LINE_BAD;
	}
	r->interval_s = NAN;
	r->tid = 0;
	r->comm[0] = r->unit_id[0] = '\0';
	if (l.time && !parse_timestamp(trim(f[i++]), &r->interval_s)) {
		snprintf(why, whylen, "expected an interval timestamp in field 1, got '%s'", f[0]);
		return LINE_BAD;
	}
	switch (l.prefix) {
	case PREFIX_NONE:
		break;
	case PREFIX_CPU:
	case PREFIX_UNIT: {
		char *id = trim(f[i]);

		if (!is_unit_id(id, l.prefix == PREFIX_CPU) ||
		    (l.prefix == PREFIX_UNIT && !all_digits(trim(f[i + 1])))) {
			snprintf(why, whylen, "expected a %s in field %zu, got '%s'",
				 l.prefix == PREFIX_CPU ? "CPU (CPU3)" : "unit id and count (S0-D0-C1,2)",
				 i + 1, id);
			return LINE_BAD;
		}
		snprintf(r->unit_id, sizeof(r->unit_id), "%s", id);
		i += l.prefix == PREFIX_UNIT ? 2 : 1;
		break;
	}
	case PREFIX_THREAD:
		if (!parse_thread(trim(f[i]), &r->tid, r->comm)) {
			snprintf(why, whylen, "expected a thread (name-tid) in field %zu, got '%s'", i + 1,
				 f[i]);
			return LINE_BAD;
		}
		i++;
		break;
	}
	char *count = trim(f[i]), *unit = trim(f[i + 1]), *event = trim(f[i + 2]);
	size_t count_field = i + 1;

	i += 3;
	if (!*count && !*event)
		return LINE_SKIP;
	while (pmu_open(event) && i < n) { /* undo the split inside cpu/.../ */
		event[strlen(event)] = ',';
		i++;
	}
	event = trim(event);
	if (!parse_count(count, &r->value)) {
		snprintf(why, whylen,
			 "expected a count, '<not counted>' or '<not supported>' in field %zu, got '%s'",
			 count_field, count);
		return LINE_BAD;
	}
	double ignored;
	if (!*event || parse_number(event, &ignored) || parse_number(unit, &ignored)) {
		snprintf(why, whylen, "expected a unit and an event name after the count in field %zu",
			 count_field);
		return LINE_BAD;
	}
	r->event = event;
	r->event_unit = unit;
	/* Then: [noise "1.23%"] run time, percentage, [metric value, metric unit]. */
	while (i < n && *trim(f[i]) && f[i][strlen(f[i]) - 1] == '%')
		i++;
	r->runtime_ns = NAN;
	r->running_fraction = 1;
	if (i < n && *trim(f[i]) && !all_digits(f[i])) {
		snprintf(why, whylen,
			 "field %zu ('%s') is not a run time; per-cgroup output (perf stat -G) is not "
			 "supported, run perf stat without -G",
			 i + 1, f[i]);
		return LINE_BAD;
	}
	if (i < n && *f[i])
		r->runtime_ns = strtod(f[i], NULL);
	if (++i < n && *trim(f[i])) {
		double pct;

		if (!parse_number(f[i], &pct) || pct < 0 || pct > 100) {
			snprintf(why, whylen, "expected the percentage counted (0-100) in field %zu, got '%s'",
				 i + 1, f[i]);
			return LINE_BAD;
		}
		r->running_fraction = pct / 100;
	}
	if (isnan(r->value))
		r->running_fraction = 0;
	return LINE_OK;
}

/* Split line (modified in place) at every ','; 0 when there are too many. */
static size_t split_fields(char *line, char **f)
{
	size_t n = 0;

	for (char *s = line;; s++) {
		char *comma = strchr(s, ',');

		if (n == MAX_FIELDS)
			return 0;
		f[n++] = s;
		if (!comma)
			return n;
		*comma = '\0';
		s = comma;
	}
}

/*
 * Reads line with layout l from a fresh copy in p->scratch (a failed try
 * leaves its copy modified).  r's strings point into p->scratch.
 */
static enum verdict read_with_layout(struct parser *p, const char *line, struct layout l,
				     struct record *r, char *why, size_t whylen)
{
	char *f[MAX_FIELDS];
	size_t n;

	strcpy(p->scratch, line);
	n = split_fields(p->scratch, f);
	if (!n) {
		snprintf(why, whylen, "more than %d fields", MAX_FIELDS);
		return LINE_BAD;
	}
	return read_fields(f, n, l, r, why, whylen);
}

/* The first count line decides the layout: the first one that reads. */
static enum verdict parse_csv(struct parser *p, const char *line, struct record *r)
{
	static const struct layout candidates[] = {
		{ false, PREFIX_NONE },	 { false, PREFIX_CPU },	 { false, PREFIX_UNIT },
		{ false, PREFIX_THREAD }, { true, PREFIX_NONE },  { true, PREFIX_CPU },
		{ true, PREFIX_UNIT },	 { true, PREFIX_THREAD },
	};
	char why[256];
	enum verdict v;

	if (!strchr(line, ',')) {
		line_error(p->err, p->errlen, p->line,
			   "no ',' between fields; topdown reads perf stat -x, (CSV) or -j (JSON) output");
		return LINE_BAD;
	}
	if (p->layout_known) {
		v = read_with_layout(p, line, p->layout, r, why, sizeof(why));
		if (v == LINE_BAD)
			line_error(p->err, p->errlen, p->line, "%s", why);
		return v;
	}
	for (size_t c = 0; c < sizeof(candidates) / sizeof(candidates[0]); c++) {
		v = read_with_layout(p, line, candidates[c], r, why, sizeof(why));
		if (v == LINE_OK) {
			p->layout = candidates[c];
			p->layout_known = true;
			p->ps->per_thread = p->layout.prefix == PREFIX_THREAD;
			p->ps->has_intervals = p->layout.time;
		}
		if (v != LINE_BAD)
			return v;
	}
	line_error(p->err, p->errlen, p->line,
		   "not a perf stat -x, count line: expected [timestamp,][CPU/thread/unit,]count,"
		   "unit,event,run time,percentage");
	return LINE_BAD;
}

/* ---- JSON lines ------------------------------------------------------------ */

static const char *json_text(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool json_number_of(json_t *obj, const char *key, double *out)
{
	json_t *v = json_object_get(obj, key);

	if (json_is_number(v)) {
		*out = json_number_value(v);
		return isfinite(*out);
	}
	return json_is_string(v) && parse_number(json_string_value(v), out);
}

/* The CPU or unit a JSON count belongs to, or "" (aggregated). */
static bool json_unit(json_t *obj, char *out, size_t len)
{
	static const char *const keys[] = { "core", "socket", "die", "node", "cache", "cluster" };
	json_t *cpu = json_object_get(obj, "cpu");

	out[0] = '\0';
	if (json_is_string(cpu) && all_digits(json_string_value(cpu)))
		snprintf(out, len, "CPU%s", json_string_value(cpu));
	else if (json_is_integer(cpu) && json_integer_value(cpu) >= 0)
		snprintf(out, len, "CPU%lld", (long long)json_integer_value(cpu));
	else if (cpu)
		return false;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && !out[0]; i++) {
		const char *id = json_text(obj, keys[i]);

		if (id && *id)
			snprintf(out, len, "%s", id);
		else if (json_object_get(obj, keys[i]))
			return false;
	}
	return true;
}

/* Every count line must say the same things as the first one. */
static bool json_same_shape(struct parser *p, bool interval, bool thread, bool unit)
{
	if (!p->layout_known) {
		p->layout_known = true;
		p->json_seen_interval = interval;
		p->json_seen_thread = thread;
		p->json_seen_unit = unit;
		p->ps->has_intervals = interval;
		p->ps->per_thread = thread;
		return true;
	}
	return interval == p->json_seen_interval && thread == p->json_seen_thread &&
	       unit == p->json_seen_unit;
}

static enum verdict read_json_count(struct parser *p, json_t *obj, struct record *r)
{
	const char *event = json_text(obj, "event"), *count = json_text(obj, "counter-value");
	const char *thread = json_text(obj, "thread");
	double pct;

	if (json_object_get(obj, "cgroup")) {
		line_error(p->err, p->errlen, p->line,
			   "per-cgroup output (perf stat -G) is not supported; run perf stat without -G");
		return LINE_BAD;
	}
	if (!event && !json_object_get(obj, "counter-value")) {
		if (json_object_get(obj, "metric-value"))
			return LINE_SKIP; /* a derived metric on its own line */
		line_error(p->err, p->errlen, p->line,
			   "the JSON object has no \"event\" and no \"counter-value\"");
		return LINE_BAD;
	}
	if (!event || !*event) {
		line_error(p->err, p->errlen, p->line, "the JSON object has no \"event\" name");
		return LINE_BAD;
	}
	r->event = event;
	r->event_unit = json_text(obj, "unit") ? json_text(obj, "unit") : "";
	if (count ? !parse_count(count, &r->value) : !json_number_of(obj, "counter-value", &r->value)) {
		line_error(p->err, p->errlen, p->line,
			   "\"counter-value\" must be a count, \"<not counted>\" or \"<not supported>\"");
		return LINE_BAD;
	}
	r->interval_s = NAN;
	if (json_object_get(obj, "interval") &&
	    (!json_number_of(obj, "interval", &r->interval_s) || r->interval_s < 0)) {
		line_error(p->err, p->errlen, p->line, "\"interval\" must be a number of seconds");
		return LINE_BAD;
	}
	r->tid = 0;
	r->comm[0] = '\0';
	if (thread && !parse_thread(thread, &r->tid, r->comm)) {
		line_error(p->err, p->errlen, p->line, "\"thread\" must be name-tid, got '%s'", thread);
		return LINE_BAD;
	}
	if (!json_unit(obj, r->unit_id, sizeof(r->unit_id))) {
		line_error(p->err, p->errlen, p->line, "the CPU or unit id is not a perf stat id");
		return LINE_BAD;
	}
	if (!json_same_shape(p, !isnan(r->interval_s), thread != NULL, r->unit_id[0] != '\0')) {
		line_error(p->err, p->errlen, p->line,
			   "the count has a different layout (interval, thread, CPU) than the first one");
		return LINE_BAD;
	}
	if (!json_number_of(obj, "event-runtime", &r->runtime_ns))
		r->runtime_ns = NAN;
	r->running_fraction = json_number_of(obj, "pcnt-running", &pct) ? pct / 100 : 1;
	if (!(r->running_fraction >= 0 && r->running_fraction <= 1)) {
		line_error(p->err, p->errlen, p->line, "\"pcnt-running\" must be 0 to 100");
		return LINE_BAD;
	}
	if (isnan(r->value))
		r->running_fraction = 0;
	return LINE_OK;
}

/* jansson owns the strings r points to while obj lives: store, then free. */
static int store_record(struct parser *p, const struct record *r);

static int parse_json(struct parser *p, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *obj = json_loadb(line, len, 0, &jerr);
	struct record r;
	enum verdict v;
	int rc = 0;

	if (!json_is_object(obj)) {
		json_decref(obj);
		return line_error(p->err, p->errlen, p->line, "not a JSON object (%s at column %d)",
				  obj ? "an array" : jerr.text, jerr.column);
	}
	v = read_json_count(p, obj, &r);
	if (v == LINE_BAD)
		rc = -EINVAL;
	else if (v == LINE_OK)
		rc = store_record(p, &r);
	json_decref(obj);
	return rc;
}

/* ---- storing counts -------------------------------------------------------- */

static int store_record(struct parser *p, const struct record *r)
{
	struct td_perf_stat *ps = p->ps;
	bool added;
	long event = strtab_intern(&p->events, r->event, &added), unit = -1;

	if (event >= 0 && added) {
		if (ps->n_events > p->cap_event_units) {
			size_t cap = p->events.cap;
			char **grown = reallocarray(ps->event_units, cap, sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			ps->event_units = grown;
			p->cap_event_units = cap;
		}
		ps->event_units[event] = strdup(r->event_unit);
		if (!ps->event_units[event])
			return -ENOMEM;
	}
	if (event >= 0 && r->unit_id[0])
		unit = strtab_intern(&p->units, r->unit_id, &added);
	if (event < 0 || (r->unit_id[0] && unit < 0))
		return -ENOMEM;
	if (ps->n_counts == p->cap_counts) {
		size_t cap = p->cap_counts ? p->cap_counts * 2 : 64;
		struct td_perf_count *grown = reallocarray(ps->counts, cap, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		ps->counts = grown;
		p->cap_counts = cap;
	}
	struct td_perf_count *c = &ps->counts[ps->n_counts++];

	*c = (struct td_perf_count){
		.line = p->line,
		.interval_s = r->interval_s,
		.tid = r->tid,
		.unit = (int)unit,
		.event = (size_t)event,
		.value = r->value,
		.runtime_ns = r->runtime_ns,
		.running_fraction = r->running_fraction,
	};
	memcpy(c->comm, r->comm, sizeof(c->comm));
	return 0;
}

/* "# started on Fri Nov 21 10:30:00 2025": perf -o writes it first. */
static void read_comment(struct parser *p, const char *line)
{
	const char *s = strstr(line, "started on ");
	struct tm tm = { .tm_isdst = -1 };

	if (p->ps->started_ns || !s || !strptime(s + 11, "%a %b %d %H:%M:%S %Y", &tm))
		return;
	time_t t = mktime(&tm);

	if (t > 0)
		p->ps->started_ns = (int64_t)t * 1000000000;
}

static int parse_line(struct parser *p, char *line, size_t len)
{
	char *s = line;
	struct record r;
	enum verdict v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return 0;
	if (*s == '#') {
		read_comment(p, s);
		return 0;
	}
	if (!p->layout_known && p->ps->n_counts == 0)
		p->ps->format = *s == '{' ? TD_PERF_JSON : TD_PERF_CSV;
	if ((*s == '{') != (p->ps->format == TD_PERF_JSON))
		return line_error(p->err, p->errlen, p->line, "%s",
				  p->ps->format == TD_PERF_JSON
					  ? "expected a JSON object like the lines before"
					  : "a JSON object among CSV lines; import one format per file");
	if (p->ps->format == TD_PERF_JSON)
		return parse_json(p, s, len - (size_t)(s - line));
	v = parse_csv(p, s, &r);
	return v == LINE_BAD ? -EINVAL : v == LINE_SKIP ? 0 : store_record(p, &r);
}

void td_perf_stat_free(struct td_perf_stat *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->n_events; i++) {
		free(ps->events[i]);
		free(ps->event_units ? ps->event_units[i] : NULL);
	}
	for (size_t i = 0; i < ps->n_units; i++)
		free(ps->units[i]);
	free(ps->events);
	free(ps->event_units);
	free(ps->units);
	free(ps->counts);
	free(ps);
}

int td_perf_stat_parse(const char *text, size_t len, struct td_perf_stat **out, char *err,
		       size_t errlen)
{
	struct parser p = { .err = err, .errlen = errlen };
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;

	*out = NULL;
	p.ps = calloc(1, sizeof(*p.ps));
	if (!p.ps)
		return -ENOMEM;
	p.events = (struct strtab){ .items = &p.ps->events, .count = &p.ps->n_events };
	p.units = (struct strtab){ .items = &p.ps->units, .count = &p.ps->n_units };
	for (size_t pos = 0; pos < len && !rc;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = (nl ? (size_t)(nl - text) : len) - pos;

		p.line++;
		if (n + 1 > cap) {
			char *grown = realloc(line, n + 1), *scratch;

			if (grown)
				line = grown;
			scratch = grown ? realloc(p.scratch, n + 1) : NULL;
			if (!scratch) {
				rc = -ENOMEM;
				break;
			}
			p.scratch = scratch;
			cap = n + 1;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + 1;
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if (memchr(line, '\0', n))
			rc = line_error(err, errlen, p.line, "contains a NUL byte; this is not perf stat text output");
		else
			rc = parse_line(&p, line, n);
	}
	if (!rc && !p.ps->n_counts)
		rc = -ENODATA;
	free(line);
	free(p.scratch);
	free(p.events.hash);
	free(p.units.hash);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory while reading the perf stat output");
	else if (rc == -ENODATA) {
		snprintf(err, errlen, "no event counts found; expected the output of perf stat -x, "
				      "(CSV) or perf stat -j (JSON)");
		rc = -EINVAL;
	}
	if (rc) {
		td_perf_stat_free(p.ps);
		return rc;
	}
	*out = p.ps;
	return 0;
}

/* ==== mapping perf's event names onto a model ============================== */

/* perf's generic hardware events and what each vendor's kernel counts for
 * them (0: not a fixed event there). */
static const struct generic_event {
	const char *name;
	uint64_t intel, amd, arm;
} generic_events[] = {
	{ "cycles", 0x3c, 0x76, 0x11 },
	{ "cpu-cycles", 0x3c, 0x76, 0x11 },
	{ "instructions", 0xc0, 0xc0, 0x08 },
	{ "ref-cycles", 0x300, 0, 0 },
	{ "branches", 0xc4, 0xc2, 0 },
	{ "branch-instructions", 0xc4, 0xc2, 0 },
	{ "branch-misses", 0xc5, 0xc3, 0x10 },
	{ "cache-references", 0x4f2e, 0, 0x04 },
	{ "cache-misses", 0x412e, 0, 0x03 },
	{ "bus-cycles", 0x13c, 0, 0x1d },
	{ "slots", 0x400, 0, 0 },
	{ "stalled-cycles-frontend", 0, 0, 0x23 },
	{ "stalled-cycles-backend", 0, 0, 0x24 },
};

static size_t match_config(const struct td_model *m, uint64_t config, uint64_t config1, int *out,
			   size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n_events; i++)
		if (m->events[i].config == config && m->events[i].config1 == config1) {
			if (n < max)
				out[n] = (int)i;
			n++;
		}
	return n;
}

/* The kb names events of hybrid parts' PMUs "cpu_core/NAME/"; compare NAME. */
static bool same_event_name(const struct td_model *m, const char *kb_name, const char *name)
{
	size_t pmu = strlen(m->pmu), len = strlen(kb_name);

	if (strncmp(kb_name, m->pmu, pmu) == 0 && kb_name[pmu] == '/' && kb_name[len - 1] == '/')
		return strlen(name) == len - pmu - 2 && strncasecmp(kb_name + pmu + 1, name, len - pmu - 2) == 0;
	return strcasecmp(kb_name, name) == 0;
}

static const struct td_event_def *event_named(const struct td_model *m, const char *name)
{
	for (size_t i = 0; i < m->n_events; i++)
		if (same_event_name(m, m->events[i].name, name))
			return &m->events[i];
	return NULL;
}

static bool parse_u64_term(const char *s, uint64_t *out)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return !*end && !errno;
}

/* One "key=value" (or flag) term of a PMU event onto config/config1, as
 * the x86 core PMUs and the Arm PMU lay their format fields out. */
static bool apply_term(const struct td_model *m, const char *term, uint64_t *config,
		       uint64_t *config1)
{
	static const struct { const char *key; int shift; } flags[] = {
		{ "edge", 18 }, { "pc", 19 }, { "any", 21 }, { "inv", 23 },
	};
	const char *eq = strchr(term, '=');
	size_t klen = eq ? (size_t)(eq - term) : strlen(term);
	uint64_t v = 1;

#define KEY(k) (klen == strlen(k) && strncasecmp(term, k, klen) == 0)
	/* Terms that name or sample the event but do not change what it counts. */
	if (KEY("name") || KEY("metric-id") || KEY("period") || KEY("freq") || KEY("percore"))
		return true;
	if (eq && !parse_u64_term(eq + 1, &v))
		return false;
	if (KEY("config"))
		*config = v;
	else if (KEY("config1") || KEY("offcore_rsp") || KEY("ldlat") || KEY("frontend"))
		*config1 = v;
	else if (KEY("event") && m->vendor == TD_VENDOR_ARM)
		*config = v & 0xffff;
	else if (KEY("event")) /* EventCode[7:0] and, on AMD, [11:8] at bit 32 */
		*config |= (v & 0xff) | ((v >> 8) & 0xf) << 32;
	else if (KEY("umask") && m->vendor != TD_VENDOR_ARM)
		*config |= (v & 0xff) << 8;
	else if (KEY("cmask") && m->vendor != TD_VENDOR_ARM)
		*config |= (v & 0xff) << 24;
	else {
		for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
			if (KEY(flags[i].key) && m->vendor != TD_VENDOR_ARM && v <= 1) {
				*config |= v << flags[i].shift;
				return true;
			}
		return false;
	}
#undef KEY
	return true;
}

/*
 * An encoding from raw syntax: "r1c2", "event=0xc2,umask=0x2", or a name
 * the model knows with extra terms ("ICACHE_16B.IFDATA_STALL,cmask=1,edge").
 */
static bool raw_config(const struct td_model *m, char *body, uint64_t *config, uint64_t *config1)
{
	char *save = NULL, *term = strtok_r(body, ",", &save);

	*config = *config1 = 0;
	if (!term)
		return false;
	if (term[0] == 'r' && !strchr(term, '=') && !save[0]) {
		char *end;

		errno = 0;
		*config = strtoull(term + 1, &end, 16);
		return term[1] && !*end && !errno;
	}
	if (!strchr(term, '=')) {
		const struct td_event_def *base = event_named(m, term);

		if (!base)
			return false;
		*config = base->config;
		*config1 = base->config1;
		term = strtok_r(NULL, ",", &save);
	}
	for (; term; term = strtok_r(NULL, ",", &save))
		if (!apply_term(m, term, config, config1))
			return false;
	return true;
}

static uint64_t generic_config(const struct td_model *m, const char *name)
{
	for (size_t i = 0; i < sizeof(generic_events) / sizeof(generic_events[0]); i++)
		if (strcasecmp(generic_events[i].name, name) == 0)
			return m->vendor == TD_VENDOR_INTEL ? generic_events[i].intel
			       : m->vendor == TD_VENDOR_AMD ? generic_events[i].amd
							    : generic_events[i].arm;
	return 0;
}

/* Whether events written as pmu/.../ can be the model's. */
static bool pmu_matches(const struct td_model *m, const char *pmu)
{
	size_t n = strlen(m->pmu);

	if (strcasecmp(pmu, m->pmu) == 0)
		return true;
	if (strncasecmp(pmu, m->pmu, n) == 0 && pmu[n] == '_' && all_digits(pmu + n + 1))
		return true; /* armv8_pmuv3_0 */
	if (m->vendor == TD_VENDOR_ARM)
		return strncasecmp(pmu, "armv8_", 6) == 0 || strncasecmp(pmu, "armv9_", 6) == 0;
	return strcmp(pmu, "cpu") == 0; /* the core PMU's usual name */
}

size_t td_import_map_event(const struct td_model *m, const char *perf_name, int *out, size_t max,
			   bool *other_pmu)
{
	char buf[512], *body = buf, *colon;
	uint64_t config, config1;
	const struct td_event_def *named;

	if (other_pmu)
		*other_pmu = false;
	if (snprintf(buf, sizeof(buf), "%s", perf_name) >= (int)sizeof(buf))
		return 0;
	body = trim(buf);
	char *slash = strchr(body, '/');

	if (slash) { /* pmu/body/modifiers */
		char *last = strrchr(body, '/');

		if (last == slash || slash == body)
			return 0;
		*slash = *last = '\0';
		if (!pmu_matches(m, body)) {
			if (other_pmu)
				*other_pmu = true;
			return 0;
		}
		body = slash + 1;
	} else if ((colon = strrchr(body, ':'))) { /* cycles:u */
		for (const char *c = colon + 1; *c; c++)
			if (!isalpha((unsigned char)*c))
				return 0;
		*colon = '\0';
	}
	if ((named = event_named(m, body))) {
		if (max)
			out[0] = (int)(named - m->events);
		return 1;
	}
	config = generic_config(m, body);
	if (config)
		return match_config(m, config, 0, out, max);
	return raw_config(m, body, &config, &config1) ? match_config(m, config, config1, out, max) : 0;
}

/* ==== building the run ======================================================== */

static int add_note(struct td_import *imp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int add_note(struct td_import *imp, const char *fmt, ...)
{
	char **grown = reallocarray(imp->notes, imp->n_notes + 1, sizeof(*grown));
	va_list ap;
	int n;

	if (!grown)
		return -ENOMEM;
	imp->notes = grown;
	va_start(ap, fmt);
	n = vasprintf(&imp->notes[imp->n_notes], fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	imp->n_notes++;
	return 0;
}

/* Appends ", name" to a list being built in buf (names past len are cut). */
static void list_append(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);

	if (used + 1 < len)
		snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
}

#define TASK_CLOCK (-2) /* file events not mapped: -1; task-clock: on-CPU time */

/* What the file's events became: per file event, its run events. */
struct mapping {
	int (*run_events)[MAX_MAPPED];
	size_t *n_run_events;
	int model_event[TD_MAX_EVENTS]; /* per run event, its index in m->events */
	size_t n;
	int duration_event;             /* the file's duration_time, or -1 */
};

/* The lowest tree level that needs model event i; 5 for Info, 6 for none. */
static int event_rank(const struct td_model *m, int i)
{
	unsigned used = m->events[i].used_by;

	for (int level = 1; level <= 4; level++)
		if (used & TD_USED_BY_LEVEL(level))
			return level;
	return used & TD_USED_BY_INFO ? 5 : 6;
}

static int claim_event(const struct td_perf_stat *ps, const struct td_model *m, size_t f,
		       int model_event, int *claimed_by, struct td_import *imp)
{
	if (claimed_by[model_event] >= 0)
		return add_note(imp, "'%s' and '%s' both count %s; the counts of '%s' were used",
				ps->events[claimed_by[model_event]], ps->events[f],
				m->events[model_event].name, ps->events[claimed_by[model_event]]);
	claimed_by[model_event] = (int)f;
	return 0;
}

/*
 * Which model events the run keeps: those the file counts, first come
 * first served, then, if more than a run holds, the ones the shallowest
 * levels need.
 */
static int map_file_events(const struct td_perf_stat *ps, const struct td_model *m,
			   struct mapping *map, struct td_import *imp)
{
	int *claimed_by = malloc((m->n_events + 1) * sizeof(*claimed_by));
	char unused[512] = "", other[512] = "", dropped[512] = "";
	size_t n_unused = 0, n_other = 0, n_dropped = 0, n_claimed = 0;
	int rc = claimed_by ? 0 : -ENOMEM;

	map->duration_event = -1;
	for (size_t i = 0; claimed_by && i < m->n_events; i++)
		claimed_by[i] = -1;
	for (size_t f = 0; f < ps->n_events && !rc; f++) {
		int found[MAX_MAPPED];
		bool other_pmu;
		size_t n = td_import_map_event(m, ps->events[f], found, MAX_MAPPED, &other_pmu);

		map->n_run_events[f] = 0;
		if (strcmp(ps->events[f], "duration_time") == 0)
			map->duration_event = (int)f;
		if (strcasecmp(ps->events[f], "task-clock") == 0 && strcmp(ps->event_units[f], "msec") == 0) {
			map->run_events[f][0] = TASK_CLOCK;
			map->n_run_events[f] = 1;
		} else if (!n && other_pmu) {
			n_other++;
			list_append(other, sizeof(other), ps->events[f]);
		} else if (!n && map->duration_event != (int)f) {
			n_unused++;
			list_append(unused, sizeof(unused), ps->events[f]);
		}
		for (size_t k = 0; k < n && k < MAX_MAPPED && !rc; k++)
			rc = claim_event(ps, m, f, found[k], claimed_by, imp);
	}
	for (size_t i = 0; i < m->n_events; i++)
		n_claimed += claimed_by && claimed_by[i] >= 0;
	/* Keep by rank, then model order, until the run is full. */
	for (int rank = 1; rank <= 6 && !rc; rank++)
		for (size_t i = 0; i < m->n_events; i++) {
			if (claimed_by[i] < 0 || event_rank(m, (int)i) != rank)
				continue;
			if (map->n == TD_MAX_EVENTS) {
				n_dropped++;
				list_append(dropped, sizeof(dropped), m->events[i].name);
				continue;
			}
			size_t f = (size_t)claimed_by[i];

			map->model_event[map->n] = (int)i;
			if (map->n_run_events[f] < MAX_MAPPED)
				map->run_events[f][map->n_run_events[f]++] = (int)map->n;
			map->n++;
		}
	free(claimed_by);
	if (!rc && n_unused)
		rc = add_note(imp, "%zu event(s) the model %s does not use were left out: %s", n_unused,
			      m->name, unused);
	if (!rc && n_other)
		rc = add_note(imp, "%zu event(s) of another PMU than %s were left out: %s", n_other,
			      m->pmu, other);
	if (!rc && n_dropped)
		rc = add_note(imp, "a run keeps at most %d events; %zu of the %zu counted, needed only "
				   "deeper in the tree or by Info metrics, were left out: %s",
			      TD_MAX_EVENTS, n_dropped, n_claimed, dropped);
	return rc;
}

/* A count assigned to its run event, span and thread. */
struct entry {
	int32_t seq; /* interval, -1 without */
	uint32_t tid;
	int event;   /* run event, or TASK_CLOCK */
	int unit;
	int line;
	double value, runtime_ns, running_fraction;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->unit != y->unit)
		return x->unit < y->unit ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

static int double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Sorted distinct values of n doubles, in place; returns how many. */
static size_t unique_doubles(double *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), double_cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

static size_t unique_u32(uint32_t *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), u32_cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

/* Counts of one (span, thread, event) added up over CPUs or units. */
struct acc {
	double value;
	bool counted, untimed;
	double runtime_ns, enabled_ns;
	double fraction_sum;
	size_t n_counted;
};

static void acc_add(struct acc *a, const struct entry *e)
{
	if (isnan(e->value))
		return;
	a->value += e->value;
	a->counted = true;
	a->n_counted++;
	a->fraction_sum += e->running_fraction;
	if (!isnan(e->runtime_ns) && e->running_fraction > 0) {
		a->runtime_ns += e->runtime_ns;
		a->enabled_ns += e->runtime_ns / e->running_fraction;
	} else {
		a->untimed = true;
	}
}

static struct td_counter_value acc_value(const struct acc *a)
{
	if (!a->counted)
		return (struct td_counter_value){ NAN, 0 };
	return (struct td_counter_value){
		a->value, !a->untimed && a->enabled_ns > 0 ? a->runtime_ns / a->enabled_ns
							   : a->fraction_sum / (double)a->n_counted,
	};
}

/* Everything the sweep over sorted entries needs. */
struct builder {
	const struct td_perf_stat *ps;
	const struct td_import_opts *opts;
	struct td_import *imp;
	struct mapping map;
	struct entry *entries;
	size_t n_entries;
	double *stamps;   /* distinct interval timestamps, ascending */
	size_t n_stamps;
	uint32_t *tids;   /* distinct threads, ascending */
	size_t n_tids;
	char (*comms)[TD_COMM_LEN]; /* per tid */
	struct acc *whole; /* [tid index][run event + task clock] when intervals exist */
	char name[TD_COMM_LEN]; /* the thread name without --per-thread */
	uint32_t pid;
	size_t n_repeats;       /* counts given twice for one span, thread and CPU */
	int first_repeat;
};

static size_t tid_index(const struct builder *b, uint32_t tid)
{
	const uint32_t *hit = bsearch(&tid, b->tids, b->n_tids, sizeof(tid), u32_cmp);

	return (size_t)(hit - b->tids);
}

static int32_t interval_seq(const struct builder *b, double stamp)
{
	const double *hit;

	if (isnan(stamp))
		return -1;
	hit = bsearch(&stamp, b->stamps, b->n_stamps, sizeof(stamp), double_cmp);
	return (int32_t)(hit - b->stamps);
}

static int collect_entries(struct builder *b)
{
	const struct td_perf_stat *ps = b->ps;
	size_t n = 0;

	for (size_t i = 0; i < ps->n_counts; i++)
		n += b->map.n_run_events[ps->counts[i].event];
	b->entries = malloc((n + 1) * sizeof(*b->entries));
	b->stamps = malloc((ps->n_counts + 1) * sizeof(*b->stamps));
	b->tids = malloc((ps->n_counts + 1) * sizeof(*b->tids));
	b->comms = calloc(ps->n_counts + 1, sizeof(*b->comms));
	if (!b->entries || !b->stamps || !b->tids || !b->comms)
		return -ENOMEM;
	for (size_t i = 0; i < ps->n_counts; i++) {
		b->stamps[b->n_stamps] = ps->counts[i].interval_s;
		b->n_stamps += !isnan(ps->counts[i].interval_s);
		b->tids[i] = ps->counts[i].tid;
	}
	b->n_stamps = unique_doubles(b->stamps, b->n_stamps);
	b->n_tids = unique_u32(b->tids, ps->n_counts);
	for (size_t i = ps->n_counts; i-- > 0;) /* the first name seen wins */
		memcpy(b->comms[tid_index(b, ps->counts[i].tid)], ps->counts[i].comm, TD_COMM_LEN);
	for (size_t i = 0; i < ps->n_counts; i++) {
		const struct td_perf_count *c = &ps->counts[i];

		for (size_t k = 0; k < b->map.n_run_events[c->event]; k++)
			b->entries[b->n_entries++] = (struct entry){
				.seq = interval_seq(b, c->interval_s),
				.tid = c->tid,
				.event = b->map.run_events[c->event][k],
				.unit = c->unit,
				.line = c->line,
				.value = c->value,
				.runtime_ns = c->runtime_ns,
				.running_fraction = c->running_fraction,
			};
	}
	qsort(b->entries, b->n_entries, sizeof(*b->entries), entry_cmp);
	return 0;
}

static struct td_thread_row blank_row(const struct builder *b, uint32_t tid)
{
	struct td_thread_row row = { .tid = tid, .pid = b->pid };

	memcpy(row.comm, b->ps->per_thread ? b->comms[tid_index(b, tid)] : b->name, TD_COMM_LEN);
	for (size_t i = 0; i < TD_MAX_EVENTS; i++)
		row.counters[i] = (struct td_counter_value){ NAN, 0 };
	return row;
}

static void set_counter(struct td_thread_row *row, int event, const struct acc *a)
{
	struct td_counter_value v = acc_value(a);

	if (event == TASK_CLOCK)
		row->oncpu_ns = a->counted && v.value > 0 ? (uint64_t)(v.value * 1e6) : 0;
	else
		row->counters[event] = v;
}

static struct acc *whole_acc(struct builder *b, uint32_t tid, int event)
{
	size_t width = b->map.n + 1;

	return &b->whole[tid_index(b, tid) * width + (event == TASK_CLOCK ? b->map.n : (size_t)event)];
}

/* The entries of one (span, thread): their row; entries[*i] is the first. */
static void sweep_thread(struct builder *b, size_t *i, struct td_thread_row *row)
{
	const struct entry *first = &b->entries[*i];
	size_t k = *i;

	*row = blank_row(b, first->tid);
	while (k < b->n_entries && b->entries[k].seq == first->seq && b->entries[k].tid == first->tid) {
		struct acc a = { 0 };
		int event = b->entries[k].event;

		for (; k < b->n_entries && b->entries[k].seq == first->seq &&
		       b->entries[k].tid == first->tid && b->entries[k].event == event;
		     k++) {
			const struct entry *e = &b->entries[k], *prev = k > *i ? e - 1 : NULL;

			if (prev && prev->event == event && prev->unit == e->unit) {
				if (!b->n_repeats++)
					b->first_repeat = e->line;
				continue;
			}
			acc_add(&a, e);
			if (b->whole)
				acc_add(whole_acc(b, e->tid, event), e);
		}
		set_counter(row, event, &a);
	}
	*i = k;
}

/* The rows of every span, in entry order: intervals, or the whole run. */
static int sweep(struct builder *b, struct td_run *run)
{
	int rc = 0;

	if (b->n_stamps) {
		run->intervals = calloc(b->n_stamps, sizeof(*run->intervals));
		b->whole = calloc(b->n_tids * (b->map.n + 1), sizeof(*b->whole));
		if (!run->intervals || !b->whole)
			return -ENOMEM;
		run->nr_intervals = b->n_stamps;
	}
	for (size_t i = 0; i < b->n_stamps; i++)
		run->intervals[i].seq = (uint32_t)i;
	struct td_thread_row *rows = calloc(b->n_tids, sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_entries && !rc;) {
		int32_t seq = b->entries[i].seq;
		size_t n = 0;

		while (i < b->n_entries && b->entries[i].seq == seq)
			sweep_thread(b, &i, &rows[n++]);
		if (seq < 0) {
			run->threads = rows;
			run->nr_threads = n;
		} else {
			run->intervals[seq].threads = rows;
			run->intervals[seq].nr_threads = n;
		}
		rows = calloc(b->n_tids, sizeof(*rows));
		if (!rows)
			rc = -ENOMEM;
	}
	if (b->whole && !rc) { /* whole-run rows from the interval counts */
		free(run->threads);
		run->threads = rows;
		rows = NULL;
		run->nr_threads = b->n_tids;
		for (size_t t = 0; t < b->n_tids; t++) {
			run->threads[t] = blank_row(b, b->tids[t]);
			for (size_t e = 0; e < b->map.n; e++)
				set_counter(&run->threads[t], (int)e, whole_acc(b, b->tids[t], (int)e));
			set_counter(&run->threads[t], TASK_CLOCK, whole_acc(b, b->tids[t], TASK_CLOCK));
		}
	}
	free(rows);
	if (!rc && b->n_repeats)
		rc = add_note(b->imp, "%zu count(s) repeat an earlier one for the same span, thread and "
				      "CPU (first on line %d); the first of each was used",
			      b->n_repeats, b->first_repeat);
	return rc;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Longer than any run can be, and short enough that its ns fit an int64. */
#define MAX_RUN_SECONDS 1e9

/* Wall-clock times of the run and its intervals. */
static int set_times(const struct builder *b, struct td_run *run, char *err, size_t errlen)
{
	double duration_s = b->n_stamps ? b->stamps[b->n_stamps - 1] : 0;

	if (!b->n_stamps && b->map.duration_event >= 0)
		for (size_t i = 0; i < b->ps->n_counts; i++)
			if ((int)b->ps->counts[i].event == b->map.duration_event &&
			    b->ps->counts[i].value > duration_s * 1e9)
				duration_s = b->ps->counts[i].value / 1e9;
	if (!(duration_s <= MAX_RUN_SECONDS)) {
		snprintf(err, errlen, "the file's times say the run lasted %.3g s, which no perf stat run "
			 "can; check the interval timestamps and the duration_time count", duration_s);
		return -EINVAL;
	}
	if (b->ps->started_ns) {
		run->started_ns = b->ps->started_ns;
		run->ended_ns = run->started_ns + (int64_t)(duration_s * 1e9);
	} else {
		run->ended_ns = b->opts->file_time_ns ? b->opts->file_time_ns : now_ns();
		run->started_ns = run->ended_ns - (int64_t)(duration_s * 1e9);
	}
	for (size_t i = 0; i < run->nr_intervals; i++) {
		run->intervals[i].start_ns = run->started_ns + (int64_t)((i ? b->stamps[i - 1] : 0) * 1e9);
		run->intervals[i].end_ns = run->started_ns + (int64_t)(b->stamps[i] * 1e9);
	}
	return 0;
}

/*
 * How many tree nodes the whole-run counts define with this SMT setting,
 * and the deepest level: 1 when any level-1 node is defined, then down as
 * long as each level has more than half of its nodes defined (a node that
 * is a constant without its events, such as a memory kind the host lacks,
 * must not make a level look counted).
 */
static int count_defined(const struct td_model *m, const struct td_run *run, bool smt_on,
			 size_t *defined, int *deepest, char *err, size_t errlen)
{
	struct td_host_facts facts = { .smt_on = smt_on };
	struct td_engine *e = td_engine_new(m, 4, (const char *const *)run->event_names,
					    run->nr_events, &facts, err, errlen);
	struct td_counter_value *sum = e ? calloc(run->nr_events + 1, sizeof(*sum)) : NULL;
	double *values = e ? calloc(td_engine_scratch_size(e), sizeof(*values)) : NULL;
	struct td_metric_value *out = e ? calloc(td_engine_output_count(e) + 1, sizeof(*out)) : NULL;
	size_t nodes[5] = { 0 }, known[5] = { 0 };
	int rc = e && sum && values && out ? 0 : -ENOMEM;

	*defined = 0;
	*deepest = 0;
	if (!rc) {
		td_engine_eval_sum(e, run->threads, run->nr_threads, sum, values, out);
		for (size_t i = 0; i < td_engine_output_count(e); i++) {
			const struct td_metric_def *d = td_engine_output(e, i);

			if (d->kind != TD_METRIC_TREE)
				continue;
			nodes[d->level]++;
			known[d->level] += !isnan(out[i].value);
			*defined += !isnan(out[i].value);
		}
		*deepest = known[1] > 0;
		while (*deepest && *deepest < 4 && 2 * known[*deepest + 1] > nodes[*deepest + 1])
			(*deepest)++;
	}
	td_engine_free(e);
	free(sum);
	free(values);
	free(out);
	return rc;
}

static int no_tree_error(const struct td_model *m, const struct td_run *run, char *err,
			 size_t errlen)
{
	int idx[TD_MAX_EVENTS * 2];
	size_t n = td_model_events_for(m, TD_USED_BY_LEVEL(1), idx, TD_MAX_EVENTS * 2);
	char missing[768] = "";

	for (size_t i = 0; i < n && i < TD_MAX_EVENTS * 2; i++) {
		bool have = false;

		for (size_t k = 0; k < run->nr_events && !have; k++)
			have = strcmp(run->event_names[k], m->events[idx[i]].name) == 0;
		if (!have)
			list_append(missing, sizeof(missing), m->events[idx[i]].name);
	}
	snprintf(err, errlen,
		 "the counts define no Top-Down node of model %s; level 1 needs %s, which the file "
		 "lacks or never counted (record them with perf stat -e or -M TopdownL1)",
		 m->name, missing[0] ? missing : "events");
	return -EINVAL;
}

/* SMT and depth: the user's, or what the counts define best. */
static int choose_setup(struct builder *b, struct td_run *run, char *err, size_t errlen)
{
	const struct td_model *m = b->opts->model;
	size_t off = 0, on = 0;
	int deep_off = 0, deep_on = 0, rc;

	rc = count_defined(m, run, b->opts->smt == 1, &off, &deep_off, err, errlen);
	if (!rc && b->opts->smt < 0)
		rc = count_defined(m, run, true, &on, &deep_on, err, errlen);
	if (rc)
		return rc;
	b->imp->smt_on = b->opts->smt == 1 || (b->opts->smt < 0 && on > off);
	if (b->imp->smt_on && b->opts->smt < 0) {
		deep_off = deep_on;
		rc = add_note(b->imp, "SMT taken as on: the file counts the events the SMT-on "
				      "formulas use (--smt off overrides)");
	}
	if (!rc && !deep_off)
		return no_tree_error(m, run, err, errlen);
	b->imp->depth = b->opts->depth ? b->opts->depth : deep_off;
	return rc;
}

static int set_labels(const struct builder *b, struct td_run *run)
{
	const struct td_import_opts *o = b->opts;
	char level[16];
	int rc;

	snprintf(level, sizeof(level), "%d", b->imp->depth);
	rc = td_labels_set(&run->labels, "cpu_model", o->model->name) ?:
	     td_labels_set(&run->labels, "collector", "import") ?:
	     td_labels_set(&run->labels, "tma_level", level) ?:
	     td_labels_set(&run->labels, "smt", b->imp->smt_on ? "on" : "off");
	if (!rc && o->source)
		rc = td_labels_set(&run->labels, "source", base_name(o->source));
	for (size_t i = 0; o->labels && i < o->labels->count && !rc; i++)
		rc = td_labels_set(&run->labels, o->labels->items[i].key, o->labels->items[i].value);
	return rc;
}

static int fill_run(struct builder *b, struct td_run *run, char *err, size_t errlen)
{
	const struct td_import_opts *o = b->opts;
	int rc;

	run->collector = strdup("import");
	if (o->process)
		run->process = strdup(o->process);
	else if (o->source) /* "skx-l1.csv" -> "skx-l1" */
		run->process = strndup(base_name(o->source), strcspn(base_name(o->source), "."));
	else
		run->process = strdup("import");
	if (!run->collector || !run->process)
		return -ENOMEM;
	snprintf(b->name, sizeof(b->name), "%s", run->process);
	run->nr_events = b->map.n;
	for (size_t i = 0; i < b->map.n; i++)
		if (!(run->event_names[i] = strdup(o->model->events[b->map.model_event[i]].name)))
			return -ENOMEM;
	rc = collect_entries(b);
	if (!rc && b->ps->per_thread && b->n_tids)
		b->pid = b->tids[0]; /* -p PID: the main thread has the lowest tid */
	if (!rc)
		rc = sweep(b, run);
	if (!rc)
		rc = set_times(b, run, err, errlen);
	if (rc)
		return rc;
	rc = choose_setup(b, run, err, errlen);
	run->level = b->imp->depth;
	return rc ? rc : set_labels(b, run);
}

static int compute_tree(struct td_import *imp, struct td_run *run, char *err, size_t errlen)
{
	struct td_host_facts facts = { .smt_on = imp->smt_on };
	struct td_engine *e = td_engine_new(imp->model, imp->depth, (const char *const *)run->event_names,
					    run->nr_events, &facts, err, errlen);
	int rc = e ? td_engine_compute(e, run, err, errlen) : -EINVAL;

	td_engine_free(e);
	return rc;
}

void td_import_free(struct td_import *imp)
{
	if (!imp)
		return;
	td_run_free(imp->run);
	for (size_t i = 0; i < imp->n_notes; i++)
		free(imp->notes[i]);
	free(imp->notes);
	free(imp);
}

int td_import_build(const struct td_perf_stat *ps, const struct td_import_opts *opts,
		    struct td_import **out, char *err, size_t errlen)
{
	struct td_import *imp = calloc(1, sizeof(*imp));
	struct builder b = { .ps = ps, .opts = opts, .imp = imp };
	int rc = 0;

	*out = NULL;
	if (!opts->model || opts->depth < 0 || opts->depth > 4) {
		free(imp);
		snprintf(err, errlen, "a model and a depth of 0 (automatic) to 4 are required");
		return -EINVAL;
	}
	b.map.run_events = calloc(ps->n_events + 1, sizeof(*b.map.run_events));
	b.map.n_run_events = calloc(ps->n_events + 1, sizeof(*b.map.n_run_events));
	if (!imp || !(imp->run = td_run_new()) || !b.map.run_events || !b.map.n_run_events)
		rc = -ENOMEM;
	if (imp)
		imp->model = opts->model;
	if (!rc)
		rc = map_file_events(ps, opts->model, &b.map, imp);
	if (!rc)
		rc = fill_run(&b, imp->run, err, errlen);
	if (!rc)
		rc = compute_tree(imp, imp->run, err, errlen);
	if (!rc && opts->model->notes)
		rc = add_note(imp, "%s", opts->model->notes);
	free(b.map.run_events);
	free(b.map.n_run_events);
	free(b.entries);
	free(b.stamps);
	free(b.tids);
	free(b.comms);
	free(b.whole);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory while importing the counts");
	if (rc) {
		td_import_free(imp);
		return rc;
	}
	*out = imp;
	return 0;
}
