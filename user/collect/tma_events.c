// SPDX-License-Identifier: BSD-3-Clause
/*
 * Choosing and grouping the counters of a Top-Down collection; the rules
 * are in tma_events.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "tma_events.h"

#define GP_COUNTERS_MAX 32 /* counter masks are 32 bits */
#define DEVICES_LEN 4096   /* root/sys/bus/event_source/devices */
#define FILE_LEN (DEVICES_LEN + 256) /* a file of one PMU in there */

static bool is_fixed(const struct td_counter_need *need)
{
	return need->flags & (TD_EVENT_FIXED | TD_EVENT_SLOTS_LEADER);
}

static bool is_general_purpose(const struct td_counter_need *need)
{
	return !is_fixed(need) && !(need->flags & TD_EVENT_PERF_METRICS);
}

static bool in_every_group(const struct td_counter_need *need)
{
	return is_general_purpose(need) && (need->flags & TD_NEED_EVERY_GROUP);
}

static bool group_has(const struct td_counter_group *g, int event)
{
	for (size_t i = 0; i < g->nr_events; i++)
		if (g->events[i] == event)
			return true;
	return false;
}

/* The general-purpose counters an event may take under the budget. */
static uint32_t gp_mask(const struct td_counter_need *need, unsigned gp_counters)
{
	uint32_t all = gp_counters >= GP_COUNTERS_MAX ? UINT32_MAX : (1u << gp_counters) - 1;

	return need->counters ? need->counters & all : all;
}

/* Counter assignment as a bipartite matching: events[] to counter bits. */
struct matching {
	const uint32_t *masks;
	int owner[GP_COUNTERS_MAX]; /* event holding each counter, -1 when free */
	bool seen[GP_COUNTERS_MAX];
};

static bool assign(struct matching *m, int event)
{
	for (int counter = 0; counter < GP_COUNTERS_MAX; counter++) {
		if (!(m->masks[event] & (1u << counter)) || m->seen[counter])
			continue;
		m->seen[counter] = true;
		if (m->owner[counter] < 0 || assign(m, m->owner[counter])) {
			m->owner[counter] = event;
			return true;
		}
	}
	return false;
}

/* Whether the general-purpose events of g, plus extra, each get a counter of their own. */
static bool gp_fits(const struct td_counter_need *needs, const struct td_counter_group *g, int extra,
		    unsigned gp_counters)
{
	uint32_t masks[TD_MAX_SLOTS + 1];
	struct matching m = { .masks = masks };
	int n = 0;

	for (size_t i = 0; i < g->nr_events; i++)
		if (is_general_purpose(&needs[g->events[i]]))
			masks[n++] = gp_mask(&needs[g->events[i]], gp_counters);
	masks[n++] = gp_mask(&needs[extra], gp_counters);
	memset(m.owner, -1, sizeof(m.owner));
	for (int event = 0; event < n; event++) {
		memset(m.seen, 0, sizeof(m.seen));
		if (!assign(&m, event))
			return false;
	}
	return true;
}

/* Whether fixed event e may join g: a free slot, and its fixed counter unused there. */
static bool fixed_fits(const struct td_counter_need *needs, const struct td_counter_group *g, int e,
		       unsigned group_events)
{
	uint32_t used = 0;

	if (g->nr_events >= group_events)
		return false;
	for (size_t i = 0; i < g->nr_events; i++)
		if (is_fixed(&needs[g->events[i]]))
			used |= needs[g->events[i]].counters;
	return !(used & needs[e].counters);
}

static struct td_counter_group *new_group(struct td_counter_plan *plan)
{
	struct td_counter_group *g = &plan->groups[plan->nr_groups++];

	memset(g, 0, sizeof(*g));
	return g;
}

static void add_event(struct td_counter_group *g, int e)
{
	g->events[g->nr_events++] = e;
}

/* The slots event, then each metric event; a full group starts another with slots again. */
static void pack_metric_events(const struct td_counter_need *needs, size_t n, int leader,
			       unsigned group_events, struct td_counter_plan *plan)
{
	struct td_counter_group *g = NULL;

	for (size_t e = 0; e < n; e++) {
		if (!(needs[e].flags & TD_EVENT_PERF_METRICS))
			continue;
		if (!g || g->nr_events == group_events) {
			g = new_group(plan);
			add_event(g, leader);
		}
		add_event(g, e);
		g->kernel_group = g->nr_events;
	}
}

