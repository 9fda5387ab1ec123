// SPDX-License-Identifier: BSD-3-Clause
/*
 * The Top-Down engine: recorded per-thread counter deltas go through the
 * path the collector uses (a td_run with threads and intervals, then
 * td_engine_compute), and the rows are checked against values worked out
 * here from the vendors' formulas as written in kb/defs (Zen 4 and
 * Skylake-SP level 1), never from the engine itself.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine.h"
#include "kb.h"
#include "run.h"
#include "storage.h"

#define TOLERANCE 1e-12

static const struct td_kb *kb;

static int load_kb(void **state)
{
	char err[512];

	(void)state;
	kb = td_kb_load(err, sizeof(err));
	if (!kb)
		print_message("td_kb_load: %s\n", err);
	return kb ? 0 : -1;
}

static const struct td_model *model(const char *name)
{
	const struct td_model *m = td_kb_model(kb, name);

	if (!m)
		fail_msg("no model %s", name);
	return m;
}

static void assert_close(double got, double want)
{
	if (!(fabs(got - want) <= TOLERANCE * fmax(1, fabs(want))))
		fail_msg("got %.17g, want %.17g", got, want);
}

static struct td_run *new_run(const char *const *events, size_t n)
{
	struct td_run *run = td_run_new();

	assert_non_null(run);
	run->nr_events = n;
	for (size_t i = 0; i < n; i++)
		assert_non_null(run->event_names[i] = strdup(events[i]));
	return run;
}

static struct td_thread_row thread(uint32_t tid, uint32_t pid, const char *comm, uint64_t oncpu_ns,
				   const double *counts, size_t n, double running_fraction)
{
	struct td_thread_row t = { .tid = tid, .pid = pid, .oncpu_ns = oncpu_ns };

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	for (size_t i = 0; i < n; i++)
		t.counters[i] = (struct td_counter_value){ counts[i], running_fraction };
	return t;
}

static const struct td_metric_row *find_row(const struct td_run *run, enum td_metric_scope scope,
					    const char *key, int32_t seq, const char *path)
{
	const struct td_metric_row *found = NULL;

	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *r = &run->metrics[i];

		if (r->scope == scope && strcmp(r->scope_key, key) == 0 && r->interval_seq == seq &&
		    strcmp(r->path, path) == 0) {
			if (found)
				fail_msg("two rows for %s %s %d", key, path, seq);
			found = r;
		}
	}
	if (!found)
		fail_msg("no row for scope %d key %s seq %d path %s", scope, key, seq, path);
	return found;
}

static size_t output_index(const struct td_engine *e, const char *path_or_name)
{
	for (size_t i = 0; i < td_engine_output_count(e); i++) {
		const struct td_metric_def *d = td_engine_output(e, i);

		if (strcmp(d->path ? d->path : d->name, path_or_name) == 0)
			return i;
	}
	fail_msg("no output %s", path_or_name);
	return 0;
}

/* ---- Zen 4, level 1: per thread, per group, per process -------------------- */

static const char *const zen4_events[] = {
	"ls_not_halted_cyc",
	"de_no_dispatch_per_slot.no_ops_from_frontend",
	"de_no_dispatch_per_slot.backend_stalls",
	"de_no_dispatch_per_slot.smt_contention",
	"de_src_op_disp.all",
	"ex_ret_ops",
	"task-clock", /* not a model event: carried, used by nothing */
};
enum { CYC, NOFE, BE, SMT, DISP, RET, TASK, ZEN4_N };

static const char *const zen4_nodes[] = {
	"Frontend_Bound", "Bad_Speculation", "Backend_Bound", "SMT_Contention", "Retiring",
};

/* kb/defs/zen4.def: total_dispatch_slots = 6 * ls_not_halted_cyc, and each
 * level-1 node a d_ratio over it. */
static void zen4_by_hand(const double *c, double out[5])
{
	double slots = 6 * c[CYC];

	out[0] = c[NOFE] / slots;
	out[1] = (c[DISP] - c[RET]) / slots;
	out[2] = c[BE] / slots;
	out[3] = c[SMT] / slots;
	out[4] = c[RET] / slots;
}

static void add(double *sum, const double *c)
{
	for (int i = 0; i < ZEN4_N; i++)
		sum[i] += c[i];
}

static void assert_zen4_rows(const struct td_run *run, enum td_metric_scope scope, const char *key,
			     int32_t seq, const double *counts)
{
	double want[5];

	zen4_by_hand(counts, want);
	for (int i = 0; i < 5; i++) {
		const struct td_metric_row *r = find_row(run, scope, key, seq, zen4_nodes[i]);

		assert_close(r->value, want[i]);
		assert_int_equal(r->level, 1);
		assert_null(r->parent);
		assert_false(r->threshold_crossed); /* Zen 4 defines no thresholds */
		assert_close(r->confidence, 1);
	}
}

