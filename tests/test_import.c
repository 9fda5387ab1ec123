// SPDX-License-Identifier: BSD-3-Clause
/*
 * topdown import: perf stat files of four vendors' machines (CSV and JSON,
 * aggregated, per CPU, per core, per interval and per thread) are imported
 * through the command, and the stored level-1 values are compared with
 * values worked out here from the counts written in the files and the
 * vendors' formulas.  Malformed input must name its line and store
 * nothing.
 */
#include <errno.h>
#include <fcntl.h>
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

#include <jansson.h>

#include "commands.h"
#include "engine.h"
#include "import.h"
#include "kb.h"
#include "storage.h"

#define DATA "tests/data/import/"

static char db_path[64];
static char stderr_text[4096];
static char stdout_text[65536];
static char import_case[32]; /* the label of the latest import: case=N */

static int make_db(void **state)
{
	int fd;

	(void)state;
	snprintf(db_path, sizeof(db_path), "/tmp/td-test-import-XXXXXX");
	fd = mkstemp(db_path);
	if (fd < 0)
		return -1;
	close(fd);
	unlink(db_path); /* the store creates it */
	return 0;
}

static int remove_db(void **state)
{
	(void)state;
	unlink(db_path);
	return 0;
}

static const struct td_model *model(const char *name)
{
	char err[256];
	const struct td_kb *kb = td_kb_load(err, sizeof(err));
	const struct td_model *m = kb ? td_kb_model(kb, name) : NULL;

	if (!m)
		fail_msg("no model %s", name);
	return m;
}

static void assert_close(double got, double want)
{
	if (!(fabs(got - want) <= 1e-12 * fmax(1, fabs(want))))
		fail_msg("got %.17g, want %.17g", got, want);
}

/* Runs `topdown import ARGS... --db db_path` with stdout kept in
 * stdout_text and stderr in stderr_text.  Returns the exit code. */
static int import_cmd(const char *first, ...)
{
	char *argv[32] = { "import" };
	int argc = 1, rc, saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
	FILE *errf = tmpfile(), *outf = tmpfile();
	va_list ap;
	size_t n;

	va_start(ap, first);
	for (const char *a = first; a && argc < 28; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	static int imports;

	snprintf(import_case, sizeof(import_case), "case=%d", ++imports);
	argv[argc++] = "--label";
	argv[argc++] = import_case;
	argv[argc++] = "--db";
	argv[argc++] = db_path;
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(outf), STDOUT_FILENO);
	dup2(fileno(errf), STDERR_FILENO);
	rc = td_cmd_import(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	close(saved_out);
	close(saved_err);
	rewind(outf);
	n = fread(stdout_text, 1, sizeof(stdout_text) - 1, outf);
	stdout_text[n] = '\0';
	fclose(outf);
	rewind(errf);
	n = fread(stderr_text, 1, sizeof(stderr_text) - 1, errf);
	stderr_text[n] = '\0';
	fclose(errf);
	return rc;
}

static size_t stored_runs(void)
{
	char err[512];
	struct td_store *store = td_store_open(&(struct td_store_config){ .path = db_path }, err,
					       sizeof(err));
	struct td_run_summary *runs = NULL;
	size_t count = 0;

	assert_non_null(store);
	assert_int_equal(td_store_list_runs(store, NULL, &runs, &count, err, sizeof(err)), 0);
	td_run_summaries_free(runs, count);
	td_store_close(store);
	return count;
}

/* The run the latest import stored, read back. */
static struct td_run *last_run(void)
{
	char err[512];
	struct td_labels labels;
	struct td_store *store = td_store_open(&(struct td_store_config){ .path = db_path }, err,
					       sizeof(err));
	struct td_run_summary *runs = NULL;
	struct td_run *run = NULL;
	size_t count = 0;

	assert_non_null(store);
	td_labels_init(&labels);
	assert_int_equal(td_labels_parse_arg(&labels, import_case, err, sizeof(err)), 0);
	assert_int_equal(td_store_list_runs(store, &(struct td_run_filter){ .labels = &labels }, &runs,
					    &count, err, sizeof(err)), 0);
	assert_int_equal(count, 1);
	assert_int_equal(td_store_read_run(store, runs[0].id, &run, err, sizeof(err)), 0);
	td_run_summaries_free(runs, count);
	td_labels_free(&labels);
	td_store_close(store);
	return run;
}

static const struct td_metric_row *row(const struct td_run *run, enum td_metric_scope scope,
				       const char *key, int32_t seq, const char *path)
{
	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *r = &run->metrics[i];

		if (r->scope == scope && strcmp(r->scope_key, key) == 0 && r->interval_seq == seq &&
		    strcmp(r->path, path) == 0)
			return r;
	}
	fail_msg("no row %s %d %s", key, seq, path);
	return NULL;
}

/* Level 1 of the process over the whole run, in pipeline order. */
struct l1 {
	double fe, bad, be, ret;
};

static void assert_l1(const struct td_run *run, const char *pid, int32_t seq, struct l1 want)
{
	assert_close(row(run, TD_SCOPE_PROCESS, pid, seq, "Frontend_Bound")->value, want.fe);
	assert_close(row(run, TD_SCOPE_PROCESS, pid, seq, "Bad_Speculation")->value, want.bad);
	assert_close(row(run, TD_SCOPE_PROCESS, pid, seq, "Backend_Bound")->value, want.be);
	assert_close(row(run, TD_SCOPE_PROCESS, pid, seq, "Retiring")->value, want.ret);
}