/* First fit: the first group with a free slot whose counters can all be assigned. */
static int pack_gp_event(const struct td_counter_need *needs, int e, const struct td_counter_budget *b,
			 struct td_counter_plan *plan, char *err, size_t errlen)
{
	struct td_counter_group *g;

	for (size_t i = 0; i < plan->nr_groups; i++) {
		g = &plan->groups[i];
		if (g->nr_events < b->group_events && gp_fits(needs, g, e, b->gp_counters)) {
			add_event(g, e);
			return 0;
		}
	}
	g = new_group(plan);
	if (!gp_fits(needs, g, e, b->gp_counters)) {
		snprintf(err, errlen, "event '%s' can count on none of the %u general-purpose counters of this "
			 "CPU (counter mask 0x%x); check the model's definition or the SMT setting",
			 needs[e].name, b->gp_counters, needs[e].counters);
		return -EINVAL;
	}
	add_event(g, e);
	return 0;
}

/* Every group with room takes the fixed event; a group of its own when none has. */
static void pack_fixed_event(const struct td_counter_need *needs, int e, unsigned group_events,
			     struct td_counter_plan *plan)
{
	bool placed = false;

	for (size_t i = 0; i < plan->nr_groups; i++) {
		struct td_counter_group *g = &plan->groups[i];

		if (group_has(g, e)) {
			placed = true;
		} else if (fixed_fits(needs, g, e, group_events)) {
			add_event(g, e);
			placed = true;
		}
	}
	if (!placed)
		add_event(new_group(plan), e);
}

static int check_needs(const struct td_counter_need *needs, size_t n, const struct td_counter_budget *b,
			int *leader, char *err, size_t errlen)
{
	bool metrics = false;

	*leader = -1;
	for (size_t e = 0; e < n; e++) {
		metrics |= needs[e].flags & TD_EVENT_PERF_METRICS;
		if (needs[e].flags & TD_EVENT_SLOTS_LEADER && *leader < 0)
			*leader = e;
	}
	if (n > TD_MAX_EVENTS) {
		snprintf(err, errlen, "%zu events are more than the %d a collection can count; name fewer events",
			 n, TD_MAX_EVENTS);
		return -EINVAL;
	}
	if (b->group_events < 1 || b->group_events > TD_MAX_SLOTS) {
		snprintf(err, errlen, "a counter group holds 1 to %d events, not %u", TD_MAX_SLOTS, b->group_events);
		return -EINVAL;
	}
	if (metrics && (*leader < 0 || b->group_events < 2)) {
		snprintf(err, errlen, "topdown metric events need the slots event as their group leader, "
			 "and room for both in a group; check the model's definition");
		return -EINVAL;
	}
	return 0;
}

int td_counter_plan_build(const struct td_counter_need *needs, size_t n,
			  const struct td_counter_budget *budget, struct td_counter_plan *plan,
			  char *err, size_t errlen)
{
	int leader, ret = check_needs(needs, n, budget, &leader, err, errlen);
	struct td_counter_budget rest = *budget; /* what the others have beside the every-group events */
	unsigned every = 0;

	plan->nr_groups = 0;
	if (ret)
		return ret;
	for (size_t e = 0; e < n; e++)
		every += in_every_group(&needs[e]);
	if (every && (every >= budget->gp_counters || every >= budget->group_events)) {
		snprintf(err, errlen, "%u general-purpose counter%s free, and the events every group needs take "
			 "%s: no room is left for the others", budget->gp_counters,
			 budget->gp_counters == 1 ? " is" : "s are", every == 1 ? "one" : "them all");
		return -ENOSPC;
	}
	rest.gp_counters -= every;
	rest.group_events -= every;
	pack_metric_events(needs, n, leader, rest.group_events, plan);
	for (size_t e = 0; !ret && e < n; e++)
		if (is_general_purpose(&needs[e]) && !in_every_group(&needs[e]))
			ret = pack_gp_event(needs, e, &rest, plan, err, errlen);
	for (size_t e = 0; !ret && e < n; e++)
		if (is_fixed(&needs[e]))
			pack_fixed_event(needs, e, rest.group_events, plan);
	if (!ret && every && plan->nr_groups == 0)
		new_group(plan);
	for (size_t e = 0; !ret && e < n; e++)
		for (size_t g = 0; in_every_group(&needs[e]) && g < plan->nr_groups; g++)
			add_event(&plan->groups[g], e);
	if (ret)
		plan->nr_groups = 0;
	return ret;
}