/* Recorded deltas of two processes, two intervals, one folded name shared. */
static const double main_whole[ZEN4_N] = { 1.0e9, 1.2e9, 2.0e9, 0.3e9, 2.5e9, 2.2e9, 400 };
static const double io1_whole[ZEN4_N] = { 2.0e8, 4.0e8, 3.0e8, 0.2e8, 5.0e8, 4.5e8, 80 };
static const double io2_whole[ZEN4_N] = { 3.0e8, 5.5e8, 4.0e8, 0.1e8, 6.5e8, 6.0e8, 120 };
static const double other_whole[ZEN4_N] = { 5.0e8, 2.0e8, 9.0e8, 0.5e8, 1.6e9, 1.3e9, 200 };
static const double main_iv0[ZEN4_N] = { 4.0e8, 5.0e8, 8.0e8, 1.0e8, 1.0e9, 0.9e9, 160 };
static const double io1_iv0[ZEN4_N] = { 1.0e8, 2.2e8, 1.4e8, 0.1e8, 2.6e8, 2.4e8, 40 };
static const double main_iv1[ZEN4_N] = { 6.0e8, 7.0e8, 1.2e9, 2.0e8, 1.5e9, 1.3e9, 240 };
static const double io2_iv1[ZEN4_N] = { 3.0e8, 5.5e8, 4.0e8, 0.1e8, 6.5e8, 6.0e8, 120 };
static const double other_iv1[ZEN4_N] = { 5.0e8, 2.0e8, 9.0e8, 0.5e8, 1.6e9, 1.3e9, 200 };

static struct td_run *zen4_run(void)
{
	struct td_run *run = new_run(zen4_events, ZEN4_N);

	run->nr_threads = 4;
	run->threads = calloc(4, sizeof(*run->threads));
	run->threads[0] = thread(100, 100, "main", 400, main_whole, ZEN4_N, 1);
	run->threads[1] = thread(101, 100, "io_thd_1", 80, io1_whole, ZEN4_N, 1);
	run->threads[2] = thread(102, 100, "io_thd_2", 120, io2_whole, ZEN4_N, 1);
	run->threads[3] = thread(201, 200, "io_thd_1", 200, other_whole, ZEN4_N, 1);
	run->nr_intervals = 2;
	run->intervals = calloc(2, sizeof(*run->intervals));
	run->intervals[0] = (struct td_interval){ .seq = 0, .nr_threads = 2 };
	run->intervals[0].threads = calloc(2, sizeof(struct td_thread_row));
	run->intervals[0].threads[0] = thread(100, 100, "main", 160, main_iv0, ZEN4_N, 1);
	run->intervals[0].threads[1] = thread(101, 100, "io_thd_1", 40, io1_iv0, ZEN4_N, 1);
	run->intervals[1] = (struct td_interval){ .seq = 1, .nr_threads = 3 };
	run->intervals[1].threads = calloc(3, sizeof(struct td_thread_row));
	run->intervals[1].threads[0] = thread(100, 100, "main", 240, main_iv1, ZEN4_N, 1);
	run->intervals[1].threads[1] = thread(102, 100, "io_thd_2", 120, io2_iv1, ZEN4_N, 1);
	run->intervals[1].threads[2] = thread(201, 200, "io_thd_1", 200, other_iv1, ZEN4_N, 1);
	return run;
}

static struct td_engine *engine_for(const struct td_model *m, int depth, const struct td_run *run,
				    bool smt_on)
{
	struct td_host_facts facts = { .smt_on = smt_on };
	char err[256] = "";
	struct td_engine *e = td_engine_new(m, depth, (const char *const *)run->event_names,
					    run->nr_events, &facts, err, sizeof(err));

	if (!e)
		fail_msg("td_engine_new: %s", err);
	return e;
}

