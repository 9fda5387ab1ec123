// SPDX-License-Identifier: BSD-3-Clause
/*
 * The /metrics exporter: the exposition text checked line by line against
 * the text format's grammar (a strict parser of our own, and promtool
 * where Debian's prometheus package is installed), the samples checked
 * against the runs they came from, and the server over real sockets,
 * with a plain client and with curl.
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "engine.h"
#include "exporter.h"
#include "prom_text.h"
#include "slowloris.h"

/*
 * Out-of-memory injection: malloc, calloc and realloc fail once the
 * countdown reaches zero (-1: never). ASan brings its own allocator, so
 * under it the tests that need this skip.
 */
#ifdef __SANITIZE_ADDRESS__
#define CAN_FAIL_MALLOC 0
#else
#define CAN_FAIL_MALLOC 1
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
static atomic_int malloc_fail_after = -1;

static bool alloc_fails(void)
{
	int left = atomic_load(&malloc_fail_after);

	while (left > 0 && !atomic_compare_exchange_weak(&malloc_fail_after, &left, left - 1))
		;
	return left == 0;
}

void *malloc(size_t size)
{
	return alloc_fails() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return alloc_fails() ? NULL : __libc_realloc(p, size);
}

void *reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return realloc(p, n * size);
}

/* Whether the injection works here (valgrind replaces malloc). */
static bool can_fail_malloc(void)
{
	void *(*volatile alloc)(size_t) = malloc; /* a call the compiler cannot elide */
	void *probe;

	atomic_store(&malloc_fail_after, 0);
	probe = alloc(1);
	atomic_store(&malloc_fail_after, -1);
	free(probe);
	return probe == NULL;
}
#endif

static void parse_ok(const char *text, struct prom_text *x)
{
	char why[4400];

	if (prom_parse(text, x, why, sizeof(why)) < 0)
		fail_msg("not valid exposition text: %s\n%s", why, text);
}

/* The one sample of family name whose labels include the NULL-ended
 * (name, value) pairs; NULL when there is none. Two fail the test. */
static const struct prom_sample *find_sample(const struct prom_text *x, const char *name, ...)
{
	const struct prom_sample *found = NULL;

	for (size_t i = 0; i < x->nr_samples; i++) {
		const struct prom_sample *s = &x->samples[i];
		bool match = !strcmp(s->name, name);
		va_list ap;

		va_start(ap, name);
		for (const char *k; match && (k = va_arg(ap, const char *));) {
			const char *v = va_arg(ap, const char *), *have = prom_label(s, k);

			match = have && !strcmp(have, v);
		}
		va_end(ap);
		if (match) {
			if (found)
				fail_msg("two samples of %s match", name);
			found = s;
		}
	}
	return found;
}

static size_t family_samples(const struct prom_text *x, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < x->nr_samples; i++)
		n += !strcmp(x->samples[i].name, name);
	return n;
}

/* The grammar checked against known-bad texts: each must be refused. */
static void test_parser_refuses_bad_text(void **state)
{
	(void)state;
	static const struct {
		const char *text, *problem;
	} bad[] = {
		{ "# HELP a x\n# TYPE a gauge\na 1", "newline" },
		{ "a 1\n", "before its family's HELP and TYPE" },
		{ "# TYPE a gauge\na 1\n", "before its family's HELP and TYPE" },
		{ "# HELP a x\n# HELP a x\n# TYPE a gauge\na 1\n", "second HELP" },
		{ "# HELP a x\n# TYPE a gauge\n# TYPE a gauge\na 1\n", "second TYPE" },
		{ "# HELP a x\n# TYPE a gauge\na 1\n# HELP a y\n", "after the family's samples" },
		{ "# HELP a x\n# TYPE a gauge\na 1\n# HELP b y\n# TYPE b gauge\nb 1\na{x=\"1\"} 2\n",
		  "outside its family's block" },
		{ "# HELP a x\n# TYPE a gauges\na 1\n", "unknown TYPE" },
		{ "# HELP a x\n# TYPE a gauge\n# a comment\na 1\n", "other than HELP or TYPE" },
		{ "# HELP a x\n# TYPE a gauge\n\na 1\n", "empty line" },
		{ "# HELP 1a x\n", "bad metric name" },
		{ "# HELP a x\n# TYPE a gauge\na{1x=\"v\"} 1\n", "bad label name" },
		{ "# HELP a x\n# TYPE a gauge\na{__x=\"v\"} 1\n", "reserved" },
		{ "# HELP a x\n# TYPE a gauge\na{x=\"\\t\"} 1\n", "bad label value" },
		{ "# HELP a x\n# TYPE a gauge\na{x=\"v} 1\n", "bad label value" },
		{ "# HELP a x\n# TYPE a gauge\na{x=v} 1\n", "bad label value" },
		{ "# HELP a x\n# TYPE a gauge\na{x=\"\xff\"} 1\n", "bad label value" },
		{ "# HELP a x\n# TYPE a gauge\na{x=\"1\",x=\"2\"} 1\n", "label twice" },
		{ "# HELP a x\n# TYPE a gauge\na{x=\"1\",} 1\n", "no ',' or '}'" },
		{ "# HELP a x\n# TYPE a gauge\na{x=\"1\" y=\"2\"} 1\n", "no ',' or '}'" },
		{ "# HELP a x\n# TYPE a gauge\na{x=\"1\",y=\"2\"} 1\na{y=\"2\",x=\"1\"} 3\n",
		  "two samples of one series" },
		{ "# HELP a x\n# TYPE a gauge\na 1,5\n", "bad value" },
		{ "# HELP a x\n# TYPE a gauge\na nan\n", "bad value" },
		{ "# HELP a x\n# TYPE a gauge\na inf\n", "bad value" },
		{ "# HELP a x\n# TYPE a gauge\na 1e\n", "bad value" },
		{ "# HELP a x\n# TYPE a gauge\na 1 1700000000000\n", "bad value" },
		{ "# HELP a x\n# TYPE a gauge\na  1\n", "bad value" },
		{ "# HELP a x\n# TYPE a gauge\na\n", "no single space" },
		{ "# HELP a x\n# TYPE a gauge\n", "has no samples" },
		{ "# HELP a bad \\t escape\n# TYPE a gauge\na 1\n", "bad escape in HELP" },
	};
	struct prom_text x;
	char why[4400];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = prom_parse(bad[i].text, &x, why, sizeof(why));

		prom_free(&x);
		if (rc == 0 || !strstr(why, bad[i].problem))
			fail_msg("text %zu was not refused for '%s' (%s):\n%s", i, bad[i].problem,
				 rc ? why : "accepted", bad[i].text);
	}
}

