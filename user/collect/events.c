// SPDX-License-Identifier: BSD-3-Clause
/*
 * Event name resolution. perf's own names and raw codes come from a table
 * and need nothing from the host; pmu/.../ events are read from sysfs the
 * way perf reads them; the rest is libpfm4's business.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfmon/pfmlib_perf_event.h>

#include "fileio.h"
#include "events.h"

#define PMU_SYNTAX "write a PMU event as pmu/term=value,.../, e.g. cpu/event=0x3c,umask=0x0/"
#define TERMS_MAX 512 /* bytes of one pmu/.../ term list or events/ alias */

struct perf_name {
	const char *name;
	uint32_t type;
	uint64_t config;
};

/* perf's names for the kernel's generic events, aliases included. */
static const struct perf_name perf_names[] = {
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
};

static bool resolve_perf_name(const char *name, struct td_event *out)
{
	for (size_t i = 0; i < sizeof(perf_names) / sizeof(perf_names[0]); i++) {
		if (strcmp(name, perf_names[i].name) == 0) {
			out->type = perf_names[i].type;
			out->config = perf_names[i].config;
			return true;
		}
	}
	return false;
}

/* "r1a8": 'r' and 1 to 16 hex digits, as perf writes raw codes. */
static bool resolve_raw(const char *name, struct td_event *out)
{
	size_t digits = strlen(name + 1);

	if (name[0] != 'r' || digits < 1 || digits > 16 ||
	    strspn(name + 1, "0123456789abcdefABCDEF") != digits)
		return false;
	out->type = PERF_TYPE_RAW;
	out->config = strtoull(name + 1, NULL, 16);
	return true;
}

/*
 * The pmu/.../ form. A PMU directory holds "type", format/<term> files
 * such as "config:0-7,21" saying where a term's bits go, and events/<name>
 * aliases holding a term list such as "event=0x00,umask=0x4".
 */
struct pmu_event {
	const char *event;  /* the whole name, for messages */
	const char *pmu;    /* the PMU's name, for messages */
	char dir[PATH_MAX]; /* sysfs_root/bus/event_source/devices/<pmu> */
	struct td_event *out;
	char *err;
	size_t errlen;
};