static void test_zen4_scopes(void **state)
{
	struct td_run *run = zen4_run();
	struct td_engine *e = engine_for(model("zen4"), 1, run, false);
	char err[256];
	double sum[ZEN4_N];

	(void)state;
	assert_int_equal(td_engine_output_count(e), 5); /* no Info metrics on Zen 4 */
	assert_int_equal(td_engine_compute(e, run, err, sizeof(err)), 0);
	/* spans x (threads + groups + processes) x 5 nodes:
	 * interval 0: 2 + 2 + 1, interval 1: 3 + 2 + 2, whole run: 4 + 2 + 2 */
	assert_int_equal(run->nr_metrics, (5 + 7 + 8) * 5);
	assert_int_equal(run->metrics[0].interval_seq, 0);
	assert_int_equal(run->metrics[run->nr_metrics - 1].interval_seq, -1);

	/* per thread */
	assert_zen4_rows(run, TD_SCOPE_THREAD, "100", -1, main_whole);
	assert_zen4_rows(run, TD_SCOPE_THREAD, "201", -1, other_whole);
	assert_zen4_rows(run, TD_SCOPE_THREAD, "101", 0, io1_iv0);
	assert_zen4_rows(run, TD_SCOPE_THREAD, "102", 1, io2_iv1);

	/* per group: io_thd_1, io_thd_2 of pid 100 and io_thd_1 of pid 200 */
	memset(sum, 0, sizeof(sum));
	add(sum, io1_whole);
	add(sum, io2_whole);
	add(sum, other_whole);
	assert_zen4_rows(run, TD_SCOPE_GROUP, "io_thd_*", -1, sum);
	assert_zen4_rows(run, TD_SCOPE_GROUP, "main", -1, main_whole);
	memset(sum, 0, sizeof(sum));
	add(sum, io2_iv1);
	add(sum, other_iv1);
	assert_zen4_rows(run, TD_SCOPE_GROUP, "io_thd_*", 1, sum);

	/* per process: summed counts, not averaged ratios */
	memset(sum, 0, sizeof(sum));
	add(sum, main_whole);
	add(sum, io1_whole);
	add(sum, io2_whole);
	assert_zen4_rows(run, TD_SCOPE_PROCESS, "100", -1, sum);
	assert_zen4_rows(run, TD_SCOPE_PROCESS, "200", -1, other_whole);
	memset(sum, 0, sizeof(sum));
	add(sum, main_iv0);
	add(sum, io1_iv0);
	assert_zen4_rows(run, TD_SCOPE_PROCESS, "100", 0, sum);

	/* summing counts is not averaging ratios: the process differs from the
	 * mean of its threads' Frontend_Bound */
	double v[5], mean = 0;
	const double *threads[] = { main_whole, io1_whole, io2_whole };

	for (int t = 0; t < 3; t++) {
		zen4_by_hand(threads[t], v);
		mean += v[0] / 3;
	}
	assert_true(fabs(find_row(run, TD_SCOPE_PROCESS, "100", -1, "Frontend_Bound")->value - mean) >
		    1e-3);
	td_engine_free(e);
	td_run_free(run);
}

static bool run_holds(const struct td_run *run, const char *s)
{
	for (size_t i = 0; i < run->strings.count; i++)
		if (run->strings.keys[i] == s)
			return true;
	return false;
}

/*
 * Every row's strings are the run's own (not the model's, not the
 * engine's), one copy per distinct text: 5 level-1 paths (no parents) and
 * the keys 100 101 102 201 (tids), main io_thd_* (groups), 100 200 (pids).
 */
static void test_rows_share_run_strings(void **state)
{
	struct td_run *run = zen4_run();
	struct td_engine *e = engine_for(model("zen4"), 1, run, false);
	char err[256];

	(void)state;
	assert_int_equal(td_engine_compute(e, run, err, sizeof(err)), 0);
	assert_int_equal(run->strings.count, 5 + 7);
	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *r = &run->metrics[i];

		assert_true(run_holds(run, r->scope_key));
		assert_true(run_holds(run, r->path));
		assert_null(r->parent);
		assert_ptr_equal(r->path, run->metrics[i % 5].path);
	}
	assert_ptr_equal(find_row(run, TD_SCOPE_THREAD, "100", -1, "Retiring")->scope_key,
			 find_row(run, TD_SCOPE_PROCESS, "100", 0, "Retiring")->scope_key);
	td_engine_free(e);
	td_run_free(run);
}

static void assert_same_rows(const struct td_metric_row *a, const struct td_metric_row *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].scope, b[i].scope);
		assert_string_equal(a[i].scope_key, b[i].scope_key);
		assert_string_equal(a[i].path, b[i].path);
		assert_true(a[i].parent ? b[i].parent && !strcmp(a[i].parent, b[i].parent) : !b[i].parent);
		assert_int_equal(a[i].level, b[i].level);
		assert_memory_equal(&a[i].value, &b[i].value, sizeof(a[i].value));
		assert_memory_equal(&a[i].confidence, &b[i].confidence, sizeof(a[i].confidence));
		assert_int_equal(a[i].threshold_crossed, b[i].threshold_crossed);
	}
}

/* zen4_run's whole-run threads, also as its one interval. */
static struct td_run *one_interval_run(void)
{
	struct td_run *run = zen4_run();