static void test_parser_reads_good_text(void **state)
{
	(void)state;
	struct prom_text x;
	const struct prom_sample *s;

	parse_ok("# HELP a the \\\\ help \\n text\n# TYPE a gauge\n"
		 "a{x=\"q\\\"b\\\\s\\nn\",y=\"caf\xc3\xa9\"} 0.5\na{x=\"2\"} -1.5e-3\na NaN\n"
		 "# HELP b_total x\n# TYPE b_total counter\nb_total +Inf\n", &x);
	assert_int_equal(x.nr_samples, 4);
	s = find_sample(&x, "a", "x", "q\"b\\s\nn", "y", "caf\xc3\xa9", NULL);
	assert_non_null(s);
	assert_true(s->value == 0.5);
	assert_true(find_sample(&x, "a", "x", "2", NULL)->value == -1.5e-3);
	assert_true(isnan(x.samples[2].value));
	assert_int_equal(x.samples[2].nr_labels, 0);
	assert_true(isinf(find_sample(&x, "b_total", NULL)->value));
	assert_string_equal(prom_find_family(&x, "b_total")->type, "counter");
	prom_free(&x);
}

/* ================= building windows ================= */

static void add_thread(struct td_run *run, uint32_t tid, uint32_t pid, const char *comm,
		       uint64_t oncpu_ns)
{
	struct td_thread_row *th;

	run->threads = reallocarray(run->threads, run->nr_threads + 1, sizeof(*run->threads));
	assert_non_null(run->threads);
	th = &run->threads[run->nr_threads++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->pid = pid;
	snprintf(th->comm, sizeof(th->comm), "%s", comm);
	th->oncpu_ns = oncpu_ns;
}

static void add_row(struct td_run *run, enum td_metric_scope scope, const char *key,
		    int32_t seq, const char *path, double value, double confidence)
{
	const char *dot = strrchr(path, '.');
	char parent[128] = "";
	struct td_metric_row row = { .scope = scope, .scope_key = (char *)key,
				     .interval_seq = seq, .path = (char *)path,
				     .value = value, .confidence = confidence };

	row.level = 1;
	for (const char *p = path; *p; p++)
		row.level += *p == '.';
	if (dot) {
		snprintf(parent, sizeof(parent), "%.*s", (int)(dot - path), path);
		row.parent = parent;
	}
	assert_int_equal(td_run_add_metric(run, &row), 0);
}

/* The tree every scope of these tests has, levels 1 to 3 and an Info metric. */
static const char *const tree[] = {
	"Frontend_Bound", "Bad_Speculation", "Backend_Bound", "Retiring",
	"Backend_Bound.Memory_Bound", "Backend_Bound.Core_Bound",
	"Backend_Bound.Memory_Bound.DRAM_Bound", "tma_info_thread_ipc",
};
#define TREE_SIZE (sizeof(tree) / sizeof(tree[0]))

/* Rows for every node of the tree for one scope: values base + i/100,
 * confidence 1 - i/50; the Info metric at level 0. */
static void add_tree(struct td_run *run, enum td_metric_scope scope, const char *key,
		     int32_t seq, double base)
{
	for (size_t i = 0; i < TREE_SIZE; i++) {
		add_row(run, scope, key, seq, tree[i], base + (double)i / 100, 1 - (double)i / 50);
		if (!strncmp(tree[i], "tma_", 4))
			run->metrics[run->nr_metrics - 1].level = 0;
	}
}

/* A run of process with threads of pid (tid pid: main, pid+1.. io_thd_N),
 * whole-run trees for the process, each group and each thread, and an
 * interval's tree. */
static struct td_run *window_run(const char *process, uint32_t pid, uint64_t main_ns,
				 uint64_t io_ns, double base)
{
	struct td_run *run = td_run_new();
	char key[16];

	assert_non_null(run);
	run->process = strdup(process);
	assert_non_null(run->process);
	add_thread(run, pid, pid, "server", main_ns);
	add_thread(run, pid + 1, pid, "io_thd_1", io_ns);
	add_thread(run, pid + 2, pid, "io_thd_2", io_ns);
	snprintf(key, sizeof(key), "%u", pid);
	add_tree(run, TD_SCOPE_PROCESS, key, 0, base + 0.3);
	add_tree(run, TD_SCOPE_THREAD, key, -1, base + 0.4);
	add_tree(run, TD_SCOPE_GROUP, "server", -1, base + 0.1);
	add_tree(run, TD_SCOPE_GROUP, "io_thd_*", -1, base + 0.2);
	add_tree(run, TD_SCOPE_PROCESS, key, -1, base);
	return run;
}

static const struct td_agent_health some_health = {
	.windows = 12, .partial_windows = 1, .dropped = 34, .spool_depth = 2,
	.runs_spooled = 5, .runs_replayed = 3, .store_queue = 4, .runs_stored_late = 6,
	.runs_lost = 7, .agent_cpu_seconds = 1.25,
	.bpf_seconds = 0.0625, .overhead_percent = 0.8, .duty = 0.97,
};

static char *render_ok(const struct td_run *const *runs, size_t n, const struct td_labels *labels,
		       const struct td_agent_health *health)
{
	char *text = td_exposition_render(runs, n, labels, health);

	assert_non_null(text);
	return text;
}

/* promtool's own check of the text, when Debian's prometheus package
 * put it on this machine. */
static void promtool_check(const char *text)
{
	char path[] = "/tmp/td-exposition-XXXXXX", cmd[128];
	int fd, status;

	if (system("command -v promtool >/dev/null 2>&1") != 0) {
		printf("promtool not installed (Debian package prometheus): checked by our parser only\n");
		return;
	}
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	status = system(cmd);
	unlink(path);
	if (status != 0)
		fail_msg("promtool check metrics refused the text (status %d):\n%s", status, text);
}

/* Every row of run that must be exported is, with its value and
 * confidence, under process and (for groups) thread_group; returns how
 * many samples that makes. */
static size_t expect_run_exported(const struct prom_text *x, const struct td_run *run)
{
	size_t n = 0;

	for (size_t i = 0; i < run->nr_metrics; i++) {
		const struct td_metric_row *m = &run->metrics[i];
		bool group = m->scope == TD_SCOPE_GROUP;
		const char *ratio = group ? "topdown_tma_thread_group_ratio" : "topdown_tma_process_ratio";
		const char *conf = group ? "topdown_tma_thread_group_confidence_ratio"
					 : "topdown_tma_process_confidence_ratio";
		const struct prom_sample *s, *c;

		if (m->scope == TD_SCOPE_THREAD || m->interval_seq != -1 || m->level < 1 ||
		    m->level > 2 || isnan(m->value))
			continue;
		if (group) {
			s = find_sample(x, ratio, "process", run->process, "thread_group", m->scope_key,
					"metric", m->path, NULL);
			c = find_sample(x, conf, "process", run->process, "thread_group", m->scope_key,
					"metric", m->path, NULL);
		} else {
			s = find_sample(x, ratio, "process", run->process, "metric", m->path, NULL);
			c = find_sample(x, conf, "process", run->process, "metric", m->path, NULL);
		}
		if (!s || !c)
			fail_msg("no sample for %s %s of %s", m->scope_key, m->path, run->process);
		assert_true(s->value == m->value);
		assert_true(c->value == m->confidence);
		n += 2;
	}
	return n;
}

static size_t tma_samples(const struct prom_text *x)
{
	return family_samples(x, "topdown_tma_process_ratio") +
	       family_samples(x, "topdown_tma_process_confidence_ratio") +
	       family_samples(x, "topdown_tma_thread_group_ratio") +
	       family_samples(x, "topdown_tma_thread_group_confidence_ratio");
}

/* The health families, each with its value from health. */
static void expect_health(const struct prom_text *x, const struct td_agent_health *h)
{
	const struct {
		const char *name, *type;
		double value;
	} want[] = {
		{ "topdown_agent_windows_total", "counter", (double)h->windows },
		{ "topdown_agent_partial_windows_total", "counter", (double)h->partial_windows },
		{ "topdown_agent_dropped_total", "counter", (double)h->dropped },
		{ "topdown_agent_runs_spooled_total", "counter", (double)h->runs_spooled },
		{ "topdown_agent_runs_replayed_total", "counter", (double)h->runs_replayed },
		{ "topdown_agent_runs_stored_late_total", "counter", (double)h->runs_stored_late },
		{ "topdown_agent_runs_lost_total", "counter", (double)h->runs_lost },
		{ "topdown_agent_cpu_seconds_total", "counter", h->agent_cpu_seconds },
		{ "topdown_agent_bpf_seconds_total", "counter", h->bpf_seconds },
		{ "topdown_agent_spool_runs", "gauge", (double)h->spool_depth },
		{ "topdown_agent_store_queue_runs", "gauge", (double)h->store_queue },
		{ "topdown_agent_overhead_ratio", "gauge", h->overhead_percent / 100 },
		{ "topdown_agent_duty_ratio", "gauge", h->duty },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct prom_sample *s = find_sample(x, want[i].name, NULL);

		if (!s)
			fail_msg("no %s", want[i].name);
		assert_int_equal(s->nr_labels, 0);
		assert_string_equal(prom_find_family((struct prom_text *)x, want[i].name)->type, want[i].type);
		if (isnan(want[i].value))
			assert_true(isnan(s->value));
		else
			assert_true(s->value == want[i].value);
	}
}

/* ================= rendering ================= */

static void test_render_window(void **state)
{
	(void)state;
	struct td_run *a = window_run("redis-server", 100, 500000000, 100000000, 0.1);
	struct td_run *b = window_run("memcached", 200, 300000000, 200000000, 0.2);
	const struct td_run *runs[] = { a, b };
	char *text = render_ok(runs, 2, NULL, &some_health);
	struct prom_text x;

	parse_ok(text, &x);
	promtool_check(text);
	assert_int_equal(tma_samples(&x), expect_run_exported(&x, a) + expect_run_exported(&x, b));
	/* what must not be there: level 3, Info, thread and interval rows */
	assert_null(find_sample(&x, "topdown_tma_process_ratio", "metric",
				"Backend_Bound.Memory_Bound.DRAM_Bound", NULL));
	assert_null(find_sample(&x, "topdown_tma_process_ratio", "metric", "tma_info_thread_ipc", NULL));
	for (size_t i = 0; i < x.nr_samples; i++)
		assert_null(prom_label(&x.samples[i], "tid"));
	expect_health(&x, &some_health);
	assert_int_equal(x.nr_samples, tma_samples(&x) + 13);
	/* a family's samples sit between its TYPE line and the next family */
	assert_non_null(strstr(text, "# TYPE topdown_tma_process_ratio gauge\n"
				     "topdown_tma_process_ratio{process=\"memcached\",metric=\"Frontend_Bound\"} "));
	prom_free(&x);
	free(text);
	td_run_free(a);
	td_run_free(b);
}

static void test_empty_window_is_health_only(void **state)
{
	(void)state;
	struct td_agent_health h = some_health;
	struct td_run *bare = td_run_new();
	const struct td_run *runs[] = { bare };
	struct prom_text x;
	char *text;

	h.overhead_percent = NAN; /* a window of no wall time */
	text = render_ok(NULL, 0, NULL, &h);
	parse_ok(text, &x);
	promtool_check(text);
	assert_int_equal(x.nr_samples, 13);
	assert_int_equal(x.nr_families, 13);
	expect_health(&x, &h);
	assert_non_null(strstr(text, "\ntopdown_agent_overhead_ratio NaN\n"));
	prom_free(&x);
	free(text);

	/* a run without metric rows (no PMU) and no process name adds nothing */
	assert_non_null(bare);
	text = render_ok(runs, 1, NULL, &h);
	parse_ok(text, &x);
	assert_int_equal(x.nr_samples, 13);
	prom_free(&x);
	free(text);

	/* no health either: nothing at all, still valid */
	text = render_ok(NULL, 0, NULL, NULL);
	assert_string_equal(text, "");
	free(text);
	td_run_free(bare);
}

static void test_nan_values_are_left_out(void **state)
{
	(void)state;
	struct td_run *run = window_run("redis-server", 100, 5, 1, 0.1);
	const struct td_run *runs[] = { run };
	struct prom_text x;
	size_t nans = 0;
	char *text;

	for (size_t i = 0; i < run->nr_metrics; i++)
		if (run->metrics[i].interval_seq == -1 && !strcmp(run->metrics[i].path, "Bad_Speculation")) {
			run->metrics[i].value = NAN;
			nans++;
		}
	assert_int_equal(nans, 4); /* process, two groups, one thread */
	text = render_ok(runs, 1, NULL, &some_health);
	parse_ok(text, &x);
	promtool_check(text);
	assert_int_equal(tma_samples(&x), expect_run_exported(&x, run));
	assert_null(find_sample(&x, "topdown_tma_process_ratio", "metric", "Bad_Speculation", NULL));
	assert_null(find_sample(&x, "topdown_tma_process_confidence_ratio", "metric", "Bad_Speculation", NULL));
	assert_null(find_sample(&x, "topdown_tma_thread_group_ratio", "metric", "Bad_Speculation",
				"thread_group", "server", NULL));
	assert_non_null(find_sample(&x, "topdown_tma_process_ratio", "metric", "Retiring", NULL));
	for (size_t i = 0; i < x.nr_samples; i++)
		assert_false(isnan(x.samples[i].value));
	prom_free(&x);
	free(text);
	td_run_free(run);
}

static void test_label_values_are_escaped(void **state)
{
	(void)state;
	/* quote, backslash, newline, good UTF-8, then bad: an overlong '/',
	 * a surrogate, a code point past U+10FFFF, a character cut short */
	static const char raw[] = "a\"b\\c\nd caf\xc3\xa9 \xe6\x97\xa5 \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xe6\x97";
	static const char escaped[] = "a\\\"b\\\\c\\nd caf\xc3\xa9 \xe6\x97\xa5 ?? ??? ???? ??";
	static const char unescaped[] = "a\"b\\c\nd caf\xc3\xa9 \xe6\x97\xa5 ?? ??? ???? ??";
	struct td_run *run = window_run(raw, 100, 5, 1, 0.1);
	const struct td_run *runs[] = { run };
	struct td_labels labels;
	struct prom_text x;
	char want[256], *text;

	td_labels_init(&labels);
	assert_int_equal(td_labels_set(&labels, "note", raw), 0);
	text = render_ok(runs, 1, &labels, &some_health);
	parse_ok(text, &x);
	promtool_check(text);
	snprintf(want, sizeof(want), "topdown_tma_process_ratio{process=\"%s\",metric=\"Frontend_Bound\",note=\"%s\"} ",
		 escaped, escaped);
	assert_non_null(strstr(text, want));
	assert_non_null(find_sample(&x, "topdown_tma_process_ratio", "process", unescaped,
				    "note", unescaped, "metric", "Frontend_Bound", NULL));
	prom_free(&x);
	free(text);
	td_labels_free(&labels);
	td_run_free(run);
}

static void test_user_label_names_are_sanitised(void **state)
{
	(void)state;
	static const struct {
		const char *key, *value, *name;
	} cases[] = {
		{ "git.branch", "main", "git_branch" },
		{ "build-id", "7", "build_id" },
		{ "9lives", "x", "user_9lives" },
		{ "process", "p", "user_process" },
		{ "metric", "m", "user_metric" },
		{ "thread_group", "t", "user_thread_group" },
		{ "thread-group", "t2", "user_thread_group_2" },
		{ "__meta", "z", "user___meta" },
		{ "a.b", "1", "a_b" },
		{ "a_b", "2", "a_b_2" },
		{ "a-b", "3", "a_b_3" },
		{ "", "empty", "user_" },
	};
	size_t n = sizeof(cases) / sizeof(cases[0]);
	struct td_run *run = window_run("redis-server", 100, 5, 1, 0.1);
	const struct td_run *runs[] = { run };
	struct td_labels labels;
	struct prom_text x;
	char *text;

	td_labels_init(&labels);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(td_labels_set(&labels, cases[i].key, cases[i].value), 0);
	text = render_ok(runs, 1, &labels, &some_health);
	parse_ok(text, &x);
	promtool_check(text);
	assert_int_equal(tma_samples(&x), expect_run_exported(&x, run));
	for (size_t i = 0; i < x.nr_samples; i++) {
		const struct prom_sample *s = &x.samples[i];
		size_t ours = strstr(s->name, "thread_group") ? 3 : 2;

		if (strncmp(s->name, "topdown_tma_", 12)) {
			assert_int_equal(s->nr_labels, 0); /* health: no user labels */
			continue;
		}
		/* ours first, then the user's in their order, each with its value */
		assert_int_equal(s->nr_labels, ours + n);
		for (size_t k = 0; k < n; k++) {
			assert_string_equal(s->label_names[ours + k], cases[k].name);
			assert_string_equal(s->label_values[ours + k], cases[k].value);
		}
		assert_string_equal(prom_label(s, "process"), "redis-server");
	}
	prom_free(&x);
	free(text);
	td_labels_free(&labels);
	td_run_free(run);
}

/* On-CPU time of a run's threads of pid, or of thread name group (pid 0). */
static uint64_t oncpu_of(const struct td_run *run, uint32_t pid, const char *group)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < run->nr_threads; i++) {
		char name[TD_COMM_LEN * 2];

		td_thread_group_name(run->threads[i].comm, name, sizeof(name));
		if (pid ? run->threads[i].pid == pid : !strcmp(name, group))
			sum += run->threads[i].oncpu_ns;
	}
	return sum;
}