int td_tma_choose_model(const struct td_kb *kb, const char *name, const struct td_cpuinfo *cpu,
			const struct td_model **out, char *err, size_t errlen)
{
	size_t used;

	if (!name)
		return td_kb_detect_model(kb, cpu, out, err, errlen);
	*out = td_kb_model(kb, name);
	if (*out && cpu && (*out)->alternate_for && td_kb_cpu_vendor(cpu) != (int)(*out)->vendor) {
		const struct td_model *detected = NULL;
		char ignored[256];

		td_kb_detect_model(kb, cpu, &detected, ignored, sizeof(ignored));
		snprintf(err, errlen, "--cpu-model %s is %s's variant on general-purpose counters, for its own "
			 "vendor's CPUs; this host's CPU is %s (%s): drop --cpu-model to use the detected model",
			 (*out)->name, (*out)->alternate_for->long_name, detected ? detected->name : "not a known model",
			 cpu->vendor);
		return -EINVAL;
	}
	if (*out)
		return 0;
	used = snprintf(err, errlen, "unknown CPU model '%s'; known models:", name);
	for (size_t i = 0; i < td_kb_model_count(kb) && used < errlen; i++)
		used += snprintf(err + used, errlen - used, "%s %s", i ? "," : "", td_kb_model_at(kb, i)->name);
	return -ENOENT;
}

static bool pmu_exists(const char *devices, const char *name)
{
	char path[FILE_LEN];

	snprintf(path, sizeof(path), "%s/%s/type", devices, name);
	return access(path, R_OK) == 0;
}

/*
 * The sysfs name of the model's PMU: the model's own; "cpu" for a
 * "cpu_core" model on a part that is not hybrid (a non-hybrid Alder Lake
 * registers its core PMU as cpu); the first armv8_pmuv3* for Arm, whose
 * PMU the kernel numbers (armv8_pmuv3_0).
 */
static int find_pmu(const char *devices, const struct td_model *model, char *name, size_t len,
		    char *err, size_t errlen)
{
	size_t prefix = strlen(model->pmu);
	struct dirent **entries;
	const char *found = pmu_exists(devices, model->pmu) ? model->pmu :
			    !strcmp(model->pmu, "cpu_core") && pmu_exists(devices, "cpu") ? "cpu" : NULL;
	int n, ret = -ENODEV;

	if (found) {
		snprintf(name, len, "%s", found);
		return 0;
	}
	n = model->vendor == TD_VENDOR_ARM ? scandir(devices, &entries, NULL, alphasort) : -1;
	for (int i = 0; i < n; i++) {
		if (ret && !strncmp(entries[i]->d_name, model->pmu, prefix) &&
		    strlen(entries[i]->d_name) < len && pmu_exists(devices, entries[i]->d_name)) {
			strcpy(name, entries[i]->d_name);
			ret = 0;
		}
		free(entries[i]);
	}
	if (n >= 0)
		free(entries);
	if (ret)
		snprintf(err, errlen, "this host has no '%s' PMU in %s, which the %s events need; "
			 "a VM needs a virtual PMU, and --cpu-model names the CPU when detection is wrong",
			 model->pmu, devices, model->long_name);
	return ret;
}

/* A number from a sysfs file of the PMU ("4", "0x00000008"); -errno when absent. */
static int read_pmu_number(const char *devices, const char *pmu, const char *file, unsigned long *out)
{
	char path[FILE_LEN], text[64], *end;
	int ret;

	snprintf(path, sizeof(path), "%s/%s/%s", devices, pmu, file);
	if ((ret = td_read_first_line(path, text, sizeof(text))))
		return ret;
	*out = strtoul(text, &end, 0);
	return end == text || *end ? -EINVAL : 0;
}