	free(run->intervals[1].threads);
	run->nr_intervals = 1;
	run->intervals[0].nr_threads = run->nr_threads;
	free(run->intervals[0].threads);
	run->intervals[0].threads = calloc(run->nr_threads, sizeof(*run->threads));
	memcpy(run->intervals[0].threads, run->threads, run->nr_threads * sizeof(*run->threads));
	return run;
}

/*
 * A run whose one interval is the whole run: the whole-run rows are the
 * interval's, the same as computing them, and a count that differs between
 * the two spans is not taken for the same.
 */
static void test_one_interval_run(void **state)
{
	struct td_run *run = one_interval_run(), *alone = zen4_run(), *differs = one_interval_run();
	struct td_engine *e = engine_for(model("zen4"), 3, run, false);
	char err[256];
	size_t half;

	(void)state;
	/* alone: the same threads as a run without intervals */
	free(alone->intervals[0].threads);
	free(alone->intervals[1].threads);
	alone->nr_intervals = 0;
	assert_int_equal(td_engine_compute(e, run, err, sizeof(err)), 0);
	assert_int_equal(td_engine_compute(e, alone, err, sizeof(err)), 0);
	half = run->nr_metrics / 2;
	assert_int_equal(run->nr_metrics, 2 * alone->nr_metrics);
	for (size_t i = 0; i < half; i++) {
		assert_int_equal(run->metrics[i].interval_seq, 0);
		assert_int_equal(run->metrics[half + i].interval_seq, -1);
	}
	assert_same_rows(run->metrics, run->metrics + half, half);
	assert_same_rows(run->metrics + half, alone->metrics, half);

	/* thread 101 counted more cycles over the whole run than in the interval */
	differs->threads[1].counters[CYC].value *= 2;
	assert_int_equal(td_engine_compute(e, differs, err, sizeof(err)), 0);
	assert_true(find_row(differs, TD_SCOPE_THREAD, "101", -1, "Retiring")->value <
		    find_row(differs, TD_SCOPE_THREAD, "101", 0, "Retiring")->value);
	assert_close(find_row(differs, TD_SCOPE_THREAD, "101", 0, "Retiring")->value,
		     find_row(run, TD_SCOPE_THREAD, "101", 0, "Retiring")->value);
	td_engine_free(e);
	td_run_free(run);
	td_run_free(alone);
	td_run_free(differs);
}

/* The rows survive storage as given: NaN as NULL and back. */
static void test_rows_store(void **state)
{
	char path[] = "/tmp/td-test-engine-XXXXXX", err[512];
	int fd = mkstemp(path);
	struct td_run *run = zen4_run(), *back = NULL;
	struct td_engine *e = engine_for(model("zen4"), 1, run, false);
	struct td_store *store;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	run->collector = strdup("bpf");
	run->process = strdup("test");
	run->threads[1].counters[CYC].value = NAN; /* a thread whose cycles never ran */
	run->threads[1].counters[CYC].running_fraction = 0;
	assert_int_equal(td_engine_compute(e, run, err, sizeof(err)), 0);
	store = td_store_open(&(struct td_store_config){ .path = path }, err, sizeof(err));
	assert_non_null(store);
	assert_int_equal(td_store_write_run(store, run, err, sizeof(err)), 0);
	assert_int_equal(td_store_read_run(store, run->id, &back, err, sizeof(err)), 0);
	assert_int_equal(back->nr_metrics, run->nr_metrics);
	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *a = &run->metrics[i], *b = &back->metrics[i];

		assert_int_equal(a->scope, b->scope);
		assert_string_equal(a->scope_key, b->scope_key);
		assert_string_equal(a->path, b->path);
		assert_int_equal(a->interval_seq, b->interval_seq);
		assert_true(isnan(a->value) ? isnan(b->value) : a->value == b->value);
		assert_true(a->confidence == b->confidence);
	}
	assert_true(isnan(find_row(back, TD_SCOPE_THREAD, "101", -1, "Retiring")->value));
	assert_close(find_row(back, TD_SCOPE_THREAD, "101", -1, "Retiring")->confidence, 0);
	td_run_free(back);
	td_store_close(store);
	unlink(path);
	td_engine_free(e);
	td_run_free(run);
}

/* ---- Skylake-SP, level 1 by hand --------------------------------------------- */

static const char *const skx_events[] = {
	"CPU_CLK_UNHALTED.THREAD",	   "IDQ_UOPS_NOT_DELIVERED.CORE",
	"UOPS_ISSUED.ANY",		   "UOPS_RETIRED.RETIRE_SLOTS",
	"INT_MISC.RECOVERY_CYCLES",	   "INST_RETIRED.ANY",
	"UOPS_RETIRED.MACRO_FUSED",	   "INT_MISC.RECOVERY_CYCLES_ANY",
	"CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE", "CPU_CLK_UNHALTED.REF_XCLK",
};
enum { THR, IDQ, ISSUED, RSLOTS, RECOV, INST, FUSED, RECOV_ANY, OTA, XCLK, SKX_N };