static double sum(const double *v, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* ---- Skylake-SP: SMT on, aggregated ----------------------------------------- */

/*
 * skx-l1.csv (perf's own names) and skx-l1.json (lower case, cpu/.../,
 * raw event=/umask= and rNNNN forms, generic cycles and instructions) hold
 * the same counts.  skx formulas with SMT on: slots = 4 * THREAD / 2 *
 * (1 + ONE_THREAD_ACTIVE / REF_XCLK), recovery = RECOVERY_CYCLES_ANY / 2.
 */
static struct l1 skx_expected(void)
{
	double thread = 10023456789.0, one_active = 1234567890.0, ref_xclk = 3456789012.0;
	double idq = 9876543210.0, issued = 14567890123.0, retired = 12345678901.0;
	double recovery = 456789012.0 / 2;
	double slots = 4 * (thread / 2 * (1 + one_active / ref_xclk));

	return (struct l1){
		.fe = idq / slots,
		.bad = (issued - retired + 4 * recovery) / slots,
		.be = 1 - idq / slots - (issued + 4 * recovery) / slots,
		.ret = retired / slots,
	};
}

static void test_skx(void **state)
{
	const char *files[] = { DATA "skx-l1.csv", DATA "skx-l1.json" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		size_t before = stored_runs();
		struct td_run *run;

		assert_int_equal(import_cmd(files[i], "--cpu-model", "skylakex", "--label",
					    "git_branch=main", NULL), 0);
		assert_int_equal(stored_runs(), before + 1);
		run = last_run();
		assert_l1(run, "0", -1, skx_expected());
		assert_close(row(run, TD_SCOPE_PROCESS, "0", -1, "tma_info_thread_ipc")->value,
			     11223344556.0 / 10023456789.0);
		assert_string_equal(run->collector, "import");
		assert_string_equal(run->process, "skx-l1");
		assert_int_equal(run->level, 1);
		assert_string_equal(td_labels_get(&run->labels, "cpu_model"), "skx");
		assert_string_equal(td_labels_get(&run->labels, "collector"), "import");
		assert_string_equal(td_labels_get(&run->labels, "smt"), "on");
		assert_string_equal(td_labels_get(&run->labels, "git_branch"), "main");
		assert_string_equal(td_labels_get(&run->labels, "source"), files[i] + strlen(DATA));
		/* task-clock, 2004.17 ms in the CSV, is the thread's on-CPU time */
		assert_true(run->threads[0].oncpu_ns >= 2004170000 && run->threads[0].oncpu_ns <= 2004170312);
		td_run_free(run);
	}
	/* --smt off: the formulas then need INT_MISC.RECOVERY_CYCLES, absent */
	assert_int_equal(import_cmd(DATA "skx-l1.csv", "--cpu-model", "skx", "--smt", "off", NULL), 0);
	struct td_run *run = last_run();

	assert_true(isnan(row(run, TD_SCOPE_PROCESS, "0", -1, "Bad_Speculation")->value));
	assert_close(row(run, TD_SCOPE_PROCESS, "0", -1, "Retiring")->value,
		     12345678901.0 / (4 * 10023456789.0));
	td_run_free(run);
}

/* ---- Sapphire Rapids: per CPU, multiplexed ----------------------------------- */

static const double spr_slots[] = { 12000000000, 11800000000, 9600000000, 12400000000 };
static const double spr_ret[] = { 4800000000, 4130000000, 2880000000, 5580000000 };
static const double spr_bad[] = { 1200000000, 1298000000, 1056000000, 992000000 };
static const double spr_fe[] = { 3000000000, 3304000000, 2208000000, 3100000000 };
static const double spr_be[] = { 3000000000, 3068000000, 3456000000, 2728000000 };
static const double spr_drop[] = { 60000000, 71000000, 38000000, 55000000 };

/*
 * spr: the topdown-* metric events normalised by their sum; Frontend_Bound
 * less INT_MISC.UOP_DROPPING / TOPDOWN.SLOTS; Bad_Speculation the rest.
 * Per-CPU counts add up.
 */
static struct l1 spr_expected(void)
{
	double fe = sum(spr_fe, 4), bad = sum(spr_bad, 4), ret = sum(spr_ret, 4), be = sum(spr_be, 4);
	double all = fe + bad + ret + be;
	struct l1 v = {
		.fe = fe / all - sum(spr_drop, 4) / sum(spr_slots, 4),
		.be = be / all,
		.ret = ret / all,
	};

	v.bad = fmax(1 - (v.fe + v.be + v.ret), 0);
	return v;
}

static void test_spr(void **state)
{
	const char *files[] = { DATA "spr-l1-percpu.csv", DATA "spr-l1-percpu.json" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct td_run *run;

		assert_int_equal(import_cmd(files[i], "--cpu-model", "spr", NULL), 0);
		run = last_run();
		assert_l1(run, "0", -1, spr_expected());
		assert_int_equal(run->level, 1); /* only level-1 events were counted */
		/* UOP_DROPPING ran 40%, 45%, 45%, 40% of equal enabled times */
		const struct td_metric_row *fe = row(run, TD_SCOPE_PROCESS, "0", -1, "Frontend_Bound");
		const struct td_metric_row *be = row(run, TD_SCOPE_PROCESS, "0", -1, "Backend_Bound");

		assert_true(fabs(fe->confidence - 0.425) < 1e-6);
		assert_true(td_metric_low_confidence(fe->confidence));
		assert_close(be->confidence, 1);
		assert_true(fe->threshold_crossed); /* 24.9% > 15% */
		td_run_free(run);
	}
}

/* ---- Neoverse V2: intervals, and per thread ---------------------------------- */

enum { CYC, SSF, SSB, SS, OPR, OPS, BMP, V2_N };

static const double v2_iv[3][V2_N] = {
	{ 2500000000, 3000000000, 5200000000, 9000000000, 8800000000, 9600000000, 12000000 },
	{ 2480000000, 3100000000, 5000000000, 8900000000, 8750000000, 9700000000, 13000000 },
	{ 2510000000, 2900000000, 5400000000, 9100000000, 8900000000, 9500000000, 11500000 },
};

/* neoverse-v2 with #slots = 8 (values x 100 in Arm's formulas, scale 0.01). */
static struct l1 v2_expected(const double *c)
{
	double width = c[CYC] * 8;

	return (struct l1){
		.fe = c[SSF] / width - c[BMP] / c[CYC],
		.be = c[SSB] / width - c[BMP] * 3 / c[CYC],
		.ret = c[OPR] / c[OPS] * (1 - c[SS] / width),
		.bad = (1 - c[OPR] / c[OPS]) * (1 - c[SS] / width) + c[BMP] * 4 / c[CYC],
	};
}

static void test_neoverse_v2_intervals(void **state)
{
	double whole[V2_N] = { 0 };
	struct td_run *run;

	(void)state;
	assert_int_equal(import_cmd(DATA "neoverse-v2-l1-interval.csv", "--cpu-model", "neoverse-v2",
				    NULL), 0);
	run = last_run();
	assert_int_equal(run->nr_intervals, 3);
	for (int i = 0; i < 3; i++) {
		assert_l1(run, "0", i, v2_expected(v2_iv[i]));
		for (int e = 0; e < V2_N; e++)
			whole[e] += v2_iv[i][e];
	}
	assert_l1(run, "0", -1, v2_expected(whole));
	/* the intervals are 1 s apart: the run spans their timestamps */
	assert_true(run->ended_ns - run->started_ns == 3000336699);
	td_run_free(run);
}

static void test_neoverse_v2_threads(void **state)
{
	/* redis-server-4242, io_thd_1-4250, io_thd_2-4251 as in the file */
	static const double t[3][V2_N] = {
		{ 7490000000, 9000000000, 15600000000, 27000000000, 26450000000, 28800000000, 36500000 },
		{ 1872500000, 2250000000, 3900000000, 6750000000, 6612500000, 7200000000, 9125000 },
		{ 3745000000, 4500000000, 7800000000, 13500000000, 13225000000, 14400000000, 18250000 },
	};
	double io[V2_N], all[V2_N];
	struct td_run *run;

	(void)state;
	assert_int_equal(import_cmd(DATA "neoverse-v2-l1-per-thread.json", "--cpu-model", "v2",
				    "--process", "redis-server", NULL), 0);
	run = last_run();
	assert_string_equal(run->process, "redis-server");
	assert_int_equal(run->nr_threads, 3);
	for (int e = 0; e < V2_N; e++) {
		io[e] = t[1][e] + t[2][e];
		all[e] = t[0][e] + io[e];
	}
	struct l1 want = v2_expected(t[1]);

	assert_close(row(run, TD_SCOPE_THREAD, "4250", -1, "Frontend_Bound")->value, want.fe);
	want = v2_expected(io);
	assert_close(row(run, TD_SCOPE_GROUP, "io_thd_*", -1, "Backend_Bound")->value, want.be);
	assert_l1(run, "4242", -1, v2_expected(all)); /* keyed by the main thread */
	for (size_t i = 0; i < run->nr_threads; i++)
		if (run->threads[i].tid == 4250) {
			assert_string_equal(run->threads[i].comm, "io_thd_1");
			assert_int_equal(run->threads[i].oncpu_ns, 750000000);
		}
	td_run_free(run);
}

/* ---- Zen 4: aggregated CSV and per-core JSON ---------------------------------- */

/* --json prints the same tree as data. */
static void test_json_output(void **state)
{
	json_error_t jerr;
	json_t *doc, *tree;
	struct l1 want = skx_expected();
	struct td_run *run;

	(void)state;
	assert_int_equal(import_cmd(DATA "skx-l1.csv", "--cpu-model", "skx", "--json", NULL), 0);
	doc = json_loads(stdout_text, 0, &jerr);
	if (!doc)
		fail_msg("not JSON (%s): %s", jerr.text, stdout_text);
	run = last_run();
	assert_string_equal(json_string_value(json_object_get(doc, "run_id")), run->id);
	assert_string_equal(json_string_value(json_object_get(doc, "model")), "skx");
	assert_true(json_is_true(json_object_get(doc, "smt")));
	tree = json_object_get(doc, "tree");
	assert_int_equal(json_array_size(tree), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(tree, 0), "path")),
			    "Frontend_Bound");
	assert_close(json_real_value(json_object_get(json_array_get(tree, 0), "value")), want.fe);
	assert_close(json_real_value(json_object_get(json_array_get(tree, 3), "value")), want.ret);
	assert_true(json_array_size(json_object_get(doc, "info")) >= 2);
	assert_true(json_array_size(json_object_get(doc, "notes")) >= 1);
	json_decref(doc);
	td_run_free(run);
}

