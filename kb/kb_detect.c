// SPDX-License-Identifier: BSD-3-Clause
/*
 * kb_detect: which model describes this CPU, and the values of the '#'
 * constants on this host.
 *
 * The "detect" lines of the definitions match CPUID family/model/stepping
 * (x86) or MIDR implementer/part/variant/revision (Arm).  When several
 * rules match, the one testing the most keys wins: Neoverse N2 r0p0-r0p2
 * (part + variant + revision) before N2 in general (part).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpuinfo.h"
#include "kb_internal.h"

static bool key_matches(const struct kb_match *m, unsigned value)
{
	if (!m->n)
		return true;
	for (unsigned i = 0; i < m->n; i++)
		if (value >= m->lo[i] && value <= m->hi[i])
			return true;
	return false;
}

/* Number of keys the rule tests when all match, else -1. */
static int rule_score(const struct kb_detect_rule *r, const struct td_cpuinfo *cpu)
{
	const unsigned value[KB_KEY_COUNT] = {
		[KB_KEY_FAMILY] = cpu->family,           [KB_KEY_MODEL] = cpu->model,
		[KB_KEY_STEPPING] = cpu->stepping,       [KB_KEY_IMPLEMENTER] = cpu->implementer,
		[KB_KEY_PART] = cpu->part,               [KB_KEY_VARIANT] = cpu->variant,
		[KB_KEY_REVISION] = cpu->revision,
	};
	int score = 0;
	for (int k = 0; k < KB_KEY_COUNT; k++) {
		if (!key_matches(&r->key[k], value[k]))
			return -1;
		score += r->key[k].n > 0;
	}
	return score;
}

int td_kb_cpu_vendor(const struct td_cpuinfo *cpu)
{
	if (strcmp(cpu->vendor, "GenuineIntel") == 0)
		return TD_VENDOR_INTEL;
	if (strcmp(cpu->vendor, "AuthenticAMD") == 0)
		return TD_VENDOR_AMD;
	return cpu->implementer ? TD_VENDOR_ARM : -1;
}

/* Zen 3 (family 0x19, models 0x00-0x0f, 0x20-0x2f and 0x40-0x5f) counts no
 * dispatch slots, so it has no Top-Down definitions; say so rather than
 * "unknown".  The rest of family 0x19 is Zen 4. */
static bool is_zen3(const struct td_cpuinfo *cpu)
{
	unsigned m = cpu->model;
	return cpu->family == 0x19 && (m <= 0x0f || (m >= 0x20 && m <= 0x2f) || (m >= 0x40 && m <= 0x5f));
}

static void describe_cpu(const struct td_cpuinfo *cpu, int vendor, char *buf, size_t len)
{
	if (vendor == TD_VENDOR_ARM)
		snprintf(buf, len, "MIDR implementer 0x%x part 0x%x r%up%u", cpu->implementer,
			 cpu->part, cpu->variant, cpu->revision);
	else
		snprintf(buf, len, "%s family 0x%x model 0x%x stepping %u", cpu->vendor,
			 cpu->family, cpu->model, cpu->stepping);
}

static void list_models(const struct td_kb *kb, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < kb->n_models && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 kb->models[i].pub.name);
		used += n > 0 ? (size_t)n : 0;
	}
}

int td_kb_detect_model(const struct td_kb *kb, const struct td_cpuinfo *cpu,
		       const struct td_model **out, char *err, size_t errlen)
{
	int vendor = td_kb_cpu_vendor(cpu), best = -1;
	char what[128], names[512];
	*out = NULL;
	describe_cpu(cpu, vendor, what, sizeof(what));
	if (vendor == TD_VENDOR_AMD && is_zen3(cpu)) {
		snprintf(err, errlen,
			 "%s is AMD Zen 3, which has no dispatch-slot events for Top-Down analysis; "
			 "use a Zen 4 or later host",
			 what);
		return -ENOTSUP;
	}
	for (size_t i = 0; vendor >= 0 && i < kb->n_models; i++) {
		const struct kb_model *km = &kb->models[i];
		for (size_t r = 0; km->pub.vendor == (enum td_vendor)vendor && r < km->n_rules; r++) {
			int score = rule_score(&km->rules[r], cpu);
			if (score > best) {
				best = score;
				*out = &km->pub;
			}
		}
	}
	if (*out)
		return 0;
	list_models(kb, names, sizeof(names));
	snprintf(err, errlen, "no Top-Down definitions for %s (%s); pass --cpu-model with one of: %s",
		 what, cpu->model_name[0] ? cpu->model_name : "unnamed CPU", names);
	return -ENOTSUP;
}

/*
 * #core_wide says whether counts cover both SMT threads of a core.  topdown
 * charges counts to the thread that ran, so they are core-wide only when
 * SMT is off (as perf decides for per-thread counting).
 */
static double constant_value(const struct td_model *m, const struct td_host_facts *f,
			     const char *name)
{
	if (strcmp(name, "#SMT_on") == 0)
		return f->smt_on;
	if (strcmp(name, "#core_wide") == 0)
		return !f->smt_on;
	if (strcmp(name, "#has_pmem") == 0)
		return f->has_pmem;
	if (strcmp(name, "#slots") == 0)
		return f->slots_per_cycle ? f->slots_per_cycle : m->slots_per_cycle;
	return NAN; /* the loader admits no other name */
}

unsigned td_model_slot_width(const struct td_model *m, const struct td_host_facts *facts, bool *from_pmu)
{
	bool used = false;

	for (size_t i = 0; i < m->n_constants && !used; i++)
		used = strcmp(m->constants[i], "#slots") == 0;
	if (from_pmu)
		*from_pmu = used && facts->slots_per_cycle;
	return used ? (unsigned)constant_value(m, facts, "#slots") : 0;
}

void td_model_set_constants(const struct td_model *m, const struct td_host_facts *facts,
			    double *values)
{
	for (size_t i = 0; i < m->n_constants; i++)
		values[m->n_events + i] = constant_value(m, facts, m->constants[i]);
}