struct skx_l1 {
	double fe, bad, be, ret, heavy;
};

/*
 * kb/defs/skx.def: slots = 4 * core clocks; core clocks are the thread's
 * with SMT off, THREAD / 2 * (1 + ONE_THREAD_ACTIVE / REF_XCLK) with SMT on,
 * where recovery cycles are INT_MISC.RECOVERY_CYCLES_ANY / 2.
 */
static struct skx_l1 skx_by_hand(const double *c, bool smt_on)
{
	double core_clks = smt_on ? c[THR] / 2 * (1 + c[OTA] / c[XCLK]) : c[THR];
	double slots = 4 * core_clks, recovery = smt_on ? c[RECOV_ANY] / 2 : c[RECOV];
	struct skx_l1 v;

	v.fe = c[IDQ] / slots;
	v.bad = (c[ISSUED] - c[RSLOTS] + 4 * recovery) / slots;
	v.ret = c[RSLOTS] / slots;
	v.be = 1 - v.fe - (c[ISSUED] + 4 * recovery) / slots;
	v.heavy = (c[RSLOTS] + c[FUSED] - c[INST]) / slots;
	return v;
}

static void eval_vector(const struct td_engine *e, const double *counts, size_t n, double fraction,
			struct td_metric_value *out)
{
	struct td_counter_value c[TD_MAX_EVENTS];
	double *scratch = calloc(td_engine_scratch_size(e), sizeof(*scratch));

	for (size_t i = 0; i < n; i++)
		c[i] = (struct td_counter_value){ counts[i], fraction };
	td_engine_eval(e, c, scratch, out);
	free(scratch);
}

static void test_skx_by_hand(void **state)
{
	static const double counts[SKX_N] = {
		4.0e9, 5.1e9, 7.3e9, 6.2e9, 1.1e8, 5.5e9, 1.0e9, 2.3e8, 1.0e9, 1.3e9,
	};
	struct td_run *run = new_run(skx_events, SKX_N);
	struct td_metric_value out[128];

	(void)state;
	for (int smt = 0; smt <= 1; smt++) {
		struct td_engine *e = engine_for(model("skx"), 2, run, smt);
		struct skx_l1 want = skx_by_hand(counts, smt);

		eval_vector(e, counts, SKX_N, 1, out);
		assert_close(out[output_index(e, "Frontend_Bound")].value, want.fe);
		assert_close(out[output_index(e, "Bad_Speculation")].value, want.bad);
		assert_close(out[output_index(e, "Backend_Bound")].value, want.be);
		assert_close(out[output_index(e, "Retiring")].value, want.ret);
		assert_close(out[output_index(e, "Retiring.Heavy_Operations")].value, want.heavy);
		assert_close(want.fe + want.bad + want.be + want.ret, 1);
		/* Info: IPC = INST_RETIRED.ANY / CPU_CLK_UNHALTED.THREAD, CPI its inverse */
		assert_close(out[output_index(e, "tma_info_thread_ipc")].value, counts[INST] / counts[THR]);
		assert_close(out[output_index(e, "tma_info_thread_cpi")].value, counts[THR] / counts[INST]);
		/* Thresholds, by the rules in skx.def: fe > 0.15, bad > 0.15, be > 0.2,
		 * retiring > 0.7 | heavy > 0.1 */
		assert_int_equal(out[output_index(e, "Frontend_Bound")].threshold_crossed, want.fe > 0.15);
		assert_int_equal(out[output_index(e, "Bad_Speculation")].threshold_crossed, want.bad > 0.15);
		assert_int_equal(out[output_index(e, "Backend_Bound")].threshold_crossed, want.be > 0.2);
		assert_int_equal(out[output_index(e, "Retiring")].threshold_crossed,
				 want.ret > 0.7 || want.heavy > 0.1);
		td_engine_free(e);
	}
	/* the numbers above cross some thresholds and not others */
	struct skx_l1 v = skx_by_hand(counts, false);

	assert_true(v.fe > 0.15 && v.ret < 0.7 && v.heavy > 0.1 && v.bad < 0.15);
	td_run_free(run);
}

/* The tree comes in order: level-1 nodes in pipeline order, each followed
 * by its subtree; every node to the depth is there. */