/* The value the window exports for a series: the row of the busiest
 * candidate, candidates in window order (earlier wins a tie). */
static const struct td_metric_row *busiest_row(struct td_run *const *runs, size_t n,
					       enum td_metric_scope scope, const char *path,
					       const char *group)
{
	const struct td_metric_row *best = NULL;
	uint64_t best_ns = 0;

	for (size_t r = 0; r < n; r++)
		for (size_t i = 0; i < runs[r]->nr_metrics; i++) {
			const struct td_metric_row *m = &runs[r]->metrics[i];
			uint64_t ns;

			if (m->scope != scope || m->interval_seq != -1 || strcmp(m->path, path) ||
			    (group && strcmp(m->scope_key, group)))
				continue;
			ns = oncpu_of(runs[r], group ? 0 : (uint32_t)atoi(m->scope_key), group);
			if (!best || ns > best_ns) {
				best = m;
				best_ns = ns;
			}
		}
	return best;
}

static void test_one_series_per_process_name(void **state)
{
	(void)state;
	/* three nginx runs: 10 (the busiest process), 20, and 30 with a
	 * second process 35 in the same run; their groups: io_thd_* busiest
	 * in run 20, server busiest in run 10. One apache run for contrast. */
	struct td_run *runs[] = {
		window_run("nginx", 20, 100, 900, 0.01),
		window_run("nginx", 10, 2000, 50, 0.02),
		window_run("nginx", 30, 300, 10, 0.03),
		window_run("apache", 40, 100, 100, 0.04),
	};
	const struct td_run *const_runs[] = { runs[0], runs[1], runs[2], runs[3] };
	size_t n = sizeof(runs) / sizeof(runs[0]);
	struct prom_text x;
	char *text;

	add_thread(runs[2], 35, 35, "server", 1000);
	add_tree(runs[2], TD_SCOPE_PROCESS, "35", -1, 0.05);
	text = render_ok(const_runs, n, NULL, &some_health);
	parse_ok(text, &x);
	promtool_check(text);
	for (size_t i = 0; i < 6; i++) { /* the level 1 and 2 nodes */
		const struct td_metric_row *want = busiest_row(runs, 3, TD_SCOPE_PROCESS, tree[i], NULL);
		const struct prom_sample *s = find_sample(&x, "topdown_tma_process_ratio", "process", "nginx",
						     "metric", tree[i], NULL);

		assert_non_null(s);
		assert_true(s->value == want->value);
		assert_string_equal(want->scope_key, "10");
		for (size_t g = 0; g < 2; g++) {
			const char *group = g ? "io_thd_*" : "server";

			want = busiest_row(runs, 3, TD_SCOPE_GROUP, tree[i], group);
			s = find_sample(&x, "topdown_tma_thread_group_ratio", "process", "nginx",
					"thread_group", group, "metric", tree[i], NULL);
			assert_non_null(s);
			assert_true(s->value == want->value);
		}
	}
	/* per family: nginx and apache, 6 nodes, groups twice over */
	assert_int_equal(family_samples(&x, "topdown_tma_process_ratio"), 2 * 6);
	assert_int_equal(family_samples(&x, "topdown_tma_thread_group_ratio"), 2 * 2 * 6);
	prom_free(&x);
	free(text);

	/* a tie goes to the earlier run; every node of the winner, none of the other */
	td_run_free(runs[1]);
	runs[1] = window_run("nginx", 10, 100, 900, 0.02);
	for (size_t i = 0; i < runs[0]->nr_metrics; i++)
		if (runs[0]->metrics[i].level == 2)
			runs[0]->metrics[i].level = 3; /* run 20 went no deeper than level 1 */
	const_runs[1] = runs[1];
	text = render_ok(const_runs, 2, NULL, &some_health);
	parse_ok(text, &x);
	for (size_t i = 0; i < 4; i++)
		assert_true(find_sample(&x, "topdown_tma_process_ratio", "process", "nginx", "metric",
					tree[i], NULL)->value == 0.01 + (double)i / 100);
	assert_null(find_sample(&x, "topdown_tma_process_ratio", "metric", "Backend_Bound.Memory_Bound", NULL));
	prom_free(&x);
	free(text);
	for (size_t i = 0; i < n; i++)
		td_run_free(runs[i]);
}