static void test_zen4(void **state)
{
	/* cycles, no_ops_from_frontend, backend_stalls, smt_contention, de_src_op_disp.all, ex_ret_ops */
	double slots = 6 * 6000000000.0;
	struct l1 want = {
		.fe = 7200000000.0 / slots,
		.bad = (15600000000.0 - 13800000000.0) / slots,
		.be = 10800000000.0 / slots,
		.ret = 13800000000.0 / slots,
	};
	const char *files[] = { DATA "zen4-l1.csv", DATA "zen4-l1-percore.json" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct td_run *run;

		assert_int_equal(import_cmd(files[i], "--cpu-model", "amdzen4", NULL), 0);
		run = last_run();
		assert_l1(run, "0", -1, want);
		/* the printed tree: the five level-1 nodes with their percentages */
		assert_non_null(strstr(stdout_text, run->id));
		assert_non_null(strstr(stdout_text, "Frontend_Bound"));
		assert_non_null(strstr(stdout_text, "20.0%"));  /* 7.2e9 / 3.6e10 */
		assert_non_null(strstr(stdout_text, "38.3%"));  /* 1.38e10 / 3.6e10 */
		assert_close(row(run, TD_SCOPE_PROCESS, "0", -1, "SMT_Contention")->value,
			     1800000000.0 / slots);
		td_run_free(run);
	}
}