static void test_tree_order(void **state)
{
	const struct td_model *m = model("skx");
	struct td_run *run = new_run(skx_events, SKX_N);
	struct td_engine *e = engine_for(m, 3, run, false);
	const char *roots[4] = { 0 };
	size_t n_roots = 0, n_tree = 0;

	(void)state;
	for (size_t i = 0; i < td_engine_output_count(e); i++) {
		const struct td_metric_def *d = td_engine_output(e, i), *prev;

		if (d->kind != TD_METRIC_TREE) {
			assert_int_equal(d->kind, TD_METRIC_INFO);
			continue;
		}
		n_tree++;
		assert_true(d->level <= 3);
		if (d->level == 1) {
			assert_true(n_roots < 4);
			roots[n_roots++] = d->node;
			continue;
		}
		/* the nearest earlier node one level up is the parent */
		for (size_t k = i; k-- > 0;) {
			prev = td_engine_output(e, k);
			if (prev->kind == TD_METRIC_TREE && prev->level == d->level - 1) {
				assert_string_equal(prev->name, d->parent);
				break;
			}
		}
	}
	assert_string_equal(roots[0], "Frontend_Bound");
	assert_string_equal(roots[1], "Bad_Speculation");
	assert_string_equal(roots[2], "Backend_Bound");
	assert_string_equal(roots[3], "Retiring");
	size_t want = 0;

	for (size_t i = 0; i < m->n_metrics; i++)
		want += m->metrics[i].kind == TD_METRIC_TREE && m->metrics[i].level <= 3;
	assert_int_equal(n_tree, want);
	td_engine_free(e);
	td_run_free(run);
}

/* Info metrics appear when the run counted their events. */
static void test_info_needs_events(void **state)
{
	static const char *const no_inst[] = { "CPU_CLK_UNHALTED.THREAD", "IDQ_UOPS_NOT_DELIVERED.CORE" };
	struct td_engine *e = td_engine_new(model("skx"), 1, no_inst, 2, NULL, NULL, 0);

	(void)state;
	assert_non_null(e);
	for (size_t i = 0; i < td_engine_output_count(e); i++)
		assert_string_not_equal(td_engine_output(e, i)->name, "tma_info_thread_ipc");
	td_engine_free(e);
}

/* ---- undefined values ------------------------------------------------------- */

static void test_nan_propagation(void **state)
{
	static const char *const missing_ret[] = {
		"ls_not_halted_cyc", "de_no_dispatch_per_slot.no_ops_from_frontend",
		"de_no_dispatch_per_slot.backend_stalls", "de_src_op_disp.all",
	};
	const double counts[] = { 1e9, 2e9, 1.5e9, 3e9 };
	struct td_run *run = new_run(missing_ret, 4);
	struct td_engine *e = engine_for(model("zen4"), 1, run, false);
	struct td_metric_value out[16];

	(void)state;
	eval_vector(e, counts, 4, 1, out);
	assert_close(out[output_index(e, "Frontend_Bound")].value, 2e9 / 6e9);
	/* ex_ret_ops was not counted: every node that needs it is NaN, not 0 */
	assert_true(isnan(out[output_index(e, "Retiring")].value));
	assert_true(isnan(out[output_index(e, "Bad_Speculation")].value));
	assert_true(isnan(out[output_index(e, "SMT_Contention")].value));
	/* a value its missing events leave undefined has confidence 0 */
	assert_close(out[output_index(e, "SMT_Contention")].confidence, 0);
	assert_true(td_metric_low_confidence(out[output_index(e, "SMT_Contention")].confidence));

	/* no cycles at all: divisions by zero are NaN, never inf or 0 */
	const double idle[] = { 0, 0, 0, 0 };

	eval_vector(e, idle, 4, 1, out);
	for (size_t i = 0; i < td_engine_output_count(e); i++) {
		assert_true(isnan(out[i].value));
		assert_false(out[i].threshold_crossed);
	}
	/* an event that never ran (NaN) likewise */
	const double never[] = { NAN, 2e9, 1.5e9, 3e9 };

	eval_vector(e, never, 4, 0, out);
	assert_true(isnan(out[output_index(e, "Frontend_Bound")].value));
	td_engine_free(e);
	td_run_free(run);
}

/*
 * An emulated Neoverse N2's PMU (qemu) counts cycles and nothing else of
 * level 1: the OP_RETIRED / OP_SPEC ratio is 0/0 and its nodes are
 * undefined, the others read shares of 0; the run says why once, naming
 * the events that counted 0.
 */
