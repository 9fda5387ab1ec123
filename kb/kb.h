/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kb: the Top-Down definitions of every supported microarchitecture.
 *
 * A model is one PMU flavour of one microarchitecture: the events it
 * counts (with their perf_event_attr encoding), the metrics computed from
 * them (perf pmu-events expressions, see kb/expr.h) and the facts needed
 * to schedule them (counters, slots per cycle).  The definitions are data
 * files under kb/defs/ compiled into the binary and parsed once.
 *
 * Values.  Every model has one value vector of n_slots doubles:
 *
 *     [0, n_events)                          event counts (NaN = not counted)
 *     [n_events, n_events + n_constants)     '#' machine constants
 *     [n_events + n_constants, n_slots)      metric results
 *
 * Every event, constant and metric knows its slot; every compiled
 * expression is bound to these slots.  To compute a tree: fill the event
 * slots, call td_model_set_constants(), then walk metrics[] in order and
 * store td_expr_eval(metric->compiled, values) in values[metric->slot]:
 * metrics[] is sorted so that each metric comes after every metric its
 * expression names.  Evaluate thresholds after all metrics (they may name
 * any metric).  Slots hold the raw expression result; multiply by
 * metric->scale for the value to show or store (a fraction 0..1 for
 * TD_UNIT_FRACTION).  Thresholds compare raw values: a threshold
 * evaluating to a nonzero, non-NaN number is crossed.
 *
 * Depth.  used_by on events and metrics is a mask of TD_USED_BY_* bits:
 * which tree levels (and whether the Info metrics) need it, directly or
 * through helpers.  td_level_mask(depth, with_info) & used_by says whether
 * a collection at that depth needs the event or must evaluate the metric.
 */
#ifndef TD_KB_H
#define TD_KB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct td_cpuinfo;
struct td_expr;
struct td_kb;

enum td_vendor { TD_VENDOR_INTEL, TD_VENDOR_AMD, TD_VENDOR_ARM };

/* td_event_def.flags: what the PMU setup must respect. */
enum {
	/* Counts on an architectural fixed counter (Intel fixed counters, the
	 * Arm cycle counter): takes no general-purpose counter. */
	TD_EVENT_FIXED = 1u << 0,
	/* Intel TOPDOWN.SLOTS (perf "slots"): must lead every group that
	 * holds TD_EVENT_PERF_METRICS members. */
	TD_EVENT_SLOTS_LEADER = 1u << 1,
	/* Intel topdown-* metric event (PERF_METRICS, Ice Lake and later):
	 * takes no counter; a member of a group whose leader is slots;
	 * never sampling; no exclude_* filters.  Reading one member makes
	 * the kernel refresh every metric event of the group from
	 * PERF_METRICS, so per-event reads (bpf_perf_event_read_value)
	 * return consistent cumulative slot counts. */
	TD_EVENT_PERF_METRICS = 1u << 2,
};

/* used_by bits. */
#define TD_USED_BY_INFO 1u
#define TD_USED_BY_LEVEL(n) (1u << (n)) /* n = 1..4 */

struct td_event_def {
	const char *name; /* canonical form the formulas use (kb/expr.h) */
	const char *pmu;  /* sysfs PMU name: "cpu", "cpu_core", "cpu_atom", or
			   * "armv8_pmuv3" (the kernel may append "_0") */
	uint64_t config, config1, config2; /* perf_event_attr fields for that PMU */
	uint32_t counters; /* bit n: may count on counter n (the fixed counter n
			    * with TD_EVENT_FIXED); 0 = any */
	unsigned flags;   /* TD_EVENT_* */
	unsigned used_by; /* TD_USED_BY_*; 0: only sample lines name it */
	int slot;
};

enum td_metric_kind {
	TD_METRIC_TREE,   /* a node of the Top-Down tree: level, parent, path */
	TD_METRIC_INFO,   /* a reported ratio: IPC, MPKI, walk rates, ... */
	TD_METRIC_HELPER, /* only referenced by other formulas */
};

enum td_metric_unit {
	TD_UNIT_FRACTION, /* value * scale is 0..1; shown as percent */
	TD_UNIT_RATIO,    /* value * scale is a plain number (IPC, MPKI, ...) */
};

struct td_metric_def {
	const char *name;      /* vendor name: tma_dram_bound, backend_bound */
	const char *aliases;   /* other accepted names, space separated, or "" */
	enum td_metric_kind kind;
	enum td_metric_unit unit;
	int level;             /* 1..4 in the tree; 0 otherwise */
	const char *parent;    /* parent metric name; NULL at level 1 and off-tree */
	const char *node;      /* tree node name: "DRAM_Bound"; NULL off-tree */
	const char *path;      /* "Backend_Bound.Memory_Bound.DRAM_Bound"; NULL off-tree */
	const char *expr;      /* perf pmu-events syntax */
	const char *threshold; /* perf syntax, or NULL */
	double scale;          /* raw value * scale = shown value */
	bool children_sum;     /* the children add up to this node (one of them
				* is defined as the rest of it) */
	const char *sample;    /* the event to sample to find the code behind
				* this metric: an event of the model; NULL when
				* the vendor names none (td_model_sample_event) */
	const char *sample_also; /* the vendor's other choices, events of the
				  * model, space separated, or "" */
	bool sample_precise;   /* sample them precisely (Intel PEBS, the _PS
				* names): the sample lands on the instruction */
	unsigned used_by;      /* TD_USED_BY_* */
	int slot;
	const int *events;     /* indexes into model->events needed, directly */
	size_t n_events;       /* or through helpers, ascending */
	struct td_expr *compiled;           /* bound to the model's slots */
	struct td_expr *compiled_threshold; /* NULL without threshold */
};