/* ---- malformed input: the line is named, nothing is stored -------------------- */

static char *write_temp(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/td-test-import-in-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void expect_failure(const char *text, const char *model_name, const char *message)
{
	size_t before = stored_runs();
	char *path = write_temp(text);

	assert_int_equal(import_cmd(path, "--cpu-model", model_name, NULL), TD_EXIT_USAGE);
	if (!strstr(stderr_text, message))
		fail_msg("stderr '%s' lacks '%s'", stderr_text, message);
	assert_non_null(strstr(stderr_text, path)); /* the file is named */
	assert_int_equal(stored_runs(), before);
	unlink(path);
}

#define GOOD_ZEN4 \
	"6000000000,,cycles,3000456789,100.00,,\n" \
	"7200000000,,de_no_dispatch_per_slot.no_ops_from_frontend,3000456789,100.00,,\n"

static void test_malformed(void **state)
{
	(void)state;
	expect_failure(GOOD_ZEN4 "abc,,ex_ret_ops,3000456789,100.00,,\n", "zen4",
		       "line 3: expected a count, '<not counted>' or '<not supported>' in field 1, got 'abc'");
	expect_failure("# comment\n" GOOD_ZEN4 "5,\n", "zen4", "line 4: expected at least 3 fields");
	expect_failure(GOOD_ZEN4 "5,,\n", "zen4",
		       "line 3: expected a unit and an event name after the count in field 1");
	expect_failure(GOOD_ZEN4 "5,,ex_ret_ops,300,150.00,,\n", "zen4",
		       "line 3: expected the percentage counted (0-100) in field 5, got '150.00'");
	expect_failure(GOOD_ZEN4 "CPU0,5,,ex_ret_ops,300,100.00,,\n", "zen4", "line 3: expected a count");
	expect_failure(GOOD_ZEN4 "5,,ex_ret_ops,/sys/fs/cgroup/x,300,100.00,,\n", "zen4",
		       "line 3: field 4 ('/sys/fs/cgroup/x') is not a run time; per-cgroup output");
	expect_failure(GOOD_ZEN4 "5 ex_ret_ops\n", "zen4", "line 3: no ',' between fields");
	expect_failure(GOOD_ZEN4 "{\"counter-value\" : \"5\", \"event\" : \"ex_ret_ops\"}\n", "zen4",
		       "line 3: a JSON object among CSV lines");
	expect_failure("{\"counter-value\" : \"5\", \"event\" : \"cycles\"}\n{\"counter-value\" : \n",
		       "zen4", "line 2: not a JSON object");
	expect_failure("{\"counter-value\" : \"5\", \"event\" : \"cycles\"}\n\n5,,cycles,3,100.00,,\n",
		       "zen4", "line 3: expected a JSON object like the lines before");
	expect_failure("{\"counter-value\" : \"5\", \"unit\" : \"\"}\n", "zen4",
		       "line 1: the JSON object has no \"event\" name");
	expect_failure("{\"unit\" : \"\"}\n", "zen4", "line 1: the JSON object has no \"event\" and no");
	expect_failure("{\"counter-value\" : \"lots\", \"event\" : \"cycles\"}\n", "zen4",
		       "line 1: \"counter-value\" must be a count");
	expect_failure("{\"counter-value\" : \"5\", \"event\" : \"cycles\", \"cgroup\" : \"/\"}\n",
		       "zen4", "line 1: per-cgroup output");
	expect_failure("{\"counter-value\" : \"5\", \"event\" : \"cycles\"}\n"
		       "{\"interval\" : 1.0, \"counter-value\" : \"5\", \"event\" : \"cycles\"}\n",
		       "zen4", "line 2: the count has a different layout");
	expect_failure("{\"counter-value\" : \"5\", \"event\" : \"cycles\", \"pcnt-running\" : 101}\n",
		       "zen4", "line 1: \"pcnt-running\" must be 0 to 100");
	expect_failure("{\"thread\" : \"nodash\", \"counter-value\" : \"5\", \"event\" : \"cycles\"}\n",
		       "zen4", "line 1: \"thread\" must be name-tid");
	expect_failure("# started on Sat Nov 21 08:00:00 2026\n\n", "zen4", "no event counts found");
	expect_failure("", "zen4", "no event counts found");
	/* found by fuzz_import: a start no int64 of nanoseconds holds */
	expect_failure("# started on Sat Nov 21 08:00:00 6026\n" GOOD_ZEN4, "zen4",
		       "line 1: the start time is past the year 2262");
	expect_failure("5,,task-clock,3,100.00,,\n", "zen4",
		       "the counts define no Top-Down node of model zen4");
	expect_failure("<not counted>,,cycles,0,100.00,,\n<not counted>,,ex_ret_ops,0,100.00,,\n",
		       "zen4", "define no Top-Down node");
}

static void test_nul_and_arguments(void **state)
{
	char path[] = "/tmp/td-test-import-nul-XXXXXX";
	int fd = mkstemp(path);
	size_t before;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "5,,cycles,3,100.00,,\n5,\0,x,3\n", 29), 29);
	close(fd);
	before = stored_runs();
	assert_int_equal(import_cmd(path, "--cpu-model", "zen4", NULL), TD_EXIT_USAGE);
	assert_non_null(strstr(stderr_text, "line 2: contains a NUL byte"));
	unlink(path);

	assert_int_equal(import_cmd(DATA "zen4-l1.csv", "--cpu-model", "zen9", NULL), 1);
	assert_non_null(strstr(stderr_text, "unknown --cpu-model 'zen9'; known models:"));
	assert_non_null(strstr(stderr_text, "skx"));
	assert_non_null(strstr(stderr_text, "neoverse-v2"));
	assert_int_equal(import_cmd(DATA "no-such-file.csv", "--cpu-model", "zen4", NULL), 1);
	assert_non_null(strstr(stderr_text, "no-such-file.csv"));
	assert_int_equal(import_cmd(DATA "zen4-l1.csv", NULL), TD_EXIT_USAGE);
	assert_non_null(strstr(stderr_text, "--cpu-model are required"));
	assert_int_equal(import_cmd(DATA "zen4-l1.csv", "--cpu-model", "zen4", "--smt", "maybe", NULL),
			 TD_EXIT_USAGE);
	assert_int_equal(import_cmd(DATA "zen4-l1.csv", "--cpu-model", "zen4", "--level", "5", NULL),
			 TD_EXIT_USAGE);
	assert_int_equal(import_cmd(DATA "zen4-l1.csv", "--cpu-model", "zen4", "--label", "=x", NULL),
			 TD_EXIT_USAGE);
	assert_int_equal(stored_runs(), before);
}

