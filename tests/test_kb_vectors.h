/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Random plausible counter values for the kb tests: what a real thread's
 * counters could read, so that formulas can be compared and invariants
 * checked on values that respect the hardware's own relations.
 *
 * A vector starts from a cycle count C and the issue slots S the model
 * accounts (the model's own slots metric where it has one, else width x
 * C).  S is split at random into frontend-bound, bad-speculation,
 * retiring and backend-bound slots (and SMT contention on AMD), and the
 * events that count those shares get them: Intel's topdown-* and the
 * pre-Ice Lake uop events, the E-core TOPDOWN_* events, Arm's STALL_SLOT*
 * and OP_* events, AMD's dispatch-slot events.  Sub-events get a part of
 * what they subdivide (a fetch-latency share of the frontend slots, a
 * memory share of the backend stall cycles).  Every other event counts a
 * random fraction of C.
 */
#ifndef TOPDOWN_TEST_KB_VECTORS_H
#define TOPDOWN_TEST_KB_VECTORS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "expr.h"
#include "kb.h"

struct kbv_rng {
	uint64_t state;
};

/* xorshift64*: reproducible across runs and platforms. */
static inline double kbv_unit(struct kbv_rng *r)
{
	r->state ^= r->state >> 12;
	r->state ^= r->state << 25;
	r->state ^= r->state >> 27;
	return (double)((r->state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static inline double kbv_between(struct kbv_rng *r, double lo, double hi)
{
	return lo + (hi - lo) * kbv_unit(r);
}

/*
 * One relation: event = base * [lo, hi] (/ width) + plus - minus.  base,
 * plus and minus name an event set earlier in the table or a share:
 * $cycles, $slots, $fe, $bs, $ret, $be, $smt.
 */
struct kbv_rule {
	const char *event;
	const char *base;
	double lo, hi;
	bool per_width; /* slots turned into cycles */
	const char *plus, *minus;
};

/* Cycle counts: set first, since a model's slots may be built from them. */
static const struct kbv_rule kbv_cycle_rules[] = {
	{ "CPU_CLK_UNHALTED.THREAD", "$cycles", 1, 1, false, NULL, NULL },
	{ "CPU_CLK_UNHALTED.THREAD_P", "$cycles", 1, 1, false, NULL, NULL },
	{ "CPU_CLK_UNHALTED.CORE", "$cycles", 1, 1, false, NULL, NULL },
	{ "CPU_CLK_UNHALTED.DISTRIBUTED", "$cycles", 0.5, 1, false, NULL, NULL },
	{ "CPU_CLK_UNHALTED.REF_XCLK", "$cycles", 0.01, 0.05, false, NULL, NULL },
	{ "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE", "CPU_CLK_UNHALTED.REF_XCLK", 0, 1, false, NULL, NULL },
	{ "CPU_CYCLES", "$cycles", 1, 1, false, NULL, NULL },
	{ "ls_not_halted_cyc", "$cycles", 1, 1, false, NULL, NULL },
	{ "TOPDOWN.SLOTS", "$slots", 1, 1, false, NULL, NULL },
	{ "TOPDOWN.SLOTS_P", "$slots", 1, 1, false, NULL, NULL },
};

/* Shares of the slots and their parts. */
static const struct kbv_rule kbv_share_rules[] = {
	/* Intel PERF_METRICS: the four shares and their level-2 parts */
	{ "topdown-fe-bound", "$fe", 1, 1, false, NULL, NULL },
	{ "topdown-bad-spec", "$bs", 1, 1, false, NULL, NULL },
	{ "topdown-retiring", "$ret", 1, 1, false, NULL, NULL },
	{ "topdown-be-bound", "$be", 1, 1, false, NULL, NULL },
	{ "topdown-fetch-lat", "$fe", 0.2, 0.9, false, NULL, NULL },
	{ "topdown-br-mispredict", "$bs", 0.2, 0.9, false, NULL, NULL },
	{ "topdown-heavy-ops", "$ret", 0, 0.4, false, NULL, NULL },
	{ "topdown-mem-bound", "$be", 0.2, 0.9, false, NULL, NULL },
	{ "INT_MISC.UOP_DROPPING", "$fe", 0, 0.05, false, NULL, NULL },
	{ "INT_MISC.CLEARS_COUNT", "$bs", 0, 0.1, true, NULL, NULL },
	/* Intel before PERF_METRICS: the same shares in uop events */
	{ "IDQ_UOPS_NOT_DELIVERED.CORE", "$fe", 1, 1, false, NULL, NULL },
	/* the general-counter variants (icx-alt, spr-alt, ...) */
	{ "IDQ_BUBBLES.CORE", "$fe", 1, 1, false, NULL, NULL },
	{ "IDQ_BUBBLES.CYCLES_0_UOPS_DELIV.CORE", "$fe", 0.2, 0.9, true, NULL, NULL },
	{ "TOPDOWN.BACKEND_BOUND_SLOTS", "$be", 1, 1, false, NULL, NULL },
	{ "TOPDOWN.MEMORY_BOUND_SLOTS", "$be", 0.2, 0.9, false, NULL, NULL },
	{ "TOPDOWN.BR_MISPREDICT_SLOTS", "$bs", 0.2, 0.9, false, NULL, NULL },
	{ "UOPS_RETIRED.HEAVY", "$ret", 0, 0.4, false, NULL, NULL },
	{ "IDQ_UOPS_NOT_DELIVERED.CYCLES_0_UOPS_DELIV.CORE", "$fe", 0.2, 0.9, true, NULL, NULL },
	{ "UOPS_RETIRED.RETIRE_SLOTS", "$ret", 1, 1, false, NULL, NULL },
	{ "UOPS_RETIRED.SLOTS", "$ret", 1, 1, false, NULL, NULL },
	{ "UOPS_ISSUED.ANY", "$bs", 0.6, 0.6, false, "$ret", NULL },
	{ "INT_MISC.RECOVERY_CYCLES", "$bs", 0.4, 0.4, true, NULL, NULL },
	{ "INT_MISC.RECOVERY_CYCLES_ANY", "INT_MISC.RECOVERY_CYCLES", 2, 2, false, NULL, NULL }, /* both threads */
	{ "INST_RETIRED.ANY", "$ret", 0.5, 0.95, false, NULL, NULL },
	{ "UOPS_RETIRED.MS", "topdown-heavy-ops", 0, 1, false, NULL, NULL },
	{ "IDQ.MS_UOPS", "$ret", 0, 0.05, false, NULL, NULL },
	{ "UOPS_DECODED.DEC0", "IDQ.MITE_UOPS", 0, 0.3, false, NULL, NULL },
	{ "UOPS_DECODED.DEC0,cmask=1", "UOPS_DECODED.DEC0", 0.5, 1, false, NULL, NULL },
	{ "CYCLE_ACTIVITY.STALLS_TOTAL", "$cycles", 0.2, 0.6, false, NULL, NULL },
	{ "CYCLE_ACTIVITY.STALLS_MEM_ANY", "CYCLE_ACTIVITY.STALLS_TOTAL", 0, 1, false, NULL, NULL },
	{ "UOPS_RETIRED.MACRO_FUSED", "INST_RETIRED.ANY", 0, 0.1, false, NULL, NULL },
	{ "INST_RETIRED.MACRO_FUSED", "INST_RETIRED.ANY", 0, 0.1, false, NULL, NULL },
	/* Intel E-cores */
	{ "TOPDOWN_FE_BOUND.ALL", "$fe", 1, 1, false, NULL, NULL },
	{ "TOPDOWN_FE_BOUND.ALL_P", "$fe", 1, 1, false, NULL, NULL },
	{ "TOPDOWN_BAD_SPECULATION.ALL", "$bs", 1, 1, false, NULL, NULL },
	{ "TOPDOWN_BAD_SPECULATION.ALL_P", "$bs", 1, 1, false, NULL, NULL },
	{ "TOPDOWN_RETIRING.ALL", "$ret", 1, 1, false, NULL, NULL },
	{ "TOPDOWN_RETIRING.ALL_P", "$ret", 1, 1, false, NULL, NULL },
	{ "TOPDOWN_BE_BOUND.ALL", "$be", 1, 1, false, NULL, NULL },
	{ "TOPDOWN_BE_BOUND.ALL_P", "$be", 1, 1, false, NULL, NULL },
	{ "TOPDOWN_FE_BOUND.FRONTEND_LATENCY", "$fe", 0.2, 0.9, false, NULL, NULL },
	{ "TOPDOWN_FE_BOUND.FRONTEND_BANDWIDTH", "$fe", 1, 1, false, NULL, "TOPDOWN_FE_BOUND.FRONTEND_LATENCY" },
	{ "TOPDOWN_BAD_SPECULATION.MISPREDICT", "$bs", 0.2, 0.9, false, NULL, NULL },
	{ "TOPDOWN_BAD_SPECULATION.MACHINE_CLEARS", "$bs", 1, 1, false, NULL, "TOPDOWN_BAD_SPECULATION.MISPREDICT" },
	{ "TOPDOWN_BE_BOUND.ALLOC_RESTRICTIONS", "$be", 0.1, 0.6, false, NULL, NULL },
	/* Arm: slots, then stall cycles and their causes */
	{ "STALL_SLOT_FRONTEND", "$fe", 1, 1, false, NULL, NULL },
	{ "STALL_SLOT_BACKEND", "$be", 1, 1, false, NULL, NULL },
	{ "STALL_SLOT", "$be", 1, 1, false, "STALL_SLOT_FRONTEND", NULL },
	{ "OP_RETIRED", "$ret", 1, 1, false, NULL, NULL },
	{ "OP_SPEC", "$bs", 1, 1, false, "OP_RETIRED", NULL },
	{ "BR_MIS_PRED", "$fe", 0, 0.2, true, NULL, NULL },
	{ "STALL_FRONTEND", "$fe", 1, 1, true, NULL, NULL },
	{ "STALL_BACKEND", "$be", 1, 1, true, NULL, NULL },
	{ "STALL_FRONTEND_CPUBOUND", "STALL_FRONTEND", 0.2, 0.8, false, NULL, NULL },
	{ "STALL_FRONTEND_MEMBOUND", "STALL_FRONTEND", 1, 1, false, NULL, "STALL_FRONTEND_CPUBOUND" },
	{ "STALL_FRONTEND_FLUSH", "STALL_FRONTEND_CPUBOUND", 0, 0.5, false, NULL, NULL },
	{ "STALL_FRONTEND_FLOW", "STALL_FRONTEND_CPUBOUND", 0, 0.5, false, NULL, NULL },
	{ "STALL_FRONTEND_L1I", "STALL_FRONTEND_MEMBOUND", 0, 0.33, false, NULL, NULL },
	{ "STALL_FRONTEND_MEM", "STALL_FRONTEND_MEMBOUND", 0, 0.33, false, NULL, NULL },
	{ "STALL_FRONTEND_TLB", "STALL_FRONTEND_MEMBOUND", 0, 0.33, false, NULL, NULL },
	{ "STALL_BACKEND_CPUBOUND", "STALL_BACKEND", 0.1, 0.4, false, NULL, NULL },
	{ "STALL_BACKEND_MEMBOUND", "STALL_BACKEND", 0.3, 0.6, false, NULL, NULL },
	{ "STALL_BACKEND_BUSY", "STALL_BACKEND", 0, 0.2, false, NULL, NULL },
	{ "STALL_BACKEND_RENAME", "STALL_BACKEND_CPUBOUND", 0, 1, false, NULL, NULL },
	{ "STALL_BACKEND_L1D", "STALL_BACKEND_MEMBOUND", 0, 0.25, false, NULL, NULL },
	{ "STALL_BACKEND_MEM", "STALL_BACKEND_MEMBOUND", 0, 0.25, false, NULL, NULL },
	{ "STALL_BACKEND_TLB", "STALL_BACKEND_MEMBOUND", 0, 0.25, false, NULL, NULL },
	{ "STALL_BACKEND_ST", "STALL_BACKEND_MEMBOUND", 0, 0.25, false, NULL, NULL },
	/* AMD: dispatch slots */
	{ "de_no_dispatch_per_slot.no_ops_from_frontend", "$fe", 1, 1, false, NULL, NULL },
	{ "de_no_dispatch_per_slot.backend_stalls", "$be", 1, 1, false, NULL, NULL },
	{ "de_no_dispatch_per_slot.smt_contention", "$smt", 1, 1, false, NULL, NULL },
	{ "ex_ret_ops", "$ret", 1, 1, false, NULL, NULL },
	{ "de_src_op_disp.all", "$bs", 1, 1, false, "ex_ret_ops", NULL },
	{ "de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x6", "$fe", 0.2, 0.9, true, NULL, NULL },
	{ "de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x8", "$fe", 0.2, 0.9, true, NULL, NULL },
	{ "ex_no_retire.not_complete", "$cycles", 0.1, 0.5, false, NULL, NULL },
	{ "ex_no_retire.load_not_complete", "ex_no_retire.not_complete", 0, 1, false, NULL, NULL },
	{ "ex_ret_ucode_ops", "ex_ret_ops", 0, 0.2, false, NULL, NULL },
};

/* The event a rule names in the model: "X" or "cpu_core/X/". */
static inline int kbv_event_slot(const struct td_model *m, const char *event)
{
	char wrapped[192];
	int slot = td_model_slot(m, event);
	if (slot >= 0 || strcmp(m->pmu, "cpu") == 0)
		return slot < (int)m->n_events ? slot : -1;
	snprintf(wrapped, sizeof(wrapped), "%s/%s/", m->pmu, event);
	slot = td_model_slot(m, wrapped);
	return slot < (int)m->n_events ? slot : -1;
}

struct kbv_shares {
	double cycles, slots, fe, bs, ret, be, smt;
};

static inline double kbv_ref(const struct td_model *m, const struct kbv_shares *s,
			     const double *values, const char *name)
{
	if (!name)
		return 0;
	if (name[0] == '$') {
		static const char *const names[] = { "cycles", "slots", "fe", "bs", "ret", "be", "smt" };
		const double *v = &s->cycles;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strcmp(name + 1, names[i]) == 0)
				return v[i];
	}
	int slot = kbv_event_slot(m, name);
	return slot >= 0 ? values[slot] : 0;
}

/* Evaluate every metric of the model in its order. */
static inline void kbv_evaluate(const struct td_model *m, double *values)
{
	for (size_t i = 0; i < m->n_metrics; i++)
		values[m->metrics[i].slot] = td_expr_eval(m->metrics[i].compiled, values);
}

static inline void kbv_apply(const struct td_model *m, struct kbv_rng *r,
			     const struct kbv_rule *rules, size_t n, const struct kbv_shares *s,
			     double width, double *values)
{
	for (size_t k = 0; k < n; k++) {
		int slot = kbv_event_slot(m, rules[k].event);
		if (slot < 0)
			continue;
		double v = kbv_ref(m, s, values, rules[k].base) * kbv_between(r, rules[k].lo, rules[k].hi);
		values[slot] = v / (rules[k].per_width ? width : 1) + kbv_ref(m, s, values, rules[k].plus) -
			       kbv_ref(m, s, values, rules[k].minus);
	}
}

/* Split slots into the shares, each at least 2% of the whole. */
static inline void kbv_split(struct kbv_rng *r, struct kbv_shares *s, bool with_smt)
{
	double w[5], sum = 0;
	int parts = with_smt ? 5 : 4;
	for (int i = 0; i < parts; i++)
		sum += w[i] = kbv_between(r, 0.1, 1);
	double *share = &s->fe;
	for (int i = 0; i < 5; i++)
		share[i] = i < parts ? s->slots * w[i] / sum : 0;
}

/*
 * Fill values[0..m->n_slots) with one plausible vector: events and
 * constants (#SMT_on, #has_pmem drawn at random; #slots as facts gives,
 * 0 = the model's width), then evaluate every metric.
 */
static inline void kbv_fill(const struct td_model *m, struct kbv_rng *r, unsigned slots_per_cycle,
			    double *values)
{
	struct td_host_facts facts = {
		.smt_on = kbv_unit(r) < 0.5,
		.has_pmem = kbv_unit(r) < 0.5,
		.slots_per_cycle = slots_per_cycle,
	};
	double width = slots_per_cycle ? slots_per_cycle : m->slots_per_cycle;
	struct kbv_shares s = { .cycles = exp(kbv_between(r, log(1e6), log(1e10))) };
	for (size_t i = 0; i < m->n_events; i++)
		values[i] = s.cycles * kbv_between(r, 0.005, 0.3);
	td_model_set_constants(m, &facts, values);

	s.slots = s.cycles * width;
	kbv_apply(m, r, kbv_cycle_rules, sizeof(kbv_cycle_rules) / sizeof(kbv_cycle_rules[0]), &s,
		  width, values);
	const struct td_metric_def *slots = td_model_metric(m, "tma_info_thread_slots");
	if (slots) {
		kbv_evaluate(m, values);
		s.slots = values[slots->slot];
	}
	kbv_split(r, &s, m->vendor == TD_VENDOR_AMD && facts.smt_on);
	kbv_apply(m, r, kbv_share_rules, sizeof(kbv_share_rules) / sizeof(kbv_share_rules[0]), &s,
		  width, values);
	/* Neoverse N2 before r0p3 counts one more stall slot every cycle (the
	 * reason its formulas subtract CPU_CYCLES). */
	if (strcmp(m->name, "neoverse-n2") == 0) {
		values[kbv_event_slot(m, "STALL_SLOT_FRONTEND")] += s.cycles;
		values[kbv_event_slot(m, "STALL_SLOT")] += s.cycles;
	}
	kbv_evaluate(m, values);
}

#endif
