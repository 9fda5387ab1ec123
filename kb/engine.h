/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine: computes the Top-Down tree of one model from counted events.
 *
 * An engine binds a model of the kb to the events one run counted, in the
 * run's order (run->event_names, the kb's canonical names).  It is built
 * once per run: which metrics to evaluate, which to report, and where
 * each run event goes in the model's value vector are worked out here,
 * so evaluation itself only copies counts and runs the formulas the kb
 * compiled at load.  Nothing is allocated per evaluation.
 *
 * What is reported (the "outputs"), in tree order:
 *   - every tree node of level <= depth (NaN when its events are missing:
 *     the gap shows instead of the node disappearing);
 *   - every Info metric of the model the run's events define (it counted
 *     all of them, or those of the branch of an "#SMT_on" conditional taken).
 * A tree node's value is a fraction 0..1 (the metric's scale applied); an
 * Info metric's is the number it names (IPC, MPKI, ...).
 *
 * Undefined values.  A division by zero, a missing event or an event that
 * never ran gives NaN, which propagates; the engine never reports 0 or inf
 * in its place.  Renderers show NaN as "n/a".
 *
 * Confidence.  Each value carries the fraction of its span its events
 * were counted: the smallest running fraction over the run's events the
 * metric uses (directly or through helper metrics); 0 when the run has
 * none of them, or when the value is undefined for want of an event.
 * Below TD_CONFIDENCE_LOW the value is low-confidence and every output
 * must mark it (td_metric_low_confidence()).
 *
 * Stored rows (td_engine_compute).  For every span (each interval, then
 * the whole run with interval_seq -1; when the run's only interval has the
 * very threads and counts of the whole run, its rows are copied for the
 * whole run rather than computed twice) and every scope:
 *   TD_SCOPE_THREAD   one per thread row, scope_key the tid;
 *   TD_SCOPE_GROUP    threads whose names differ only in digits
 *                     (io_thd_1 .. io_thd_8), scope_key the name with each
 *                     run of digits folded to '*' ("io_thd_*");
 *   TD_SCOPE_PROCESS  one per pid, scope_key the pid;
 * one row per output: path = the dotted tree path, parent = the parent's
 * path (NULL at level 1), level 1..4; Info metrics have path = the
 * metric's name (tma_info_thread_ipc, ipc), parent NULL and level 0.
 * Groups and processes are computed from counters summed over their
 * threads, never from averaged ratios; a summed counter's running
 * fraction is the on-CPU-time-weighted mean of its threads' (the plain
 * mean when no thread has on-CPU time).
 */
#ifndef TD_ENGINE_H
#define TD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "kb.h"
#include "run.h"

#define TD_CONFIDENCE_LOW 0.5

struct td_engine;

/* One reported value. */
struct td_metric_value {
	double value;      /* scaled; NaN when undefined */
	double confidence; /* 0..1 */
	bool threshold_crossed;
};

/*
 * A model bound to the events a run counted: event_names[0..nr_events)
 * as the kb names them (td_model_event); names the model does not know
 * (task-clock, ...) are carried but feed no formula.  depth 1..4 (4: the
 * level-4 nodes that need no events beyond level 3).  facts: SMT, slots
 * override; NULL for SMT off and the model's slots.  NULL with err on a
 * bad depth, a repeated event name or no memory.
 */
struct td_engine *td_engine_new(const struct td_model *model, int depth,
				const char *const *event_names, size_t nr_events,
				const struct td_host_facts *facts, char *err, size_t errlen);
void td_engine_free(struct td_engine *e);

const struct td_model *td_engine_model(const struct td_engine *e);

/* The outputs, in tree order (level-1 nodes in pipeline order: frontend,
 * bad speculation, backend, others, retiring; each followed by its
 * subtree), then the Info metrics. */
size_t td_engine_output_count(const struct td_engine *e);
const struct td_metric_def *td_engine_output(const struct td_engine *e, size_t i);

/* Doubles of scratch space td_engine_eval needs (the model's n_slots). */
size_t td_engine_scratch_size(const struct td_engine *e);

/*
 * Evaluates one counter vector: counters[i] belongs to event_names[i] of
 * td_engine_new.  values is scratch of td_engine_scratch_size() doubles;
 * out receives td_engine_output_count() values.  Does not allocate; one
 * engine may evaluate on several threads at once with separate scratch.
 */
void td_engine_eval(const struct td_engine *e, const struct td_counter_value *counters,
		    double *values, struct td_metric_value *out);

/*
 * Evaluates threads[0..n) taken together, their counters summed as for a
 * group or a process.  sum is scratch of as many counters as the engine
 * has events; values and out as for td_engine_eval.
 */
void td_engine_eval_sum(const struct td_engine *e, const struct td_thread_row *threads, size_t n,
			struct td_counter_value *sum, double *values, struct td_metric_value *out);

/*
 * What the run's counts leave unsaid, in one sentence in why: the outputs
 * that are undefined (NaN) with all of run's threads taken together, and
 * the events they use that counted 0 in every thread or were never
 * counted; then the tree nodes that have a value but rest on events that
 * counted 0 in every thread. A PMU counts 0 of an event it does not
 * implement (an emulated CPU's does of most): a ratio over it is
 * undefined, a share of it reads 0, and the run says so once rather than
 * leave a column of n/a or 0.0% unexplained. Info metrics are spoken of
 * only when undefined (no crypto instruction in a run is no news).
 * Returns how many outputs it speaks of; 0 leaves why "". -ENOMEM.
 */
int td_engine_explain_undefined(const struct td_engine *e, const struct td_run *run, char *why, size_t len);

/*
 * Appends to run->metrics the rows described above for every interval and
 * for the whole run.  The run's events must be the ones the engine was
 * built for (-EINVAL otherwise).  On failure (-ENOMEM) run->metrics is
 * left as it was before the call.  The rows' strings are the run's
 * (td_run_intern): each path, parent and scope key is stored once however
 * many rows use it.
 */
int td_engine_compute(const struct td_engine *e, struct td_run *run, char *err, size_t errlen);

/* Whether a value of this confidence must be marked (NaN counts as low). */
static inline bool td_metric_low_confidence(double confidence)
{
	return !(confidence >= TD_CONFIDENCE_LOW);
}

/*
 * The group key of a thread name: each run of digits becomes one '*'
 * ("io_thd_12" -> "io_thd_*").  out has room for TD_COMM_LEN * 2 bytes.
 */
void td_thread_group_name(const char *comm, char *out, size_t outlen);

#endif