/*
 * Counts perf stat cannot have written: each is refused with its line,
 * the event and the range, and nothing is stored.  The largest count a
 * 64-bit counter holds, and msec fractions, still read.
 */
static struct td_perf_stat *parse(const char *text);

static void test_impossible_counts(void **state)
{
	static const struct {
		const char *count, *why;
	} bad[] = {
		{ "-5", "is negative" },
		{ "-0", "is negative" },
		{ "0x10", "is hexadecimal" },
		{ "inf", "is not a finite number" },
		{ "nan", "is not a finite number" },
		{ "1e30", "is above 2^64-1" },
		{ "1e400", "is above 2^64-1" },
		{ "18446744073709551616", "is above 2^64-1" },
		{ "000184467440737095516150", "is above 2^64-1" },
		{ "1e3", "is not a plain decimal number" },
		{ "+5", "is not a plain decimal number" },
	};
	char text[512], message[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), GOOD_ZEN4 "%s,,ex_ret_ops,3000456789,100.00,,\n", bad[i].count);
		snprintf(message, sizeof(message),
			 "line 3: count '%s' for ex_ret_ops %s; perf stat counts are whole numbers "
			 "from 0 to 2^64-1", bad[i].count, bad[i].why);
		expect_failure(text, "zen4", message);
		/* perf stat -j: the count as a string, as perf writes it */
		snprintf(text, sizeof(text),
			 "{\"counter-value\" : \"6000000000\", \"event\" : \"cycles\"}\n"
			 "{\"counter-value\" : \"%s\", \"event\" : \"ex_ret_ops\"}\n", bad[i].count);
		snprintf(message, sizeof(message), "line 2: count '%s' for ex_ret_ops %s", bad[i].count,
			 bad[i].why);
		expect_failure(text, "zen4", message);
	}
	/* a JSON number is checked as its text would be */
	expect_failure("{\"counter-value\" : -5, \"event\" : \"cycles\"}\n", "zen4",
		       "line 1: count '-5' for cycles is negative");
	expect_failure("{\"counter-value\" : 1e30, \"event\" : \"cycles\"}\n", "zen4",
		       "line 1: count '1e+30' for cycles is above 2^64-1");

	/* the edges that read: 2^64-1, a fraction of a msec, leading zeros */
	struct td_perf_stat *ps = parse("18446744073709551615,,cycles,3,100.00,,\n"
					"0012.50,msec,task-clock,3,100.00,,\n"
					"<not counted>,,ex_ret_ops,0,0.00,,\n");

	assert_close(ps->counts[0].value, 18446744073709551615.0);
	assert_close(ps->counts[1].value, 12.5);
	assert_true(isnan(ps->counts[2].value));
	td_perf_stat_free(ps);
}