static void test_values_round_trip(void **state)
{
	(void)state;
	static const double values[] = { 0.1, 1.0 / 3, 0, 1, 5e-324, 0.30000000000000004, 1e-7 };
	struct td_run *run = td_run_new();
	const struct td_run *runs[] = { run };
	struct td_agent_health h = some_health;
	struct prom_text x;
	char path[32], *text;

	assert_non_null(run);
	run->process = strdup("p");
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		snprintf(path, sizeof(path), "Node_%zu", i);
		add_row(run, TD_SCOPE_PROCESS, "1", -1, path, values[i], values[i]);
	}
	h.windows = UINT64_C(1) << 53;
	h.agent_cpu_seconds = 123456.789;
	text = render_ok(runs, 1, NULL, &h);
	parse_ok(text, &x);
	promtool_check(text);
	assert_int_equal(tma_samples(&x), expect_run_exported(&x, run));
	expect_health(&x, &h);
	assert_non_null(strstr(text, "\ntopdown_agent_windows_total 9007199254740992\n"));
	assert_non_null(strstr(text, "metric=\"Node_0\"} 0.1\n"));
	prom_free(&x);
	free(text);
	td_run_free(run);
}

static void test_render_out_of_memory(void **state)
{
	(void)state;
#if CAN_FAIL_MALLOC
	struct td_run *a, *b;
	struct td_labels labels;
	char *want, *text;
	int failures = 0;

	if (!can_fail_malloc())
		skip();
	a = window_run("redis-server", 100, 5, 1, 0.1);
	b = window_run("redis-server", 200, 7, 1, 0.2);
	const struct td_run *runs[] = { a, b };
	td_labels_init(&labels);
	assert_int_equal(td_labels_set(&labels, "git.branch", "main"), 0);
	assert_int_equal(td_labels_set(&labels, "test", "get"), 0);
	want = render_ok(runs, 2, &labels, &some_health);
	/* every allocation in turn fails: NULL each time, nothing left behind */
	for (int n = 0;; n++) {
		size_t before = mallinfo2().uordblks;

		atomic_store(&malloc_fail_after, n);
		text = td_exposition_render(runs, 2, &labels, &some_health);
		atomic_store(&malloc_fail_after, -1);
		if (text)
			break;
		assert_int_equal(mallinfo2().uordblks, before);
		failures++;
	}
	assert_true(failures > 5);
	assert_string_equal(text, want);
	free(text);
	free(want);
	td_labels_free(&labels);
	td_run_free(a);
	td_run_free(b);
#else
	skip();
#endif
}