static void test_zero_counters_explained(void **state)
{
	static const char *const n2_events[] = {
		"CPU_CYCLES", "STALL_SLOT_FRONTEND", "STALL_SLOT_BACKEND", "STALL_SLOT", "OP_RETIRED", "OP_SPEC",
		"BR_MIS_PRED",
	};
	static const char *const n1_events[] = { "CPU_CYCLES", "STALL_FRONTEND", "STALL_BACKEND" };
	const double emulated[] = { 1e8, 0, 0, 0, 0, 0, 0 };
	struct td_run *run = new_run(n2_events, 7), *n1_run = new_run(n1_events, 3);
	struct td_engine *e = engine_for(model("neoverse-n2"), 1, run, false);
	struct td_engine *n1 = engine_for(model("neoverse-n1"), 1, n1_run, false);
	struct td_metric_value out[16];
	char why[1024];

	(void)state;
	run->nr_threads = 2;
	run->threads = calloc(2, sizeof(*run->threads));
	run->threads[0] = thread(1, 1, "main", 100, emulated, 7, 1);
	run->threads[1] = thread(2, 1, "io", 100, emulated, 7, 1);
	eval_vector(e, emulated, 7, 1, out);
	assert_true(isnan(out[output_index(e, "Retiring")].value));
	assert_true(isnan(out[output_index(e, "Bad_Speculation")].value));
	assert_close(out[output_index(e, "Backend_Bound")].value, 0); /* 0 over cycles is a number */
	assert_int_equal(td_engine_explain_undefined(e, run, why, sizeof(why)), 4);
	assert_string_equal(why, "Bad_Speculation, Retiring are n/a over the whole run: STALL_SLOT, OP_RETIRED, "
			    "OP_SPEC, BR_MIS_PRED counted 0 in every thread (a PMU counts 0 of an event it does not "
			    "implement, as an emulated CPU's does of most, and a ratio over 0 is undefined); "
			    "Frontend_Bound, Backend_Bound rest on STALL_SLOT_FRONTEND, BR_MIS_PRED, "
			    "STALL_SLOT_BACKEND, which counted 0 in every thread: a PMU that does not implement an "
			    "event counts 0 of it");

	/* one thread counted each event: nothing to say */
	for (int k = 1; k < 7; k++)
		run->threads[1].counters[k].value = 1e6;
	assert_int_equal(td_engine_explain_undefined(e, run, why, sizeof(why)), 0);
	assert_string_equal(why, "");

	/* never counted (running fraction 0) is another reason, said as such */
	run->threads[0].counters[5] = run->threads[1].counters[5] = (struct td_counter_value){ NAN, 0 };
	assert_int_equal(td_engine_explain_undefined(e, run, why, sizeof(why)), 2);
	assert_string_equal(why, "Bad_Speculation, Retiring are n/a over the whole run: OP_SPEC never counted "
			    "(their counter group had no turn in a window too short for every group, or no free counter in it)");

	/* no cycles at all: every node is undefined, and CPU_CYCLES is named */
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 7; k++)
			run->threads[i].counters[k] = (struct td_counter_value){ 0, 1 };
	assert_int_equal(td_engine_explain_undefined(e, run, why, sizeof(why)), 4);
	assert_non_null(strstr(why, "Frontend_Bound, Bad_Speculation, Backend_Bound, Retiring are n/a over the "
				    "whole run: CPU_CYCLES, STALL_SLOT_FRONTEND, "));

	/* Neoverse N1's cycle-based level 1 on the same PMU: two shares of 0, said so */
	n1_run->nr_threads = 1;
	n1_run->threads = calloc(1, sizeof(*n1_run->threads));
	n1_run->threads[0] = thread(1, 1, "main", 100, emulated, 3, 1);
	assert_int_equal(td_engine_explain_undefined(n1, n1_run, why, sizeof(why)), 2);
	assert_string_equal(why, "Frontend_Stalled_Cycles, Backend_Stalled_Cycles rest on STALL_FRONTEND, "
			    "STALL_BACKEND, which counted 0 in every thread: a PMU that does not implement an event "
			    "counts 0 of it");
	td_engine_free(e);
	td_engine_free(n1);
	td_run_free(run);
	td_run_free(n1_run);
}

/* ---- confidence ---------------------------------------------------------------- */