/* The zen4-l1.csv counts of one thread, perf stat --per-thread style. */
#define ZEN4_THREAD(name) name ",6000000000,,cycles,3000456789,100.00,,\n" ZEN4_NO_CYCLES(name)
#define ZEN4_NO_CYCLES(name) \
	name ",7200000000,,de_no_dispatch_per_slot.no_ops_from_frontend,3000456789,100.00,,\n" \
	name ",10800000000,,de_src_op_disp.all,3000456789,100.00,,\n" \
	name ",13800000000,,ex_ret_ops,3000456789,100.00,,\n"
/* The same with an -I timestamp first on each line. */
#define ZEN4_THREAD_AT(t, name) ZEN4_THREAD(t "," name)
#define ZEN4_NO_CYCLES_AT(t, name) ZEN4_NO_CYCLES(t "," name)

/*
 * A thread without a count line for an event the other threads have
 * would be summed into its group and the process with mismatched
 * numerators and divisors: the file is refused, naming the thread's line.
 */
static void test_thread_missing_event(void **state)
{
	(void)state;
	expect_failure(ZEN4_THREAD("worker-11") ZEN4_NO_CYCLES("worker-12"), "zen4",
		       "line 5: thread worker-12 has no count for cycles in the run, which the file "
		       "counts elsewhere");
	/* per interval: the thread lacks it in the second interval only */
	expect_failure(ZEN4_THREAD_AT("1.0", "worker-11") ZEN4_NO_CYCLES_AT("2.0", "worker-11"),
		       "zen4", "line 5: thread worker-11 has no count for cycles in the interval at 2 s");
	/* no --per-thread: one interval without the line */
	expect_failure("1.0,6000000000,,cycles,1,100.00,,\n1.0,7200000000,,ex_ret_ops,1,100.00,,\n"
		       "2.0,7200000000,,ex_ret_ops,1,100.00,,\n",
		       "zen4", "line 3: the interval at 2 s has no count for cycles");
	/* "<not counted>" is a line: the thread is kept, its tree undefined as before */
	size_t before = stored_runs();
	char *path = write_temp(ZEN4_THREAD("worker-11") "worker-12,<not counted>,,cycles,0,0.00,,\n"
				ZEN4_NO_CYCLES("worker-12"));

	assert_int_equal(import_cmd(path, "--cpu-model", "zen4", NULL), 0);
	assert_int_equal(stored_runs(), before + 1);
	unlink(path);
	/* both threads complete: stored */
	path = write_temp(ZEN4_THREAD("worker-11") ZEN4_THREAD("worker-12"));
	assert_int_equal(import_cmd(path, "--cpu-model", "zen4", NULL), 0);
	assert_int_equal(stored_runs(), before + 2);
	unlink(path);
}

/* ---- the parser on perf's layouts ------------------------------------------------ */

static struct td_perf_stat *parse(const char *text)
{
	struct td_perf_stat *ps = NULL;
	char err[512] = "";

	if (td_perf_stat_parse(text, strlen(text), &ps, err, sizeof(err)))
		fail_msg("parse: %s", err);
	return ps;
}