/* The PMU's type, its CPUs, and on Arm the slot width it reports. */
static int read_pmu_facts(const char *devices, struct td_tma_setup *s, uint32_t *type, char *err, size_t errlen)
{
	char path[FILE_LEN];
	unsigned long value;
	int ret = read_pmu_number(devices, s->pmu, "type", &value);

	if (ret) {
		snprintf(err, errlen, "cannot read the type of PMU '%s' from %s/%s/type (%s); is sysfs mounted?",
			 s->pmu, devices, s->pmu, strerror(-ret));
		return ret;
	}
	*type = value;
	if (s->model->vendor == TD_VENDOR_ARM && read_pmu_number(devices, s->pmu, "caps/slots", &value) == 0)
		s->facts.slots_per_cycle = value;
	snprintf(path, sizeof(path), "%s/%s/cpus", devices, s->pmu);
	ret = td_read_first_line(path, s->pmu_cpus, sizeof(s->pmu_cpus));
	if (ret == -ENOENT) {
		s->pmu_cpus[0] = '\0';
		ret = 0;
	} else if (ret) {
		snprintf(err, errlen, "cannot read the CPUs of PMU '%s' from %s (%s)", s->pmu, path, strerror(-ret));
	}
	return ret;
}

/*
 * The slots event when the metric events need a leader the formulas do
 * not name (Arrow Lake's level 1 reads only topdown-* ratios); -1 when
 * none is missing.
 */
static int missing_leader(const struct td_model *model, const int *idx, size_t n)
{
	bool metrics = false;

	for (size_t i = 0; i < n; i++) {
		if (model->events[idx[i]].flags & TD_EVENT_SLOTS_LEADER)
			return -1;
		metrics |= model->events[idx[i]].flags & TD_EVENT_PERF_METRICS;
	}
	for (size_t e = 0; metrics && e < model->n_events; e++)
		if (model->events[e].flags & TD_EVENT_SLOTS_LEADER)
			return e;
	return -1;
}

/*
 * The events depth needs, and the slots event that leads their metric
 * events: indexes in model->events. Level 4 only when it adds no event.
 */
static int depth_events(const struct td_model *model, int depth, int *idx, size_t *n,
			char *err, size_t errlen)
{
	int level3[TD_MAX_EVENTS], leader;

	if (depth < 1 || depth > 4) {
		snprintf(err, errlen, "Top-Down level %d does not exist; use 1 to 3 (4 where it needs no more counters)",
			 depth);
		return -EINVAL;
	}
	*n = td_model_events_for(model, td_level_mask(depth, false), idx, TD_MAX_EVENTS);
	if (depth == 4 && *n > td_model_events_for(model, td_level_mask(3, false), level3, TD_MAX_EVENTS)) {
		snprintf(err, errlen, "level 4 on %s needs counters beyond level 3; use --level 3", model->long_name);
		return -EINVAL;
	}
	if (*n <= TD_MAX_EVENTS && (leader = missing_leader(model, idx, *n)) >= 0) {
		if (*n < TD_MAX_EVENTS)
			idx[*n] = leader;
		(*n)++;
	}
	if (*n > TD_MAX_EVENTS) {
		snprintf(err, errlen, "level %d on %s needs %zu events, more than the %d a collection counts; "
			 "use a lower --level", depth, model->long_name, *n, TD_MAX_EVENTS);
		return -EINVAL;
	}
	return 0;
}

/* The datasheet's needs of the setup's events, as td_tma_setup planned them. */
static void setup_needs(const struct td_tma_setup *s, struct td_counter_need *needs)
{
	for (size_t i = 0; i < s->nr_events; i++) {
		const struct td_event_def *def = td_model_event(s->model, s->events[i].name);

		needs[i] = (struct td_counter_need){ def->name, def->counters, def->flags };
	}
}

