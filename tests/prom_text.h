/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A strict parser of the Prometheus text exposition format (0.0.4), for
 * tests that check /metrics. Every line must be a "# HELP", a "# TYPE" or
 * a sample; each family has one HELP and one TYPE, before its samples,
 * which sit together; names and labels follow the grammar (no "__"
 * label names, no label twice, escapes only \\, \" and \n, UTF-8
 * values); values are floats (NaN, +Inf, -Inf spelled so), with no
 * timestamp; no series appears twice; no empty line or empty family.
 * Stricter than Prometheus where our output has no reason to differ.
 *
 * prom_parse() fills a prom_text or says why not; prom_free() releases it
 * either way.
 */
#ifndef TOPDOWN_TESTS_PROM_TEXT_H
#define TOPDOWN_TESTS_PROM_TEXT_H

#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define PROM_MAX_LABELS 16
#define PROM_MAX_FAMILIES 64

struct prom_sample {
	char name[128];
	size_t nr_labels;
	char label_names[PROM_MAX_LABELS][80];
	char label_values[PROM_MAX_LABELS][600]; /* unescaped */
	double value;
};

struct prom_family {
	char name[128];
	char type[16];
	bool help;
	size_t nr_samples;
};

struct prom_text {
	size_t nr_samples, cap_samples, nr_families;
	struct prom_sample *samples;
	struct prom_family families[PROM_MAX_FAMILIES];
};

static inline void prom_free(struct prom_text *x)
{
	free(x->samples);
	memset(x, 0, sizeof(*x));
}

static inline bool prom_name_start(char c, bool metric)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (metric && c == ':');
}

static inline bool prom_name_char(char c, bool metric)
{
	return prom_name_start(c, metric) || (c >= '0' && c <= '9');
}

/* A metric name (metric) or label name at *p into out. */
static inline bool prom_parse_name(const char **p, char *out, size_t outlen, bool metric)
{
	size_t n = 0;

	if (!prom_name_start(**p, metric))
		return false;
	while (prom_name_char((*p)[n], metric))
		n++;
	if (n >= outlen)
		return false;
	memcpy(out, *p, n);
	out[n] = '\0';
	*p += n;
	return true;
}

/* Checked by the C library's decoder, in the C.UTF-8 locale for the call. */
static inline bool prom_valid_utf8(const char *s)
{
	locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0), old;
	size_t len = strlen(s), n = 0;
	mbstate_t st;

	if (utf8 == (locale_t)0)
		return false;
	old = uselocale(utf8);
	memset(&st, 0, sizeof(st));
	for (; len; s += n, len -= n) {
		n = mbrtowc(NULL, s, len, &st);
		if (n == (size_t)-1 || n == (size_t)-2)
			break;
	}
	uselocale(old);
	freelocale(utf8);
	return len == 0;
}

/* A quoted label value at *p (after the '='), unescaped into out. */
static inline bool prom_parse_label_value(const char **p, char *out, size_t outlen)
{
	const char *s = *p;
	size_t n = 0;

	if (*s++ != '"')
		return false;
	for (; *s != '"'; s++) {
		char c = *s;

		if (c == '\0' || c == '\n' || n + 1 >= outlen)
			return false;
		if (c == '\\') {
			s++;
			if (*s == 'n')
				c = '\n';
			else if (*s == '\\' || *s == '"')
				c = *s;
			else
				return false;
		}
		out[n++] = c;
	}
	out[n] = '\0';
	*p = s + 1;
	return prom_valid_utf8(out);
}

/* The text format's float: NaN, +Inf, -Inf, or a decimal number. */
static inline bool prom_parse_float(const char *s, double *out)
{
	const char *p = s;
	size_t digits = 0;

	if (!strcmp(s, "NaN") || !strcmp(s, "+Inf") || !strcmp(s, "-Inf")) {
		*out = strtod(s, NULL);
		return true;
	}
	if (*p == '+' || *p == '-')
		p++;
	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p)
		return false;
	*out = strtod(s, NULL);
	return true;
}

static inline struct prom_family *prom_find_family(struct prom_text *x, const char *name)
{
	for (size_t i = 0; i < x->nr_families; i++)
		if (!strcmp(x->families[i].name, name))
			return &x->families[i];
	return NULL;
}

static inline bool prom_same_series(const struct prom_sample *a, const struct prom_sample *b)
{
	if (strcmp(a->name, b->name) || a->nr_labels != b->nr_labels)
		return false;
	for (size_t i = 0; i < a->nr_labels; i++) {
		bool found = false;

		for (size_t k = 0; k < b->nr_labels && !found; k++)
			found = !strcmp(a->label_names[i], b->label_names[k]) &&
				!strcmp(a->label_values[i], b->label_values[k]);
		if (!found)
			return false;
	}
	return true;
}