static void test_layouts(void **state)
{
	struct td_perf_stat *ps;

	(void)state;
	/* --per-thread, as perf 6.1 prints it; a thread name with a dash */
	ps = parse("process_api-1,<not counted>,msec,task-clock,0,100.00,,\n"
		   "tokio-rt-worker-67,12.5,msec,task-clock,12500000,100.00,0.1,CPUs utilized\n");
	assert_true(ps->per_thread);
	assert_int_equal(ps->n_counts, 2);
	assert_int_equal(ps->counts[1].tid, 67);
	assert_string_equal(ps->counts[1].comm, "tokio-rt-worker");
	assert_true(isnan(ps->counts[0].value));
	assert_close(ps->counts[0].running_fraction, 0);
	td_perf_stat_free(ps);

	/* -I with padded timestamps, CRLF, a metric-only line, PMU terms with commas */
	ps = parse("     1.000123456,5000,,cpu/event=0x3c,umask=0x0/,1000,50.00,,\r\n"
		   "     1.000123456,,,,,,1.2,insn per cycle\r\n"
		   "     2.000246912,<not supported>,,cycles,0,100.00,,\r\n");
	assert_true(ps->has_intervals);
	assert_int_equal(ps->n_counts, 2);
	assert_string_equal(ps->events[0], "cpu/event=0x3c,umask=0x0/");
	assert_close(ps->counts[0].interval_s, 1.000123456);
	assert_close(ps->counts[0].running_fraction, 0.5);
	assert_close(ps->counts[0].runtime_ns, 1000);
	td_perf_stat_free(ps);

	/* -A, --per-socket and --per-core ids; perf stat -r noise */
	ps = parse("CPU0,102.13,msec,task-clock,102132695,100.00,1.000,CPUs utilized\n"
		   "CPU1,102.16,msec,task-clock,102159846,100.00,1.000,CPUs utilized\n");
	assert_int_equal(ps->n_units, 2);
	assert_string_equal(ps->units[ps->counts[1].unit], "CPU1");
	td_perf_stat_free(ps);
	ps = parse("S0,2,204.53,msec,task-clock,204527542,100.00,2.000,CPUs utilized\n");
	assert_string_equal(ps->units[0], "S0");
	td_perf_stat_free(ps);
	ps = parse("S0-D0-C1,1,102.15,msec,task-clock,102154979,100.00,1.000,CPUs utilized\n");
	assert_string_equal(ps->units[0], "S0-D0-C1");
	td_perf_stat_free(ps);
	ps = parse("5000,,cycles,0.52%,1000,100.00,,\n");
	assert_close(ps->counts[0].value, 5000);
	td_perf_stat_free(ps);
	/* old perf: count, unit, event only */
	ps = parse("5000,,cycles\n");
	assert_close(ps->counts[0].running_fraction, 1);
	assert_true(isnan(ps->counts[0].runtime_ns));
	td_perf_stat_free(ps);
	/* JSON per CPU and per thread */
	ps = parse("{\"interval\" : 0.1, \"cpu\" : \"1\", \"counter-value\" : \"105.5\", \"unit\" : "
		   "\"msec\", \"event\" : \"task-clock\", \"event-runtime\" : 105590391, "
		   "\"pcnt-running\" : 100.00, \"metric-value\" : 1.05, \"metric-unit\" : \"CPUs\"}\n");
	assert_string_equal(ps->units[0], "CPU1");
	assert_string_equal(ps->event_units[0], "msec");
	td_perf_stat_free(ps);
}

/* ---- event names ---------------------------------------------------------------- */

static const char *mapped(const char *model_name, const char *perf_name)
{
	const struct td_model *m = model(model_name);
	int idx[4];
	size_t n = td_import_map_event(m, perf_name, idx, 4, NULL);

	return n ? m->events[idx[0]].name : NULL;
}

static void test_event_names(void **state)
{
	bool other;
	int idx[4];

	(void)state;
	assert_string_equal(mapped("skx", "uops_retired.retire_slots"), "UOPS_RETIRED.RETIRE_SLOTS");
	assert_string_equal(mapped("skx", "cpu/event=0xc2,umask=0x2/"), "UOPS_RETIRED.RETIRE_SLOTS");
	assert_string_equal(mapped("skx", "cpu/event=0xc2,umask=0x2/u"), "UOPS_RETIRED.RETIRE_SLOTS");
	assert_string_equal(mapped("skx", "r2c2"), "UOPS_RETIRED.RETIRE_SLOTS");
	assert_string_equal(mapped("skx", "ICACHE_16B.IFDATA_STALL,cmask=1,edge"),
			    "ICACHE_16B.IFDATA_STALL,cmask=1,edge");
	assert_string_equal(mapped("skx", "cpu/icache_16b.ifdata_stall,cmask=0x1,edge=1/"),
			    "ICACHE_16B.IFDATA_STALL,cmask=1,edge");
	assert_string_equal(mapped("skx", "instructions"), "INST_RETIRED.ANY");
	assert_string_equal(mapped("skx", "branch-misses:u"), "BR_MISP_RETIRED.ALL_BRANCHES");
	assert_string_equal(mapped("spr", "slots"), "TOPDOWN.SLOTS");
	assert_string_equal(mapped("spr", "cpu/topdown-fe-bound/"), "topdown-fe-bound");
	assert_string_equal(mapped("adl", "cpu_core/topdown-be-bound/"), "cpu_core/topdown-be-bound/");
	assert_string_equal(mapped("adl", "INST_RETIRED.ANY"), "cpu_core/INST_RETIRED.ANY/");
	assert_int_equal(td_import_map_event(model("adl"), "cpu_atom/cycles/", idx, 4, &other), 0);
	assert_true(other);
	assert_string_equal(mapped("neoverse-v2", "armv8_pmuv3_0/event=0x11/"), "CPU_CYCLES");
	assert_string_equal(mapped("neoverse-v2", "r3a"), "OP_RETIRED");
	assert_string_equal(mapped("neoverse-v2", "cycles"), "CPU_CYCLES");
	assert_string_equal(mapped("neoverse-n1", "stalled-cycles-backend"), "STALL_BACKEND");
	assert_string_equal(mapped("neoverse-n1", "armv8_pmuv3_0/stall_frontend/"), "STALL_FRONTEND");
	assert_string_equal(mapped("zen4", "cycles:u"), "ls_not_halted_cyc");
	assert_string_equal(mapped("zen4", "cpu/event=0x1a0,umask=0x1e/"),
			    "de_no_dispatch_per_slot.backend_stalls");
	assert_string_equal(mapped("zen4", "DE_SRC_OP_DISP.ALL"), "de_src_op_disp.all");
	assert_null(mapped("zen4", "task-clock"));
	assert_null(mapped("zen4", "cpu/event=0xzz/"));
	assert_string_equal(mapped("zen4", "cpu/event=0x76,period=1000,name=cyc/"), "ls_not_halted_cyc");
	assert_null(mapped("zen4", "cpu/event=0x76,ldlat=3,bogus=1/"));
	assert_null(mapped("zen4", "/cycles/"));
	assert_null(mapped("zen4", "r"));
	assert_null(mapped("skx", "slots")); /* no TOPDOWN.SLOTS before Ice Lake */
}