static void test_confidence(void **state)
{
	struct td_run *run = new_run(zen4_events, ZEN4_N);
	struct td_engine *e;
	char err[256];

	(void)state;
	run->nr_threads = 2;
	run->threads = calloc(2, sizeof(*run->threads));
	run->threads[0] = thread(1, 1, "w1", 3000, main_whole, ZEN4_N, 1);
	run->threads[1] = thread(2, 1, "w2", 1000, io1_whole, ZEN4_N, 1);
	/* ex_ret_ops was counted 40% of the time on thread 1 and 20% on thread 2 */
	run->threads[0].counters[RET].running_fraction = 0.4;
	run->threads[1].counters[RET].running_fraction = 0.2;
	run->threads[1].counters[NOFE].running_fraction = 0.6;
	e = engine_for(model("zen4"), 1, run, false);
	assert_int_equal(td_engine_compute(e, run, err, sizeof(err)), 0);

	const struct td_metric_row *ret1 = find_row(run, TD_SCOPE_THREAD, "1", -1, "Retiring");
	const struct td_metric_row *fe2 = find_row(run, TD_SCOPE_THREAD, "2", -1, "Frontend_Bound");
	const struct td_metric_row *be1 = find_row(run, TD_SCOPE_THREAD, "1", -1, "Backend_Bound");
	const struct td_metric_row *retp = find_row(run, TD_SCOPE_PROCESS, "1", -1, "Retiring");
	const struct td_metric_row *fep = find_row(run, TD_SCOPE_PROCESS, "1", -1, "Frontend_Bound");

	assert_close(ret1->confidence, 0.4);
	assert_true(td_metric_low_confidence(ret1->confidence));
	assert_close(fe2->confidence, 0.6);
	assert_false(td_metric_low_confidence(fe2->confidence));
	assert_close(be1->confidence, 1);
	/* summed: weighted by on-CPU time, 3000 and 1000 */
	assert_close(retp->confidence, (3000 * 0.4 + 1000 * 0.2) / 4000);
	assert_close(fep->confidence, (3000 * 1.0 + 1000 * 0.6) / 4000);
	/* the time counted: the confidence of the scope's on-CPU time, so that it adds up */
	assert_int_equal(ret1->counted_ns, 1200);
	assert_int_equal(fe2->counted_ns, 600);
	assert_int_equal(be1->counted_ns, 3000);
	assert_int_equal(retp->counted_ns, 3000 * 0.4 + 1000 * 0.2);
	assert_int_equal(fep->counted_ns, 3000 + 1000 * 0.6);
	assert_true(td_metric_low_confidence(retp->confidence));
	assert_false(td_metric_low_confidence(fep->confidence));
	assert_true(td_metric_low_confidence(NAN));
	assert_false(td_metric_low_confidence(0.5));
	td_engine_free(e);
	td_run_free(run);
}

/* ---- names and errors ------------------------------------------------------- */

static void test_group_names(void **state)
{
	static const struct { const char *comm, *group; } cases[] = {
		{ "io_thd_12", "io_thd_*" }, { "worker-1-22", "worker-*-*" }, { "1234", "*" },
		{ "main", "main" },	      { "", "" },			{ "x86_64", "x*_*" },
	};
	char out[TD_COMM_LEN], full[TD_COMM_LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		td_thread_group_name(cases[i].comm, out, sizeof(out));
		assert_string_equal(out, cases[i].group);
	}
	memcpy(full, "abcdefghijklmn12", TD_COMM_LEN); /* a full comm has no NUL */
	td_thread_group_name(full, out, sizeof(out));
	assert_string_equal(out, "abcdefghijklmn*");
	td_thread_group_name("io_thd_1", out, 4);
	assert_string_equal(out, "io_");
}

static void test_errors(void **state)
{
	static const char *const twice[] = { "ex_ret_ops", "ex_ret_ops" };
	char err[256] = "";
	struct td_run *run = zen4_run(), *other = new_run(twice, 1);
	struct td_engine *e;

	(void)state;
	assert_null(td_engine_new(model("zen4"), 0, twice, 1, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "depth"));
	assert_null(td_engine_new(model("zen4"), 5, twice, 1, NULL, err, sizeof(err)));
	assert_null(td_engine_new(NULL, 1, twice, 1, NULL, err, sizeof(err)));
	assert_null(td_engine_new(model("zen4"), 1, twice, 2, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "ex_ret_ops"));
	/* an engine built for other events refuses the run and adds nothing */
	e = engine_for(model("zen4"), 1, other, false);
	assert_int_equal(td_engine_compute(e, run, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "events"));
	assert_int_equal(run->nr_metrics, 0);
	td_engine_free(e);
	td_engine_free(NULL);
	td_run_free(run);
	td_run_free(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zen4_scopes),
		cmocka_unit_test(test_rows_share_run_strings),
		cmocka_unit_test(test_one_interval_run),
		cmocka_unit_test(test_rows_store),
		cmocka_unit_test(test_skx_by_hand),
		cmocka_unit_test(test_tree_order),
		cmocka_unit_test(test_info_needs_events),
		cmocka_unit_test(test_nan_propagation),
		cmocka_unit_test(test_zero_counters_explained),
		cmocka_unit_test(test_confidence),
		cmocka_unit_test(test_group_names),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, load_kb, NULL);
}
