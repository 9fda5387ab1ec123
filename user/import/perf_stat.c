// SPDX-License-Identifier: BSD-3-Clause
/*
 * Reading perf stat output (CSV from -x, or JSON lines from -j) into
 * counts (import.h: td_perf_stat_parse).
 *
 * The parser keeps the file's own vocabulary (event names as written, CPU
 * ids, thread names); it knows no model. Every line is checked against
 * the layout of the first count line, so a file that mixes layouts, or a
 * line cut short, is refused with its line number rather than read into
 * the wrong columns.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "import.h"
#include "parse.h"
#include "utf8.h"

#define MAX_FIELDS 64

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

	if (!dash || dash == s || !td_all_digits(dash + 1) || strlen(dash + 1) > 10)
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
		return td_all_digits(s);
	}
	if ((*s != 'S' && *s != 'N') || !isdigit((unsigned char)s[1]))
		return false;
	for (s++; *s; s++)
		if (!isdigit((unsigned char)*s) && !isupper((unsigned char)*s) && *s != '-')
			return false;
	return s[-1] != '-';
}

/* What every refusal of a count ends with. */
#define COUNT_RANGE "perf stat counts are whole numbers from 0 to 2^64-1"

/*
 * Why a count field that reads as a number cannot be one perf stat wrote,
 * or NULL when it can.  perf writes counts in plain decimal, whole for
 * hardware events and with a fraction for msec ones (task-clock); a
 * hardware counter holds 64 bits.  Anything else (a sign, hex, inf, an
 * exponent, more than 64 bits) would turn into a tree that looks real and
 * is not, so it is refused rather than read.
 */
static const char *count_problem(const char *s)
{
	const char *int_part = s, *dot;
	size_t int_digits;

	if (*s == '-')
		return "is negative";
	if (strpbrk(s, "xX"))
		return "is hexadecimal";
	if (strpbrk(s, "nNiI")) /* strtod read it all: nan, inf or infinity */
		return "is not a finite number";
	if (strspn(s, "0123456789.") != strlen(s) || strchr(s, '.') != strrchr(s, '.')) {
		double v = strtod(s, NULL);

		return isinf(v) || v >= 0x1p64 ? "is above 2^64-1" : "is not a plain decimal number";
	}
	while (*int_part == '0' && int_part[1] && int_part[1] != '.')
		int_part++;
	dot = strchr(int_part, '.');
	int_digits = dot ? (size_t)(dot - int_part) : strlen(int_part);
	if (int_digits > 20 || (int_digits == 20 && strncmp(int_part, "18446744073709551615", 20) > 0))
		return "is above 2^64-1";
	return NULL;
}

/*
 * The count field: a number, or perf's words for no count.  false with
 * why: a number perf cannot have written (count_problem), or not a
 * number at all (why left empty).
 */