/* ================= the server ================= */

/* A port nothing listens on now (the kernel's pick for port 0). */
static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

static struct td_exporter *start_ok(int port)
{
	char listen[64], err[256] = "";
	struct td_exporter *x;

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	x = td_exporter_start(listen, err, sizeof(err));
	if (!x)
		fail_msg("cannot start on %s: %s", listen, err);
	return x;
}

static int connect_to(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Everything the server sends until it closes, NUL-terminated (malloc'd). */
static char *read_all(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	ssize_t got;

	assert_non_null(buf);
	while ((got = read(fd, buf + n, cap - n - 1)) > 0) {
		n += (size_t)got;
		if (cap - n - 1 == 0) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[n] = '\0';
	*len = n;
	close(fd);
	return buf;
}

/* The whole response to request (raw bytes), via a plain socket. */
static char *http(int port, const char *request)
{
	int fd = connect_to(port);
	size_t len;

	assert_int_equal(send(fd, request, strlen(request), 0), (ssize_t)strlen(request));
	return read_all(fd, &len);
}

/* The body of a 200 response, checked for its head. */
static char *body_of_200(char *response)
{
	char *body = strstr(response, "\r\n\r\n"), want[64];

	assert_non_null(body);
	body += 4;
	assert_true(!strncmp(response, "HTTP/1.1 200 OK\r\n", 17));
	assert_non_null(strstr(response, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	assert_non_null(strstr(response, "\r\nConnection: close\r\n"));
	snprintf(want, sizeof(want), "\r\nContent-Length: %zu\r\n", strlen(body));
	assert_non_null(strstr(response, want));
	return body;
}

static void expect_status(int port, const char *request, const char *status_line)
{
	char *response = http(port, request);

	if (strncmp(response, status_line, strlen(status_line)))
		fail_msg("'%s' got '%.40s', not '%s'", request, response, status_line);
	free(response);
}

/* curl's output for args (after "curl -s"), NUL-terminated (malloc'd); its status in *status. */
static char *curl(const char *args, int *status)
{
	char cmd[256];
	FILE *p;
	size_t len;
	char *out;

	if (system("command -v curl >/dev/null 2>&1") != 0)
		fail_msg("curl is not installed: make deps installs it");
	snprintf(cmd, sizeof(cmd), "curl -s %s", args);
	p = popen(cmd, "r");
	assert_non_null(p);
	out = read_all(dup(fileno(p)), &len);
	*status = pclose(p);
	return out;
}

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void test_serves_metrics(void **state)
{
	(void)state;
	int port = free_port(), status;
	struct td_exporter *x = start_ok(port);
	struct td_run *run = window_run("redis-server", 100, 5, 1, 0.1);
	const struct td_run *runs[] = { run };
	struct td_labels labels;
	char *want, *response, *out, args[128];

	td_labels_init(&labels);
	assert_int_equal(td_labels_set(&labels, "git.branch", "main"), 0);

	/* before the first window: 200 and nothing */
	response = http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_string_equal(body_of_200(response), "");
	free(response);

	assert_int_equal(td_exporter_publish(x, runs, 1, &labels, &some_health), 0);
	want = render_ok(runs, 1, &labels, &some_health);
	response = http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n");
	assert_string_equal(body_of_200(response), want);
	free(response);
	/* HTTP/1.0, bare newlines, a query string: still the metrics */
	response = http(port, "GET /metrics?x=1 HTTP/1.0\n\n");
	assert_string_equal(body_of_200(response), want);
	free(response);

	snprintf(args, sizeof(args), "-f http://127.0.0.1:%d/metrics", port);
	out = curl(args, &status);
	assert_int_equal(status, 0);
	assert_string_equal(out, want);
	free(out);
	snprintf(args, sizeof(args), "-o /dev/null -w '%%{http_code}' http://127.0.0.1:%d/other", port);
	out = curl(args, &status);
	assert_string_equal(out, "404");
	free(out);
	snprintf(args, sizeof(args), "-o /dev/null -w '%%{http_code}' -X POST http://127.0.0.1:%d/metrics", port);
	out = curl(args, &status);
	assert_string_equal(out, "405");
	free(out);

	expect_status(port, "GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found\r\n");
	expect_status(port, "GET /metricsx HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found\r\n");
	expect_status(port, "POST /other HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found\r\n");
	expect_status(port, "PUT /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 405 Method Not Allowed\r\n");
	expect_status(port, "HEAD /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 405 Method Not Allowed\r\n");
	/* garbage: refused, or dropped unanswered (libmicrohttpd's choice) */
	response = http(port, "hello\r\n\r\n");
	assert_true(!*response || !strncmp(response, "HTTP/1.1 400 Bad Request\r\n", 26));
	free(response);
	expect_status(port, "GET /metrics\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n");
	expect_status(port, "GET /metrics SPDY/3\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n");
	response = http(port, "DELETE /metrics HTTP/1.1\r\n\r\n");
	assert_non_null(strstr(response, "\r\nAllow: GET\r\n"));
	free(response);

	/* still serving after all that */
	response = http(port, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_string_equal(body_of_200(response), want);
	free(response);

	td_exporter_stop(x);
	free(want);
	td_labels_free(&labels);
	td_run_free(run);
}

static void test_bad_clients_cannot_hang_it(void **state)
{
	(void)state;
	int port = free_port(), fd;
	struct td_exporter *x = start_ok(port);
	char *big = malloc(32768), *response;
	long long t0;
	size_t len;

	/* a head of 32 KiB without its end: refused, not waited on */
	assert_non_null(big);
	memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
	memset(big + 26, 'a', 32768 - 26);
	fd = connect_to(port);
	assert_int_equal(send(fd, big, 32768, 0), 32768);
	response = read_all(fd, &len);
	assert_true(!strncmp(response, "HTTP/1.1 431 ", 13));
	free(response);
	free(big);

	/* while a client stalls mid-request, scrapes are answered at once:
	 * each connection has a thread of its own */
	fd = connect_to(port);
	assert_int_equal(send(fd, "GET /metrics HTTP/1.1\r\n", 23, 0), 23);
	t0 = ms_now();
	response = http(port, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_string_equal(body_of_200(response), "");
	free(response);
	assert_true(ms_now() - t0 < 1000);
	close(fd);

	/* a client that sends half a request and stalls is cut off after the
	 * exchange's time limit, with no answer; the next is served */
	t0 = ms_now();
	fd = connect_to(port);
	assert_int_equal(send(fd, "GET /metrics HTTP/1.1\r\n", 23, 0), 23);
	response = read_all(fd, &len);
	assert_int_equal(len, 0);
	free(response);
	assert_true(ms_now() - t0 >= 1500 && ms_now() - t0 < 5000);
	response = http(port, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_string_equal(body_of_200(response), "");
	free(response);

	/* a client that goes away mid-request */
	fd = connect_to(port);
	assert_int_equal(send(fd, "GET /met", 8, 0), 8);
	close(fd);
	response = http(port, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_string_equal(body_of_200(response), "");
	free(response);
	td_exporter_stop(x);
}

/*
 * 500 connections from 127.0.0.2 that never finish their request, kept
 * alive past the idle timeout by a header line every 300 ms: the server
 * holds a few of them (its per-address limit) and scrapes from 127.0.0.1
 * are answered within a second all along.
 */
static void test_slowloris_leaves_room(void **state)
{
	int port = free_port();
	struct td_exporter *x = start_ok(port);
	struct slowloris *s = malloc(sizeof(*s));
	size_t reached, held = 0;
	long long t0, slowest = 0;
	const char *why;
	char *response;

	(void)state;
	assert_non_null(s);
	if ((why = slowloris_cannot_run())) {
		print_message("SKIP: %s\n", why);
		free(s);
		td_exporter_stop(x);
		skip();
	}
	reached = slowloris_open(s, port, SLOWLORIS_MAX, "GET /metrics HTTP/1.1\r\nHost: a\r\n");
	assert_true(reached > 0); /* the attack got through to the server */
	for (int round = 0; round < 10; round++) {
		held = slowloris_trickle(s);
		t0 = ms_now();
		response = http(port, "GET /metrics HTTP/1.1\r\n\r\n");
		if (strncmp(response, "HTTP/1.1 200 OK\r\n", 17))
			fail_msg("round %d, %zu slow connections open: '%.40s'", round, held, response);
		free(response);
		slowest = ms_now() - t0 > slowest ? ms_now() - t0 : slowest;
		if (ms_now() - t0 >= 1000)
			fail_msg("round %d, %zu slow connections open: the scrape took %lld ms", round,
				 held, ms_now() - t0);
		usleep(300000);
	}
	print_message("  slowloris: %zu of %d connections reached the server, %zu held at the end; "
		      "the slowest scrape took %lld ms\n", reached, SLOWLORIS_MAX, held, slowest);
	assert_true(held > 0); /* trickling kept some open past the idle timeout */
	slowloris_close(s);
	free(s);
	td_exporter_stop(x);
}

struct flipper {
	struct td_exporter *x;
	const struct td_run *const *runs[2];
	atomic_bool done;
	int publishes;
};

static void *flip(void *arg)
{
	struct flipper *f = arg;

	while (!atomic_load(&f->done)) {
		assert_int_equal(td_exporter_publish(f->x, f->runs[f->publishes % 2], 1, NULL,
						     &some_health), 0);
		f->publishes++;
		/* a pause, or under valgrind (one thread at a time) the server starves */
		usleep(200);
	}
	return NULL;
}

static void test_publish_while_scraping(void **state)
{
	(void)state;
	int port = free_port();
	struct td_run *a = window_run("redis-server", 100, 5, 1, 0.1);
	struct td_run *b = window_run("memcached", 200, 5, 1, 0.5);
	const struct td_run *ra[] = { a }, *rb[] = { b };
	struct flipper f = { .x = start_ok(port), .runs = { ra, rb } };
	char *want_a = render_ok(ra, 1, NULL, &some_health), *want_b = render_ok(rb, 1, NULL, &some_health);
	int seen_a = 0, seen_b = 0;
	pthread_t t;

	assert_int_equal(td_exporter_publish(f.x, ra, 1, NULL, &some_health), 0);
	assert_int_equal(pthread_create(&t, NULL, flip, &f), 0);
	for (int i = 0; i < 200 || !seen_a || !seen_b; i++) {
		char *response = http(port, "GET /metrics HTTP/1.1\r\n\r\n"), *body = body_of_200(response);

		/* one window or the other, whole, never a mix */
		if (!strcmp(body, want_a))
			seen_a++;
		else if (!strcmp(body, want_b))
			seen_b++;
		else
			fail_msg("scrape %d is neither window:\n%s", i, body);
		free(response);
		assert_true(i < 5000);
	}
	atomic_store(&f.done, true);
	pthread_join(t, NULL);
	assert_true(f.publishes > 2);
	td_exporter_stop(f.x);
	free(want_a);
	free(want_b);
	td_run_free(a);
	td_run_free(b);
}

static void test_stop_is_prompt(void **state)
{
	(void)state;
	int port = free_port(), idle;
	struct td_exporter *x = start_ok(port);
	long long t0;
	char c;

	/* the thread is waiting for this client's request when stop comes */
	idle = connect_to(port);
	usleep(100000);
	t0 = ms_now();
	td_exporter_stop(x);
	assert_true(ms_now() - t0 < 500);
	assert_true(recv(idle, &c, 1, 0) <= 0); /* closed or reset, not answered */
	close(idle);

	/* and an idle server */
	x = start_ok(port);
	t0 = ms_now();
	td_exporter_stop(x);
	assert_true(ms_now() - t0 < 500);
	td_exporter_stop(NULL);
}

static void test_listen_addresses(void **state)
{
	(void)state;
	int port = free_port(), status;
	char listen[64], err[256], args[128];
	struct td_exporter *x;
	char *out;

	/* localhost is ::1 or 127.0.0.1, as the resolver orders them: curl
	 * tries both, as Prometheus does */
	snprintf(listen, sizeof(listen), "localhost:%d", port);
	x = td_exporter_start(listen, err, sizeof(err));
	if (!x)
		fail_msg("%s: %s", listen, err);
	snprintf(args, sizeof(args), "-f -o /dev/null -w '%%{http_code}' http://localhost:%d/metrics", port);
	out = curl(args, &status);
	assert_int_equal(status, 0);
	assert_string_equal(out, "200");
	free(out);
	td_exporter_stop(x);

	/* IPv6 loopback, where the machine has it */
	snprintf(listen, sizeof(listen), "[::1]:%d", port);
	x = td_exporter_start(listen, err, sizeof(err));
	if (x) {
		snprintf(args, sizeof(args), "-g -f -o /dev/null -w '%%{http_code}' 'http://[::1]:%d/metrics'", port);
		out = curl(args, &status);
		assert_int_equal(status, 0);
		assert_string_equal(out, "200");
		free(out);
		td_exporter_stop(x);
	} else if (strstr(err, "Cannot assign requested address") ||
		   strstr(err, "Address family not supported")) {
		printf("no IPv6 loopback here: [::1] not tried (%s)\n", err);
	} else {
		fail_msg("%s: %s", listen, err);
	}
}

static void test_listen_errors(void **state)
{
	(void)state;
	static const struct {
		const char *listen, *problem;
	} bad[] = {
		{ "127.0.0.1", "no port in --metrics-listen '127.0.0.1': write it as HOST:PORT" },
		{ "", "no port" },
		{ "127.0.0.1:", "use a whole number from 1 to 65535" },
		{ "127.0.0.1:0", "bad value '0' for the --metrics-listen port" },
		{ "127.0.0.1:65536", "bad value '65536' for the --metrics-listen port" },
		{ "127.0.0.1:-1", "bad value '-1'" },
		{ "127.0.0.1:http", "bad value 'http'" },
		{ "127.0.0.1:94 64", "bad value '94 64'" },
		{ ":9464", "name the host to listen on" },
		{ "[]:9464", "name the host to listen on" },
		{ "::1:9464", "put an IPv6 address in brackets" },
		{ "[::1:9464", "write an IPv6 address as [ADDRESS]:PORT" },
		{ "[::1]9464", "write an IPv6 address as [ADDRESS]:PORT" },
		{ "no-such-host.invalid:9464", "cannot resolve the host of --metrics-listen 'no-such-host.invalid:9464'" },
		{ "192.0.2.1:9464", "cannot listen on 192.0.2.1:9464: no interface of this host has that address" },
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct td_exporter *x;

		err[0] = '\0';
		x = td_exporter_start(bad[i].listen, err, sizeof(err));
		if (x || !strstr(err, bad[i].problem))
			fail_msg("'%s': %s, not '%s'", bad[i].listen, x ? "started" : err, bad[i].problem);
		assert_null(strchr(err, '\n'));
	}
	assert_null(td_exporter_start(NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "no port"));
}

static void test_port_in_use(void **state)
{
	(void)state;
	int port = free_port();
	struct td_exporter *first = start_ok(port), *second;
	char listen[64], err[256] = "", want[128];

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	second = td_exporter_start(listen, err, sizeof(err));
	assert_null(second);
	snprintf(want, sizeof(want), "cannot listen on %s: the port is in use by another program", listen);
	assert_non_null(strstr(err, want));
	td_exporter_stop(first);

	/* free again once the first has stopped (SO_REUSEADDR) */
	first = start_ok(port);
	td_exporter_stop(first);
}

/* Out of file descriptors for the socket, then for the eventfd, then
 * (where malloc can be made to fail) out of memory. */
static void test_start_without_resources(void **state)
{
	(void)state;
	int port = free_port(), lowest = dup(0), fd, status;
	struct rlimit old, low;
	pid_t child;
	char listen[64], err[256];

	assert_true(lowest >= 0);
	close(lowest);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	/* the server raises the soft limit as far as the hard one lets it, so
	 * both are lowered, in a child that is gone afterwards */
	child = fork();
	if (child == 0) {
		for (int spare = 1; spare >= 0; spare--) {
			low.rlim_cur = low.rlim_max = (rlim_t)(lowest + spare);
			err[0] = '\0';
			if (setrlimit(RLIMIT_NOFILE, &low))
				_exit(77); /* valgrind keeps the hard limit its own */
			if (td_exporter_start(listen, err, sizeof(err)))
				_exit(10 + spare);
			if (!strstr(err, spare ? "cannot start the HTTP server on 127.0.0.1:"
					       : "cannot listen on 127.0.0.1:") ||
			    !strstr(err, "Too many open files"))
				_exit(20 + spare);
			/* nothing left open: the lowest free descriptor is the same
			 * (checked where the limit leaves room for one) */
			if (spare && (fd = dup(0)) != lowest)
				_exit(30);
			if (spare)
				close(fd);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		print_message("  out of descriptors: not checked, the hard limit cannot be lowered here\n");
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("out of descriptors: the child failed its check %d", WEXITSTATUS(status));
#if CAN_FAIL_MALLOC
	if (can_fail_malloc()) {
		atomic_store(&malloc_fail_after, 0);
		assert_null(td_exporter_start(listen, err, sizeof(err)));
		atomic_store(&malloc_fail_after, -1);
		assert_string_equal(err, "out of memory starting the metrics exporter");
	}
#endif
}

static void test_server_out_of_memory(void **state)
{
	(void)state;
#if CAN_FAIL_MALLOC
	int port = free_port(), fd;
	struct td_exporter *x;
	struct td_run *a, *b;
	char *want, *response;
	size_t len;

	if (!can_fail_malloc())
		skip();
	a = window_run("redis-server", 100, 5, 1, 0.1);
	b = window_run("memcached", 200, 5, 1, 0.5);
	const struct td_run *ra[] = { a }, *rb[] = { b };
	x = start_ok(port);
	assert_int_equal(td_exporter_publish(x, ra, 1, NULL, &some_health), 0);
	want = render_ok(ra, 1, NULL, &some_health);

	/* a publish that cannot render keeps the last window */
	atomic_store(&malloc_fail_after, 0);
	assert_int_equal(td_exporter_publish(x, rb, 1, NULL, &some_health), -ENOMEM);
	atomic_store(&malloc_fail_after, -1);
	response = http(port, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_string_equal(body_of_200(response), want);
	free(response);

	/* a scrape that cannot copy the text: 503 (or, when libmicrohttpd's
	 * own allocation fails first, a closed connection), and the next one
	 * works (the client allocates only once the answer is there) */
	fd = connect_to(port);
	atomic_store(&malloc_fail_after, 0);
	assert_int_equal(send(fd, "GET /metrics HTTP/1.1\r\n\r\n", 27, 0), 27);
	assert_int_equal(poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 10000), 1);
	atomic_store(&malloc_fail_after, -1);
	response = read_all(fd, &len);
	assert_true(!*response || !strncmp(response, "HTTP/1.1 503 Service Unavailable\r\n", 34));
	free(response);
	response = http(port, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_string_equal(body_of_200(response), want);
	free(response);

	td_exporter_stop(x);
	free(want);
	td_run_free(a);
	td_run_free(b);
#else
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parser_refuses_bad_text),
		cmocka_unit_test(test_parser_reads_good_text),
		cmocka_unit_test(test_render_window),
		cmocka_unit_test(test_empty_window_is_health_only),
		cmocka_unit_test(test_nan_values_are_left_out),
		cmocka_unit_test(test_label_values_are_escaped),
		cmocka_unit_test(test_user_label_names_are_sanitised),
		cmocka_unit_test(test_one_series_per_process_name),
		cmocka_unit_test(test_values_round_trip),
		cmocka_unit_test(test_render_out_of_memory),
		cmocka_unit_test(test_serves_metrics),
		cmocka_unit_test(test_bad_clients_cannot_hang_it),
		cmocka_unit_test(test_slowloris_leaves_room),
		cmocka_unit_test(test_publish_while_scraping),
		cmocka_unit_test(test_stop_is_prompt),
		cmocka_unit_test(test_listen_addresses),
		cmocka_unit_test(test_listen_errors),
		cmocka_unit_test(test_port_in_use),
		cmocka_unit_test(test_start_without_resources),
		cmocka_unit_test(test_server_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