int td_tma_plan_for(struct td_tma_setup *s, const struct td_pmu_probe *probe, char *note, size_t notelen,
		    char *err, size_t errlen)
{
	struct td_counter_need needs[TD_MAX_EVENTS];
	struct td_counter_budget budget = s->budget;
	unsigned fixed = 0, moved = 0;
	size_t used = 0;
	int ret;

	if (notelen)
		note[0] = '\0';
	setup_needs(s, needs);
	if (probe->gp_more && notelen)
		used += snprintf(note + used, notelen - used, "PMU %s let more than the %u general-purpose "
				 "counters %s documents count together; planning for %u. ", s->pmu,
				 budget.gp_counters, s->model->long_name, budget.gp_counters);
	if (probe->gp_free < budget.gp_counters)
		budget.gp_counters = probe->gp_free;
	for (size_t i = 0; i < s->nr_events; i++) {
		if (!(needs[i].flags & TD_EVENT_FIXED) || (needs[i].flags & TD_EVENT_SLOTS_LEADER))
			continue;
		if (fixed < probe->nr_fixed && !(probe->fixed_free & (1u << fixed))) {
			needs[i].flags = (needs[i].flags & ~TD_EVENT_FIXED) | TD_NEED_EVERY_GROUP;
			needs[i].counters = 0;
			moved++;
		}
		fixed++;
	}
	if (budget.gp_counters == 0) {
		snprintf(err, errlen, "every general-purpose counter of PMU %s is held by another user%s, so no "
			 "Top-Down event can count; stop the other monitor", s->pmu,
			 td_nmi_watchdog_holds_counter(s->model->vendor == TD_VENDOR_ARM) ?
			 " (the NMI watchdog holds one: `sysctl -w kernel.nmi_watchdog=0` frees it)" : "");
		return -ENOSPC;
	}
	ret = td_counter_plan_build(needs, s->nr_events, &budget, &s->plan, err, errlen);
	if (ret)
		return ret;
	/* every group apart from Intel's slots groups counts as one perf group */
	for (size_t g = 0; g < s->plan.nr_groups; g++)
		if (s->plan.groups[g].kernel_group == 0)
			s->plan.groups[g].kernel_group = s->plan.groups[g].nr_events;
	s->budget = budget;
	s->probe = *probe;
	if (notelen && (budget.gp_counters < (s->facts.smt_on ? s->model->gp_counters : s->model->gp_counters_smt_off) ||
			moved))
		snprintf(note + used, notelen - used, "PMU %s: %u of %u general-purpose counters free%s; "
			 "%zu counter group%s", s->pmu, budget.gp_counters,
			 s->facts.smt_on ? s->model->gp_counters : s->model->gp_counters_smt_off,
			 moved ? ", a fixed counter taken (its event counts on a general-purpose one in every group)" : "",
			 s->plan.nr_groups, s->plan.nr_groups == 1 ? "" : "s, one per interval in turn");
	return 0;
}

bool td_nmi_watchdog_holds_counter(bool arm)
{
	char value[8] = "";

	/* x86's hard-lockup detector counts cycles on a counter of its own */
	return !arm &&
	       td_read_first_line("/proc/sys/kernel/nmi_watchdog", value, sizeof(value)) == 0 &&
	       strcmp(value, "0") != 0;
}

int td_tma_probe(struct td_tma_setup *s, char *note, size_t notelen, char *err, size_t errlen)
{
	struct td_event fixed[32];
	const struct td_event *gp_event = NULL;
	struct td_pmu_probe probe;
	size_t nr_fixed = 0;
	int cpu = atoi(s->pmu_cpus); /* the first CPU of the list; "" is CPU 0 */
	char ignored[256];

	if (notelen)
		note[0] = '\0';
	int widest = 0;

	for (size_t i = 0; i < s->nr_events; i++) {
		const struct td_event_def *def = td_model_event(s->model, s->events[i].name);
		int width = def->counters ? __builtin_popcount(def->counters) : 32;

		if ((def->flags & TD_EVENT_FIXED) && !(def->flags & TD_EVENT_SLOTS_LEADER) && nr_fixed < 32) {
			fixed[nr_fixed++] = s->events[i];
		} else if (!(def->flags & (TD_EVENT_FIXED | TD_EVENT_SLOTS_LEADER | TD_EVENT_PERF_METRICS)) &&
			   width > widest) { /* the one that may take the most counters */
			gp_event = &s->events[i];
			widest = width;
		}
	}
	if (!gp_event)
		return 0;
	if (td_pmu_probe(gp_event, s->budget.gp_counters, fixed, nr_fixed, cpu, &probe, ignored, sizeof(ignored)))
		return 0;
	return td_tma_plan_for(s, &probe, note, notelen, err, errlen);
}