struct td_model {
	const char *name;      /* short name: "spr", "neoverse-v2", "zen4" */
	const char *long_name; /* "Sapphire Rapids" */
	const char *aliases;   /* other accepted names, space separated, or "" */
	enum td_vendor vendor;
	const char *pmu;       /* PMU the events belong to */
	unsigned slots_per_cycle; /* issue width the formulas assume */
	unsigned gp_counters;        /* per logical CPU with SMT on */
	unsigned gp_counters_smt_off;
	unsigned fixed_counters;
	bool perf_metrics;     /* has TD_EVENT_PERF_METRICS events */
	bool level1_sums;      /* the level-1 nodes add up to 1 */
	const char *notes;     /* what every output for this model must say, or NULL */
	const struct td_model *e_core; /* hybrid parts: the cpu_atom model */
	/* The variant on general-purpose counters only, for hosts where the
	 * fixed counters or PERF_METRICS do not open (most VMs); NULL when
	 * the model has none. alternate_for is the way back: the model a
	 * variant stands in for, NULL for a main model. */
	const struct td_model *gp_alternate;
	const struct td_model *alternate_for;

	const struct td_event_def *events;
	size_t n_events;
	const char *const *constants; /* "#SMT_on", ... */
	size_t n_constants;
	const struct td_metric_def *metrics; /* evaluation order */
	size_t n_metrics;
	size_t n_slots;
};

/* Facts the '#' constants depend on. */
struct td_host_facts {
	bool smt_on;
	unsigned slots_per_cycle; /* Arm sysfs caps/slots; 0 = the model's */
	bool has_pmem;            /* Optane persistent memory installed */
};

/*
 * Parse and compile every embedded definition (the files of kb/defs).
 * On failure returns NULL with err naming the file, line or model and
 * the problem.
 */
struct td_kb *td_kb_new(char *err, size_t errlen);

/* The same from definitions in that format given as text (tests). */
struct td_kb *td_kb_parse(const char *text, char *err, size_t errlen);

void td_kb_free(struct td_kb *kb);

/*
 * The process-wide knowledge base: built by the first call, read-only and
 * shared afterwards (thread-safe).  NULL with err if it does not build.
 */
const struct td_kb *td_kb_load(char *err, size_t errlen);

size_t td_kb_model_count(const struct td_kb *kb);
const struct td_model *td_kb_model_at(const struct td_kb *kb, size_t i);

/* By short name, long name or alias; case-insensitive, '-' == '_'. */
const struct td_model *td_kb_model(const struct td_kb *kb, const char *name);

/*
 * The model of this CPU: Intel by CPUID family/model (hybrids give the
 * P-core model, whose e_core is the E-core model), AMD by family/model,
 * Arm by MIDR implementer/part/variant/revision.  -ENOTSUP with err when
 * the CPU has no definitions.
 */
int td_kb_detect_model(const struct td_kb *kb, const struct td_cpuinfo *cpu,
		       const struct td_model **out, char *err, size_t errlen);

/* The CPU's vendor (enum td_vendor): x86 by the vendor string; anything
 * else with an MIDR implementer is Arm. -1 when neither. */
int td_kb_cpu_vendor(const struct td_cpuinfo *cpu);

/* Slot of an event, '#' constant or metric (name or alias), or -ENOENT. */
int td_model_slot(const struct td_model *m, const char *name);

/* Metric by name or alias, case-insensitive; NULL when absent. */
const struct td_metric_def *td_model_metric(const struct td_model *m, const char *name);

/* Event by canonical name (exact); NULL when absent. */
const struct td_event_def *td_model_event(const struct td_model *m, const char *name);

/*
 * The event to sample to find the code behind a node: its own sample
 * event, else its nearest ancestor's, else TD_SAMPLE_CYCLES (time on the
 * core is where any bottleneck shows, though not why).  node is a metric
 * name or alias, a dotted tree path or a tree node name, case-insensitive.
 * *precise (may be NULL) says whether to sample it precisely.  NULL when
 * the model has no such metric.  The name is the model's event name:
 * td_model_event() gives its encoding, except for TD_SAMPLE_CYCLES, perf's
 * generic cycles event.
 */
#define TD_SAMPLE_CYCLES "cycles"
const char *td_model_sample_event(const struct td_model *m, const char *node, bool *precise);

/* A metric by name or alias, dotted tree path or tree node name,
 * case-insensitive; NULL when absent. */
const struct td_metric_def *td_model_node(const struct td_model *m, const char *node);

/* used_by mask of a collection of the tree down to depth (1..4). */
unsigned td_level_mask(int depth, bool with_info);

/*
 * The events a collection with this used_by mask needs: their indexes in
 * m->events, ascending, stored into out[0..cap).  Returns how many there
 * are, which may be more than cap.
 */
size_t td_model_events_for(const struct td_model *m, unsigned mask, int *out, size_t cap);

/*
 * The issue width the model's formulas take as #slots on a host: the
 * PMU's caps/slots when it reports one, else the model's documented
 * width. 0 when no formula of the model uses #slots (Neoverse N1's
 * cycle-based level 1). *from_pmu (may be NULL) says which it is.
 */
unsigned td_model_slot_width(const struct td_model *m, const struct td_host_facts *facts, bool *from_pmu);

/* Store the values of the model's '#' constants into values[]. */
void td_model_set_constants(const struct td_model *m, const struct td_host_facts *facts,
			    double *values);

#endif