/* "# HELP name text" or "# TYPE name type": the only comments we write. */
static inline const char *prom_parse_comment(struct prom_text *x, const char *line)
{
	bool help = !strncmp(line, "# HELP ", 7), type = !strncmp(line, "# TYPE ", 7);
	const char *p = line + 7;
	char name[128];
	struct prom_family *f;

	if (!help && !type)
		return "a comment other than HELP or TYPE";
	if (!prom_parse_name(&p, name, sizeof(name), true) || *p++ != ' ')
		return "a bad metric name after HELP or TYPE";
	f = prom_find_family(x, name);
	if (f && f != &x->families[x->nr_families - 1])
		return "HELP or TYPE of a family whose block has ended";
	if (f && f->nr_samples)
		return "HELP or TYPE after the family's samples";
	if (!f) {
		if (x->nr_families == PROM_MAX_FAMILIES)
			return "too many families for the parser";
		f = &x->families[x->nr_families++];
		snprintf(f->name, sizeof(f->name), "%s", name);
	}
	if (help) {
		if (f->help)
			return "a second HELP for one family";
		f->help = true;
		for (; *p; p++)
			if (*p == '\\' && p[1] != '\\' && p[1] != 'n')
				return "a bad escape in HELP";
			else if (*p == '\\')
				p++;
		return NULL;
	}
	if (f->type[0])
		return "a second TYPE for one family";
	if (strcmp(p, "counter") && strcmp(p, "gauge") && strcmp(p, "untyped") &&
	    strcmp(p, "histogram") && strcmp(p, "summary"))
		return "an unknown TYPE";
	snprintf(f->type, sizeof(f->type), "%s", p);
	return NULL;
}

static inline const char *prom_parse_sample(struct prom_text *x, const char *line)
{
	struct prom_sample *s;
	struct prom_family *f;
	const char *p = line;

	if (x->nr_samples == x->cap_samples) {
		size_t cap = x->cap_samples ? 2 * x->cap_samples : 64;
		struct prom_sample *grown = reallocarray(x->samples, cap, sizeof(*grown));

		if (!grown)
			return "out of memory in the parser";
		x->samples = grown;
		x->cap_samples = cap;
	}
	s = &x->samples[x->nr_samples];
	memset(s, 0, sizeof(*s));
	if (!prom_parse_name(&p, s->name, sizeof(s->name), true))
		return "a bad metric name";
	if (*p == '{') {
		p++;
		while (*p != '}') {
			size_t i = s->nr_labels;

			if (i == PROM_MAX_LABELS)
				return "too many labels for the parser";
			if (!prom_parse_name(&p, s->label_names[i], sizeof(s->label_names[i]), false))
				return "a bad label name";
			if (!strncmp(s->label_names[i], "__", 2))
				return "a label name starting with __ (reserved)";
			for (size_t k = 0; k < i; k++)
				if (!strcmp(s->label_names[k], s->label_names[i]))
					return "a label twice in one sample";
			if (*p++ != '=')
				return "no '=' after a label name";
			if (!prom_parse_label_value(&p, s->label_values[i], sizeof(s->label_values[i])))
				return "a bad label value (quoting, escape or UTF-8)";
			s->nr_labels++;
			if (*p == ',' && p[1] != '}')
				p++;
			else if (*p != '}')
				return "no ',' or '}' after a label";
		}
		p++;
	}
	if (*p++ != ' ')
		return "no single space before the value";
	if (!prom_parse_float(p, &s->value))
		return "a bad value (or a timestamp)";
	f = prom_find_family(x, s->name);
	if (!f || !f->type[0] || !f->help)
		return "a sample before its family's HELP and TYPE";
	if (f != &x->families[x->nr_families - 1])
		return "a sample outside its family's block";
	for (size_t i = 0; i < x->nr_samples; i++)
		if (prom_same_series(&x->samples[i], s))
			return "two samples of one series";
	f->nr_samples++;
	x->nr_samples++;
	return NULL;
}

/* 0, or -1 with why naming the line and the problem. */
static inline int prom_parse(const char *text, struct prom_text *x, char *why, size_t whylen)
{
	size_t lineno = 0, len = strlen(text);
	const char *line = text;

	memset(x, 0, sizeof(*x));
	if (len && text[len - 1] != '\n') {
		snprintf(why, whylen, "the text does not end with a newline");
		return -1;
	}
	while (*line) {
		const char *eol = strchr(line, '\n'), *problem;
		char buf[4096];

		lineno++;
		if ((size_t)(eol - line) >= sizeof(buf)) {
			snprintf(why, whylen, "line %zu: too long for the parser", lineno);
			return -1;
		}
		memcpy(buf, line, (size_t)(eol - line));
		buf[eol - line] = '\0';
		if (!buf[0])
			problem = "an empty line";
		else
			problem = buf[0] == '#' ? prom_parse_comment(x, buf) : prom_parse_sample(x, buf);
		if (problem) {
			snprintf(why, whylen, "line %zu: %s: %s", lineno, problem, buf);
			return -1;
		}
		line = eol + 1;
	}
	for (size_t i = 0; i < x->nr_families; i++)
		if (!x->families[i].nr_samples) {
			snprintf(why, whylen, "family %s has no samples", x->families[i].name);
			return -1;
		}
	return 0;
}

static inline const char *prom_label(const struct prom_sample *s, const char *name)
{
	for (size_t i = 0; i < s->nr_labels; i++)
		if (!strcmp(s->label_names[i], name))
			return s->label_values[i];
	return NULL;
}

#endif