/* Two names for one event, and a count given twice: noted, first one used. */
static void test_repeats(void **state)
{
	struct td_perf_stat *ps = parse("6000000000,,cycles,3,100.00,,\n"
					"6500000000,,ls_not_halted_cyc,3,100.00,,\n"
					"7200000000,,de_no_dispatch_per_slot.no_ops_from_frontend,3,100.00,,\n"
					"9999999999,,de_no_dispatch_per_slot.no_ops_from_frontend,3,100.00,,\n");
	struct td_import_opts opts = { .model = model("zen4"), .smt = -1, .source = "x.csv" };
	struct td_import *imp = NULL;
	char err[512];
	bool named_twice = false, repeated = false;

	(void)state;
	assert_int_equal(td_import_build(ps, &opts, &imp, err, sizeof(err)), 0);
	for (size_t i = 0; i < imp->n_notes; i++) {
		named_twice |= strstr(imp->notes[i], "'cycles' and 'ls_not_halted_cyc' both count") != NULL;
		repeated |= strstr(imp->notes[i], "first on line 4") != NULL;
	}
	assert_true(named_twice);
	assert_true(repeated);
	assert_close(row(imp->run, TD_SCOPE_PROCESS, "0", -1, "Frontend_Bound")->value,
		     7200000000.0 / (6 * 6000000000.0));
	td_import_free(imp);
	td_perf_stat_free(ps);
}

/* Files with many distinct events and CPUs; arguments the builder refuses. */
/* Found by fuzz_import: a duration_time count no run can have overflowed the ns arithmetic. */
static void test_impossible_duration_is_refused(void **state)
{
	static const char input[] = "777777777777771.,1,,y";
	char err[512] = "";
	const struct td_kb *kb = td_kb_load(err, sizeof(err));
	struct td_perf_stat *ps = NULL;
	struct td_import *imp = NULL;
	struct td_import_opts opts = { .smt = -1, .source = "fuzz.csv" };

	(void)state;
	assert_non_null(kb);
	opts.model = td_kb_model(kb, "neoverse-n1");
	assert_int_equal(td_perf_stat_parse(input, strlen(input), &ps, err, sizeof(err)), 0);
	assert_int_equal(td_import_build(ps, &opts, &imp, err, sizeof(err)), -EINVAL);
	assert_null(imp);
	assert_non_null(strstr(err, "which no perf stat run can"));
	td_perf_stat_free(ps);
}

static void test_sizes_and_options(void **state)
{
	char *text = malloc(200000), name[600];
	size_t len = 0;
	struct td_perf_stat *ps;
	struct td_import *imp = NULL;
	struct td_import_opts opts = { .model = model("zen4"), .smt = -1 };
	char err[512];

	(void)state;
	for (int cpu = 0; cpu < 64; cpu++)
		for (int e = 0; e < 40; e++)
			len += (size_t)snprintf(text + len, 200000 - len, "CPU%d,%d,,event_%d,100,100.00,,\n",
						cpu, 1000 + e, e);
	ps = parse(text);
	assert_int_equal(ps->n_events, 40);
	assert_int_equal(ps->n_units, 64);
	assert_int_equal(ps->n_counts, 64 * 40);
	for (size_t i = 0; i < ps->n_counts; i++) {
		assert_int_equal(atoi(ps->units[ps->counts[i].unit] + 3), (ps->counts[i].line - 1) / 40);
		assert_int_equal(ps->counts[i].value, 1000 + atoi(ps->events[ps->counts[i].event] + 6));
	}
	/* none of these events is a Zen 4 event */
	assert_int_equal(td_import_build(ps, &opts, &imp, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ls_not_halted_cyc"));
	opts.depth = 5;
	assert_int_equal(td_import_build(ps, &opts, &imp, err, sizeof(err)), -EINVAL);
	opts = (struct td_import_opts){ .smt = -1 };
	assert_int_equal(td_import_build(ps, &opts, &imp, err, sizeof(err)), -EINVAL);
	assert_null(imp);
	td_perf_stat_free(ps);
	free(text);

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(td_import_map_event(model("zen4"), name, NULL, 0, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skx),
		cmocka_unit_test(test_spr),
		cmocka_unit_test(test_neoverse_v2_intervals),
		cmocka_unit_test(test_neoverse_v2_threads),
		cmocka_unit_test(test_zen4),
		cmocka_unit_test(test_json_output),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_impossible_counts),
		cmocka_unit_test(test_thread_missing_event),
		cmocka_unit_test(test_nul_and_arguments),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_event_names),
		cmocka_unit_test(test_repeats),
		cmocka_unit_test(test_sizes_and_options),
		cmocka_unit_test(test_impossible_duration_is_refused),
	};

	return cmocka_run_group_tests(tests, make_db, remove_db);
}
