// SPDX-License-Identifier: BSD-3-Clause
/*
 * Which of a model's events a perf event name stands for
 * (import.h: td_import_map_event): by the model's own names, perf's
 * generic hardware names, or a raw encoding (rNNNN, pmu/event=...,umask=.../).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import.h"
#include "parse.h"

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
	if (strncasecmp(pmu, m->pmu, n) == 0 && pmu[n] == '_' && td_all_digits(pmu + n + 1))
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
	body = td_trim_blanks(buf);
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