bool td_tma_describe_slots(const struct td_tma_setup *s, char *buf, size_t len)
{
	bool from_pmu;
	unsigned width = td_model_slot_width(s->model, &s->facts, &from_pmu);

	buf[0] = '\0';
	if (!width)
		return false;
	if (from_pmu)
		snprintf(buf, len, "%s's formulas take %u slots per cycle, from PMU %s's caps/slots", s->model->long_name,
			 width, s->pmu);
	else
		snprintf(buf, len, "%s's formulas take %u slots per cycle, the width its definition documents: "
			 "PMU %s reports none (caps/slots absent or 0)", s->model->long_name, width, s->pmu);
	return !from_pmu;
}

int td_tma_bind_event(const struct td_event_def *def, uint32_t pmu_type, struct td_event *out, char *err,
		      size_t errlen)
{
	if (strlen(def->name) >= sizeof(out->name)) {
		snprintf(err, errlen, "event name '%s' is longer than %zu bytes; shorten it in the definitions",
			 def->name, sizeof(out->name) - 1);
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	strcpy(out->name, def->name);
	out->type = pmu_type;
	out->config = def->config;
	out->config1 = def->config1;
	out->config2 = def->config2;
	return 0;
}

/* Whether the PMU lists event (its sysfs events/ directory). */
static bool pmu_has_event(const char *devices, const char *pmu, const char *event)
{
	char path[FILE_LEN];

	snprintf(path, sizeof(path), "%s/%s/events/%s", devices, pmu, event);
	return access(path, F_OK) == 0;
}

int td_tma_setup(const struct td_model *model, int depth, const char *root,
		 const struct td_cpuinfo *cpu, struct td_tma_setup *s, char *err, size_t errlen)
{
	struct td_counter_need needs[TD_MAX_EVENTS];
	char devices[DEVICES_LEN];
	int idx[TD_MAX_EVENTS], ret;

	memset(s, 0, sizeof(*s));
	s->depth = depth;
	s->facts.smt_on = cpu->smt_on;
	snprintf(devices, sizeof(devices), "%s/sys/bus/event_source/devices", root);
	if ((ret = depth_events(model, depth, idx, &s->nr_events, err, errlen)) ||
	    (ret = find_pmu(devices, model, s->pmu, sizeof(s->pmu), err, errlen)))
		return ret;
	if (model->gp_alternate && !pmu_has_event(devices, s->pmu, "slots")) {
		snprintf(s->variant, sizeof(s->variant),
			 "PMU %s has no slots event (no PERF_METRICS, as in most VMs): Top-Down of %s uses "
			 "Intel's formulas on general-purpose counters (%s)", s->pmu, model->long_name,
			 model->gp_alternate->name);
		model = model->gp_alternate;
		if ((ret = depth_events(model, depth, idx, &s->nr_events, err, errlen)))
			return ret;
	}
	s->model = model;
	s->budget.gp_counters = cpu->smt_on ? model->gp_counters : model->gp_counters_smt_off;
	s->budget.group_events = TD_MAX_SLOTS;
	if ((ret = read_pmu_facts(devices, s, &s->pmu_type, err, errlen)))
		return ret;
	for (size_t i = 0; i < s->nr_events; i++) {
		const struct td_event_def *def = &model->events[idx[i]];

		if ((ret = td_tma_bind_event(def, s->pmu_type, &s->events[i], err, errlen)))
			return ret;
		needs[i] = (struct td_counter_need){ def->name, def->counters, def->flags };
	}
	return td_counter_plan_build(needs, s->nr_events, &s->budget, &s->plan, err, errlen);
}