static bool parse_count(const char *s, const char *event, double *value, char *why,
			size_t whylen)
{
	const char *problem;
	char *end;

	why[0] = '\0';
	if (strcmp(s, "<not counted>") == 0 || strcmp(s, "<not supported>") == 0) {
		*value = NAN;
		return true;
	}
	if (!*s || isspace((unsigned char)*s))
		return false;
	(void)strtod(s, &end);
	if (*end)
		return false; /* not even a number */
	problem = count_problem(s);
	if (problem) {
		snprintf(why, whylen, "count '%s' for %s %s; " COUNT_RANGE, s, event, problem);
		return false;
	}
	*value = strtod(s, NULL);
	return true;
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
	if (l.time && !parse_timestamp(td_trim_blanks(f[i++]), &r->interval_s)) {
		snprintf(why, whylen, "expected an interval timestamp in field 1, got '%s'", f[0]);
		return LINE_BAD;
	}
	switch (l.prefix) {
	case PREFIX_NONE:
		break;
	case PREFIX_CPU:
	case PREFIX_UNIT: {
		char *id = td_trim_blanks(f[i]);

		if (!is_unit_id(id, l.prefix == PREFIX_CPU) ||
		    (l.prefix == PREFIX_UNIT && !td_all_digits(td_trim_blanks(f[i + 1])))) {
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
		if (!parse_thread(td_trim_blanks(f[i]), &r->tid, r->comm)) {
			snprintf(why, whylen, "expected a thread (name-tid) in field %zu, got '%s'", i + 1,
				 f[i]);
			return LINE_BAD;
		}
		i++;
		break;
	}
	char *count = td_trim_blanks(f[i]), *unit = td_trim_blanks(f[i + 1]), *event = td_trim_blanks(f[i + 2]);
	size_t count_field = i + 1;

	i += 3;
	if (!*count && !*event)
		return LINE_SKIP;
	while (pmu_open(event) && i < n) { /* undo the split inside cpu/.../ */
		event[strlen(event)] = ',';
		i++;
	}
	event = td_trim_blanks(event);
	double ignored;
	bool count_ok = parse_count(count, event, &r->value, why, whylen);

	if (!count_ok && !why[0]) {
		snprintf(why, whylen,
			 "expected a count, '<not counted>' or '<not supported>' in field %zu, got '%s'",
			 count_field, count);
		return LINE_BAD;
	}
	if (!*event || parse_number(event, &ignored) || parse_number(unit, &ignored)) {
		snprintf(why, whylen, "expected a unit and an event name after the count in field %zu",
			 count_field);
		return LINE_BAD;
	}
	if (!count_ok)
		return LINE_BAD; /* a number perf cannot have written: why says so */
	r->event = event;
	r->event_unit = unit;
	/* Then: [noise "1.23%"] run time, percentage, [metric value, metric unit]. */
	while (i < n && *td_trim_blanks(f[i]) && f[i][strlen(f[i]) - 1] == '%')
		i++;
	r->runtime_ns = NAN;
	r->running_fraction = 1;
	if (i < n && *td_trim_blanks(f[i]) && !td_all_digits(f[i])) {
		snprintf(why, whylen,
			 "field %zu ('%s') is not a run time; per-cgroup output (perf stat -G) is not "
			 "supported, run perf stat without -G",
			 i + 1, f[i]);
		return LINE_BAD;
	}
	if (i < n && *f[i])
		r->runtime_ns = strtod(f[i], NULL);
	if (++i < n && *td_trim_blanks(f[i])) {
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

/*
 * "counter-value": perf writes a string ("123.000000", "<not counted>");
 * a JSON number is read too, and checked as the same text would be.
 */
static bool read_json_value(json_t *obj, const char *event, double *value, char *why,
			    size_t whylen)
{
	json_t *v = json_object_get(obj, "counter-value");
	char text[64];

	why[0] = '\0';
	if (json_is_string(v))
		return parse_count(json_string_value(v), event, value, why, whylen);
	if (json_is_integer(v))
		snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(text, sizeof(text), "%.17g", json_real_value(v));
	else
		return false;
	return parse_count(text, event, value, why, whylen);
}

/* The CPU or unit a JSON count belongs to, or "" (aggregated). */
static bool json_unit(json_t *obj, char *out, size_t len)
{
	static const char *const keys[] = { "core", "socket", "die", "node", "cache", "cluster" };
	json_t *cpu = json_object_get(obj, "cpu");

	out[0] = '\0';
	if (json_is_string(cpu) && td_all_digits(json_string_value(cpu)))
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
	const char *event = json_text(obj, "event");
	const char *thread = json_text(obj, "thread");
	char why[256];
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
	if (!read_json_value(obj, event, &r->value, why, sizeof(why))) {
		line_error(p->err, p->errlen, p->line, "%s",
			   why[0] ? why
				  : "\"counter-value\" must be a count, \"<not counted>\" or \"<not supported>\"");
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

/* "# started on Fri Nov 21 10:30:00 2025": perf -o writes it first.
 * -EINVAL for a date whose nanoseconds an int64 cannot hold (past 2262). */
static int read_comment(struct parser *p, const char *line)
{
	const char *s = strstr(line, "started on ");
	struct tm tm = { .tm_isdst = -1 };

	if (p->ps->started_ns || !s || !strptime(s + 11, "%a %b %d %H:%M:%S %Y", &tm))
		return 0;
	time_t t = mktime(&tm);

	if (t > INT64_MAX / 1000000000)
		return line_error(p->err, p->errlen, p->line,
				  "the start time is past the year 2262, which no perf stat run has; "
				  "correct or remove the '# started on' line");
	if (t > 0)
		p->ps->started_ns = (int64_t)t * 1000000000;
	return 0;
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
	if (*s == '#')
		return read_comment(p, s);
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