/* PMU and term names become path components: no '/', no leading '.'. */
static bool is_path_safe_name(const char *s, size_t len)
{
	if (len == 0 || s[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isascii((unsigned char)s[i]) ||
		    !(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

/* Reads dir/<sub>/<name>; -ENAMETOOLONG when the path does not fit. */
static int read_pmu_file(const struct pmu_event *pe, const char *sub, const char *name,
			 char *buf, size_t len)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s%s%s", pe->dir, sub, *sub ? "/" : "", name) >= sizeof(path))
		return -ENAMETOOLONG;
	return td_read_first_line(path, buf, len);
}

/* "0x3c" or "60", the whole string, into 64 bits. */
static bool parse_term_value(const char *text, uint64_t *value)
{
	bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
	const char *digits = hex ? text + 2 : text;
	char *end;

	if (!(hex ? isxdigit((unsigned char)digits[0]) : isdigit((unsigned char)digits[0])))
		return false;
	errno = 0;
	*value = strtoull(digits, &end, hex ? 16 : 10);
	return *end == '\0' && errno != ERANGE;
}

static uint64_t *config_word(struct td_event *ev, const char *field)
{
	if (strcmp(field, "config") == 0)
		return &ev->config;
	if (strcmp(field, "config1") == 0)
		return &ev->config1;
	if (strcmp(field, "config2") == 0)
		return &ev->config2;
	return NULL;
}

/* A bit number 0..63 at *p, digits only; advances *p. */
static bool read_bit(const char **p, unsigned *bit)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return false;
	unsigned long v = strtoul(*p, &end, 10);

	*p = end;
	*bit = (unsigned)v;
	return v <= 63;
}

/*
 * Puts value into the bits a format line names, low bits into the first
 * range: "config:0-7,32-35" takes 12 bits. Bits already set by an earlier
 * term of the same name are replaced.
 */
static int deposit(struct pmu_event *pe, const char *term, const char *format, uint64_t value)
{
	const char *colon = strchr(format, ':');
	const char *p;
	char field[16];
	uint64_t *word, rest = value;
	unsigned width = 0;

	if (!colon || (size_t)(colon - format) >= sizeof(field))
		goto bad_format;
	memcpy(field, format, (size_t)(colon - format));
	field[colon - format] = '\0';
	word = config_word(pe->out, field);
	if (!word)
		goto bad_format;
	for (p = colon + 1;; p++) {
		unsigned lo, hi;

		if (!read_bit(&p, &lo))
			goto bad_format;
		hi = lo;
		if (*p == '-' && (++p, !read_bit(&p, &hi)))
			goto bad_format;
		if (hi < lo || (*p != ',' && *p != '\0'))
			goto bad_format;

		unsigned bits = hi - lo + 1;
		uint64_t mask = bits == 64 ? UINT64_MAX : ((1ULL << bits) - 1);

		*word = (*word & ~(mask << lo)) | ((rest & mask) << lo);
		rest = bits == 64 ? 0 : rest >> bits;
		width += bits;
		if (*p == '\0')
			break;
	}
	if (rest) {
		snprintf(pe->err, pe->errlen, "bad event '%s': value 0x%llx of term '%s' does not fit its %u bits; use a smaller value",
			 pe->event, (unsigned long long)value, term, width);
		return -EINVAL;
	}
	return 0;

bad_format:
	snprintf(pe->err, pe->errlen, "cannot use event '%s': %s/format/%s reads '%s'; only config, config1 and config2 bit ranges such as config:0-7,21 are understood",
		 pe->event, pe->dir, term, format);
	return -EINVAL;
}

static int apply_terms(struct pmu_event *pe, char *terms, bool allow_alias);

/* A bare name that is not a format term: an events/<name> alias. */
static int apply_alias(struct pmu_event *pe, const char *name)
{
	char terms[TERMS_MAX];

	if (read_pmu_file(pe, "events", name, terms, sizeof(terms)) < 0) {
		snprintf(pe->err, pe->errlen, "bad event '%s': PMU '%s' has no term or event '%s'; %s/format and %s/events list what it accepts",
			 pe->event, pe->pmu, name, pe->dir, pe->dir);
		return -EINVAL;
	}
	return apply_terms(pe, terms, false);
}

/* One "term=value" or bare "term" (value 1, or an alias when allowed). */
static int apply_term(struct pmu_event *pe, char *term, bool allow_alias)
{
	char *eq = strchr(term, '=');
	uint64_t value = 1;
	char format[128];
	uint64_t *word;

	if (eq) {
		*eq = '\0';
		if (!parse_term_value(eq + 1, &value)) {
			snprintf(pe->err, pe->errlen, "bad event '%s': term '%s' has value '%s'; use a decimal or 0x-prefixed hex number",
				 pe->event, term, eq + 1);
			return -EINVAL;
		}
	}
	if (!is_path_safe_name(term, strlen(term))) {
		snprintf(pe->err, pe->errlen, "bad event '%s': '%s' is not a term name; %s", pe->event, term, PMU_SYNTAX);
		return -EINVAL;
	}
	if ((word = config_word(pe->out, term))) {
		*word = value;
		return 0;
	}
	if (read_pmu_file(pe, "format", term, format, sizeof(format)) == 0)
		return deposit(pe, term, format, value);
	if (!eq && allow_alias)
		return apply_alias(pe, term);
	snprintf(pe->err, pe->errlen, "bad event '%s': PMU '%s' has no term '%s'; %s/format lists the terms it accepts",
		 pe->event, pe->pmu, term, pe->dir);
	return -EINVAL;
}

/* A comma-separated term list, from the event name or an alias file; split in place. */
static int apply_terms(struct pmu_event *pe, char *terms, bool allow_alias)
{
	char *term, *next;

	for (term = terms; term; term = next) {
		next = strchr(term, ',');
		if (next)
			*next++ = '\0';
		if (*term == '\0') {
			snprintf(pe->err, pe->errlen, "bad event '%s': it has an empty term; %s", pe->event, PMU_SYNTAX);
			return -EINVAL;
		}
		int rc = apply_term(pe, term, allow_alias);

		if (rc < 0)
			return rc;
	}
	return 0;
}

static int resolve_pmu_event(const char *sysfs_root, const char *name, struct td_event *out,
			     char *err, size_t errlen)
{
	const char *slash = strchr(name, '/');
	size_t pmu_len = (size_t)(slash - name), name_len = strlen(name);
	char pmu[TD_EVENT_NAME_MAX], type[32];
	struct pmu_event pe = { .event = name, .pmu = pmu, .out = out, .err = err, .errlen = errlen };
	uint64_t type_value;

	if (!is_path_safe_name(name, pmu_len) || name_len < pmu_len + 3 || name[name_len - 1] != '/' ||
	    strchr(slash + 1, '/') != name + name_len - 1) {
		snprintf(err, errlen, "bad event '%s': %s", name, PMU_SYNTAX);
		return -EINVAL;
	}
	memcpy(pmu, name, pmu_len);
	pmu[pmu_len] = '\0';
	if ((size_t)snprintf(pe.dir, sizeof(pe.dir), "%s/bus/event_source/devices/%s", sysfs_root, pmu) >= sizeof(pe.dir)) {
		snprintf(err, errlen, "cannot resolve event '%s': the sysfs path is too long; use a shorter sysfs root", name);
		return -ENAMETOOLONG;
	}
	if (read_pmu_file(&pe, "", "type", type, sizeof(type)) < 0 ||
	    !parse_term_value(type, &type_value) || type_value > UINT32_MAX) {
		snprintf(err, errlen, "unknown PMU '%s' in event '%s': %s/bus/event_source/devices lists this host's PMUs",
			 pmu, name, sysfs_root);
		return -ENOENT;
	}
	out->type = (uint32_t)type_value;

	char terms[TD_EVENT_NAME_MAX];

	memcpy(terms, slash + 1, name_len - pmu_len - 2);
	terms[name_len - pmu_len - 2] = '\0';
	return apply_terms(&pe, terms, true);
}

/* libpfm4 is initialised once per process, on first use. */
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_init_status;

static void pfm_init(void)
{
	pfm_init_status = pfm_initialize();
}

static int resolve_pfm(const char *name, struct td_event *out, char *err, size_t errlen)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	int rc;

	pthread_once(&pfm_once, pfm_init);
	if (pfm_init_status != PFM_SUCCESS) {
		snprintf(err, errlen, "cannot resolve event '%s': libpfm4 failed to start (%s); use a software event such as task-clock or a raw rNNNN code",
			 name, pfm_strerror(pfm_init_status));
		return -ENOTSUP;
	}
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	/* Counting at user and kernel level; exclusions are set by whoever opens the event. */
	rc = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (rc == PFM_ERR_NOTFOUND) {
		snprintf(err, errlen, "unknown event '%s': not a perf name, raw code (r1a8), pmu/term=value/ event or libpfm4 event for this CPU "
			 "(software events such as task-clock work on any host; `perf list` shows this host's events)", name);
		return -ENOENT;
	}
	if (rc != PFM_SUCCESS) {
		snprintf(err, errlen, "bad event '%s': libpfm4 says \"%s\"; check its unit masks and modifiers against `perf list`",
			 name, pfm_strerror(rc));
		return -EINVAL;
	}
	out->type = attr.type;
	out->config = attr.config;
	out->config1 = attr.config1;
	out->config2 = attr.config2;
	return 0;
}

/* Names must fit struct td_event; len excludes the NUL. */
static int check_name_length(const char *name, size_t len, char *err, size_t errlen)
{
	if (len == 0) {
		snprintf(err, errlen, "empty event name: name an event such as task-clock, cycles or r1a8");
		return -EINVAL;
	}
	if (len >= TD_EVENT_NAME_MAX) {
		snprintf(err, errlen, "event name '%.32s...' is too long: use at most %d bytes, e.g. a raw rNNNN code",
			 name, TD_EVENT_NAME_MAX - 1);
		return -ENAMETOOLONG;
	}
	return 0;
}

#define USER_ONLY_SUFFIX ":u"

/* The encoding of name, which has no ":u" suffix. */
static int resolve_base(const char *sysfs_root, const char *name, struct td_event *out, char *err, size_t errlen)
{
	if (resolve_perf_name(name, out) || resolve_raw(name, out))
		return 0;
	if (strchr(name, '/'))
		return resolve_pmu_event(sysfs_root, name, out, err, errlen);
	return resolve_pfm(name, out, err, errlen);
}

int td_event_resolve_at(const char *sysfs_root, const char *name, struct td_event *out,
			char *err, size_t errlen)
{
	size_t len = name ? strlen(name) : 0, suffix = strlen(USER_ONLY_SUFFIX);
	char base[TD_EVENT_NAME_MAX];
	int rc = check_name_length(name, len, err, errlen);

	if (rc < 0)
		return rc;
	memset(out, 0, sizeof(*out));
	memcpy(out->name, name, len + 1);
	memcpy(base, name, len + 1);
	/* The modifier is ours, not libpfm4's: its own ":u" would be dropped with the rest of its attr. */
	if (len > suffix && strcmp(name + len - suffix, USER_ONLY_SUFFIX) == 0) {
		base[len - suffix] = '\0';
		out->user_only = true;
	}
	return resolve_base(sysfs_root, base, out, err, errlen);
}

int td_event_resolve(const char *name, struct td_event *out, char *err, size_t errlen)
{
	return td_event_resolve_at("/sys", name, out, err, errlen);
}

static bool same_encoding(const struct td_event *a, const struct td_event *b)
{
	return a->type == b->type && a->config == b->config &&
	       a->config1 == b->config1 && a->config2 == b->config2 && a->user_only == b->user_only;
}

/* Rejects ev when an earlier event has its name or its encoding. */
static int check_duplicate(const char *list, const struct td_event *events, size_t n,
			   const struct td_event *ev, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(events[i].name, ev->name) == 0) {
			snprintf(err, errlen, "event '%s' appears twice in '%s'; list each event once", ev->name, list);
			return -EINVAL;
		}
		if (same_encoding(&events[i], ev)) {
			snprintf(err, errlen, "events '%s' and '%s' in '%s' are the same event; list it once",
				 events[i].name, ev->name, list);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * The end of the item starting at p: the next comma that is not between
 * the two slashes of a pmu/.../ event, or the end of the string.
 */
static const char *item_end(const char *p)
{
	bool in_pmu = false;

	for (; *p && (in_pmu || *p != ','); p++)
		if (*p == '/')
			in_pmu = !in_pmu;
	return p;
}

int td_event_list_parse_at(const char *sysfs_root, const char *list, struct td_event *out,
			   size_t max, size_t *count, char *err, size_t errlen)
{
	const char *p = list ? list : "";
	size_t n = 0;

	*count = 0;
	for (;;) {
		const char *end = item_end(p);
		char name[TD_EVENT_NAME_MAX];
		struct td_event ev;
		int rc;

		while (p < end && isspace((unsigned char)*p))
			p++;
		size_t len = (size_t)(end - p);

		while (len && isspace((unsigned char)p[len - 1]))
			len--;
		if (len == 0) {
			snprintf(err, errlen, "empty event in list '%s': separate event names with single commas, e.g. cycles,instructions",
				 list ? list : "");
			return -EINVAL;
		}
		rc = check_name_length(p, len, err, errlen);
		if (rc < 0)
			return rc;
		if (n == max) {
			snprintf(err, errlen, "too many events in '%s': at most %zu are counted at once; drop some or collect twice",
				 list, max);
			return -E2BIG;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		rc = td_event_resolve_at(sysfs_root, name, &ev, err, errlen);
		if (rc < 0)
			return rc;
		rc = check_duplicate(list, out, n, &ev, err, errlen);
		if (rc < 0)
			return rc;
		out[n++] = ev;
		if (*end == '\0')
			break;
		p = end + 1;
	}
	*count = n;
	return 0;
}

int td_event_list_parse(const char *list, struct td_event *out, size_t max,
			size_t *count, char *err, size_t errlen)
{
	return td_event_list_parse_at("/sys", list, out, max, count, err, errlen);
}
