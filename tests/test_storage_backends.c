// SPDX-License-Identifier: BSD-3-Clause
/*
 * The storage interface on both backends: what is written comes back the
 * same, failed writes leave nothing, filters (labels, process, time, run
 * id prefixes, metric rows) select the same runs, deletion works in
 * batches, several processes write at once. Then what is PostgreSQL's own:
 * connection errors that name the host but never the password, schema
 * versions, text that is not UTF-8. The time limit on an operation on
 * both, and PostgreSQL's cancel of a statement that waits too long. And
 * opening a store from flags and the environment.
 */
#include <errno.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "backend.h"
#include "backends.h"
#include "store_open.h"

/* ---- comparing runs ---- */

static void assert_same_double(double a, double b)
{
	if (isnan(a) || isnan(b))
		assert_true(isnan(a) && isnan(b));
	else
		assert_true(a == b);
}

static void assert_same_string(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_same_threads(const struct td_thread_row *a, const struct td_thread_row *b,
				size_t n, size_t nr_events)
{
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].tid, b[i].tid);
		assert_int_equal(a[i].pid, b[i].pid);
		assert_string_equal(a[i].comm, b[i].comm);
		assert_int_equal(a[i].exited, b[i].exited);
		assert_int_equal(a[i].oncpu_ns, b[i].oncpu_ns);
		assert_int_equal(a[i].voluntary_switches, b[i].voluntary_switches);
		assert_int_equal(a[i].involuntary_switches, b[i].involuntary_switches);
		assert_int_equal(a[i].migrations, b[i].migrations);
		assert_int_equal(a[i].runq_wait_ns, b[i].runq_wait_ns);
		for (size_t e = 0; e < nr_events; e++) {
			assert_same_double(a[i].counters[e].value, b[i].counters[e].value);
			assert_same_double(a[i].counters[e].running_fraction,
					   b[i].counters[e].running_fraction);
		}
	}
}

static void assert_same_profile(const struct td_profile *a, const struct td_profile *b)
{
	if (!a || !b) {
		assert_ptr_equal(a, b);
		return;
	}
	assert_string_equal(a->event, b->event);
	assert_string_equal(a->unit, b->unit);
	assert_int_equal(a->period, b->period);
	assert_int_equal(a->frequency_hz, b->frequency_hz);
	assert_int_equal(a->samples, b->samples);
	assert_int_equal(a->lost_samples, b->lost_samples);
	assert_int_equal(a->nr_frames, b->nr_frames);
	for (size_t i = 0; i < a->nr_frames; i++) {
		assert_same_string(a->frames[i].function, b->frames[i].function);
		assert_same_string(a->frames[i].module, b->frames[i].module);
		assert_same_string(a->frames[i].file, b->frames[i].file);
		assert_int_equal(a->frames[i].offset, b->frames[i].offset);
		assert_int_equal(a->frames[i].line, b->frames[i].line);
		assert_int_equal(a->frames[i].kernel, b->frames[i].kernel);
	}
	assert_int_equal(a->nr_stacks, b->nr_stacks);
	for (size_t i = 0; i < a->nr_stacks; i++) {
		const struct td_profile_stack *x = &a->stacks[i], *y = &b->stacks[i];

		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->pid, y->pid);
		assert_string_equal(x->comm, y->comm);
		assert_int_equal(x->count, y->count);
		assert_int_equal(x->truncated, y->truncated);
		assert_int_equal(x->nr_frames, y->nr_frames);
		assert_memory_equal(x->frames, y->frames, x->nr_frames * sizeof(*x->frames));
	}
}

static void assert_same_run(const struct td_run *a, const struct td_run *b)
{
	assert_string_equal(a->id, b->id);
	assert_int_equal(a->started_ns, b->started_ns);
	assert_int_equal(a->ended_ns, b->ended_ns);
	assert_same_string(a->process, b->process);
	assert_int_equal(a->level, b->level);
	assert_same_string(a->collector, b->collector);
	assert_int_equal(a->labels.count, b->labels.count);
	for (size_t i = 0; i < a->labels.count; i++) {
		assert_string_equal(a->labels.items[i].key, b->labels.items[i].key);
		assert_string_equal(a->labels.items[i].value, b->labels.items[i].value);
	}
	assert_int_equal(a->dropped, b->dropped);
	assert_int_equal(a->partial, b->partial);
	assert_int_equal(a->nr_events, b->nr_events);
	for (size_t e = 0; e < a->nr_events; e++)
		assert_string_equal(a->event_names[e], b->event_names[e]);
	assert_int_equal(a->nr_threads, b->nr_threads);
	assert_same_threads(a->threads, b->threads, a->nr_threads, a->nr_events);
	assert_int_equal(a->nr_intervals, b->nr_intervals);
	for (size_t i = 0; i < a->nr_intervals; i++) {
		assert_int_equal(a->intervals[i].seq, b->intervals[i].seq);
		assert_int_equal(a->intervals[i].start_ns, b->intervals[i].start_ns);
		assert_int_equal(a->intervals[i].end_ns, b->intervals[i].end_ns);
		assert_int_equal(a->intervals[i].nr_threads, b->intervals[i].nr_threads);
		assert_same_threads(a->intervals[i].threads, b->intervals[i].threads,
				    a->intervals[i].nr_threads, a->nr_events);
	}
	assert_int_equal(a->nr_metrics, b->nr_metrics);
	for (size_t i = 0; i < a->nr_metrics; i++) {
		const struct td_metric_row *x = &a->metrics[i], *y = &b->metrics[i];

		assert_int_equal(x->scope, y->scope);
		assert_string_equal(x->scope_key, y->scope_key);
		assert_int_equal(x->interval_seq, y->interval_seq);
		assert_string_equal(x->path, y->path);
		assert_same_string(x->parent, y->parent);
		assert_int_equal(x->level, y->level);
		assert_same_double(x->value, y->value);
		assert_int_equal(x->threshold_crossed, y->threshold_crossed);
		assert_same_double(x->confidence, y->confidence);
		assert_int_equal(x->counted_ns, y->counted_ns);
	}
	assert_same_profile(a->profile, b->profile);
}

/* ---- a run with a bit of everything ---- */

static struct td_thread_row thread_row(uint32_t tid, const char *comm, double base)
{
	struct td_thread_row t = {
		.tid = tid, .pid = 100, .exited = tid % 2 == 0, .oncpu_ns = 1000000ull * tid,
		.voluntary_switches = tid + 1, .involuntary_switches = tid + 2,
		.migrations = tid + 3, .runq_wait_ns = UINT64_MAX - tid,
	};

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	for (int e = 0; e < 3; e++) {
		/* Values with every bit of the mantissa in use. */
		t.counters[e].value = base * (e + 1) + 1.0 / 3.0;
		t.counters[e].running_fraction = 0.1 * (e + 1);
	}
	return t;
}

/* Frames with every field in use, NULLs and escapes among them; one stack
 * without frames; one frame no stack names. */
static struct td_profile *sample_profile(void)
{
	struct td_frame frames[] = {
		{ .function = "main", .module = "app", .offset = 0x1234, .file = "app.c", .line = 10 },
		{ .function = "hot\tloop'\"", .module = "libx.so", .offset = 0x10, .file = "x.c", .line = 99 },
		{ .module = "libjit.so", .offset = UINT32_MAX },
		{ .function = "schedule", .module = "[kernel]", .kernel = true },
		{ .function = "[unknown]" },
	};
	uint32_t deep[] = { 0, 1, 3 }, shallow[] = { 0, 2 };
	struct td_profile_stack stacks[] = {
		{ .tid = 101, .pid = 100, .comm = "main", .count = 70, .nr_frames = 3, .frames = deep },
		{ .tid = 102, .pid = 100, .comm = "io_thd_0", .count = UINT32_MAX + 5ull, .truncated = true,
		  .nr_frames = 2, .frames = shallow },
		{ .tid = 102, .pid = 100, .comm = "io_thd_0", .count = 1, .nr_frames = 0, .frames = deep },
	};
	struct td_profile *p = td_profile_new();

	p->event = strdup("cpu-clock");
	p->unit = strdup("samples");
	p->frequency_hz = 99;
	p->samples = UINT32_MAX + 80ull;
	p->lost_samples = 4;
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		assert_int_equal(td_profile_intern_frame(p, &frames[i]), (int64_t)i);
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++)
		assert_int_equal(td_profile_add_stack(p, &stacks[i]), 0);
	return p;
}

static struct td_run *full_run(const char *process, int64_t started_ns)
{
	static const char *const events[] = { "cycles", "instructions", "topdown-be-bound" };
	struct td_run *run = new_run(process, started_ns,
				     "host=box-1,git_branch=it's_50%;--,note=a\"b\\c\tq,utf=héllo");

	run->level = 3;
	run->dropped = UINT64_MAX - 5; /* above INT64_MAX */
	run->partial = true;
	run->nr_events = 3;
	for (int e = 0; e < 3; e++)
		run->event_names[e] = strdup(events[e]);
	run->nr_threads = 3;
	run->threads = calloc(3, sizeof(*run->threads));
	run->threads[0] = thread_row(103, "abcdefghijklmno", 3e9);
	run->threads[1] = thread_row(101, "ma\tin\\x'", 1e9);
	run->threads[2] = thread_row(102, "io_thd_0", 2e9);
	run->threads[2].counters[2].value = NAN;
	run->nr_intervals = 2;
	run->intervals = calloc(2, sizeof(*run->intervals));
	run->intervals[0] = (struct td_interval){ .seq = 0, .start_ns = started_ns,
						  .end_ns = started_ns + 500, .nr_threads = 2 };
	run->intervals[0].threads = calloc(2, sizeof(struct td_thread_row));
	run->intervals[0].threads[0] = thread_row(101, "main", 4e8);
	run->intervals[0].threads[1] = thread_row(102, "io_thd_0", 5e8);
	run->intervals[1] = (struct td_interval){ .seq = 3, .start_ns = started_ns + 500,
						  .end_ns = run->ended_ns, .nr_threads = 1 };
	run->intervals[1].threads = calloc(1, sizeof(struct td_thread_row));
	run->intervals[1].threads[0] = thread_row(101, "main", 6e8);
	add_row(run, TD_SCOPE_THREAD, "101", "Backend_Bound", 0.5, true, 1.0);
	add_row(run, TD_SCOPE_THREAD, "101", "Backend_Bound.Memory_Bound", 1.0 / 7, false, 0.75);
	add_row(run, TD_SCOPE_GROUP, "io_thd_*", "Frontend_Bound", NAN, false, 0.5);
	add_row(run, TD_SCOPE_PROCESS, "100", "Retiring", 0.2, false, NAN);
	run->metrics[3].interval_seq = 3;
	add_node(run, "Retiring", 0.125, true);
	run->metrics[0].counted_ns = 750000000;
	run->metrics[4].counted_ns = UINT64_C(1) << 62; /* a century and more: past 32 bits */
	run->profile = sample_profile();
	return run;
}

static void test_round_trip(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *run = full_run("app'; DROP TABLE runs;--", 1700000000000000000);
	struct td_run *bare = td_run_new(), *back = NULL;

	assert_int_equal(td_store_write_run(b->store, run, b->err, ERRLEN), 0);
	assert_int_equal(td_store_read_run(b->store, run->id, &back, b->err, ERRLEN), 0);
	assert_same_run(run, back);
	td_run_free(back);
	/* A run with nothing but its header, read on another connection. */
	struct td_store *other = backend_open(b);

	assert_int_equal(td_store_write_run(b->store, bare, b->err, ERRLEN), 0);
	assert_int_equal(td_store_read_run(other, bare->id, &back, b->err, ERRLEN), 0);
	assert_same_run(bare, back);
	td_run_free(back);
	td_store_close(other);
	td_run_free(bare);
	td_run_free(run);
}

/* ---- walking a run part by part ---- */

/* What a walk handed over, rebuilt into a run; stop_after: fail the walk
 * at that metric row (0: never). */
struct walked {
	struct td_run *run;
	size_t headers, metric_rows, stop_after;
};

static int walked_header(void *ctx, const struct td_run *run, char *err, size_t errlen)
{
	struct walked *w = ctx;
	struct td_run *copy = td_run_new();

	(void)err;
	(void)errlen;
	assert_non_null(copy);
	assert_int_equal(run->nr_intervals, 0); /* they come one by one */
	assert_int_equal(run->nr_metrics, 0);
	assert_null(run->profile);
	memcpy(copy->id, run->id, sizeof(copy->id));
	copy->started_ns = run->started_ns;
	copy->ended_ns = run->ended_ns;
	copy->process = run->process ? strdup(run->process) : NULL;
	copy->collector = run->collector ? strdup(run->collector) : NULL;
	copy->level = run->level;
	copy->dropped = run->dropped;
	copy->partial = run->partial;
	for (size_t i = 0; i < run->labels.count; i++)
		assert_int_equal(td_labels_set(&copy->labels, run->labels.items[i].key,
					       run->labels.items[i].value), 0);
	copy->nr_events = run->nr_events;
	for (size_t e = 0; e < run->nr_events; e++)
		copy->event_names[e] = strdup(run->event_names[e]);
	copy->nr_threads = run->nr_threads;
	copy->threads = calloc(run->nr_threads + 1, sizeof(*copy->threads));
	if (run->nr_threads)
		memcpy(copy->threads, run->threads, run->nr_threads * sizeof(*copy->threads));
	w->run = copy;
	w->headers++;
	return 0;
}

static int walked_interval(void *ctx, const struct td_run *run, const struct td_interval *iv,
			   char *err, size_t errlen)
{
	struct walked *w = ctx;
	struct td_run *copy = w->run;
	struct td_interval *grown = realloc(copy->intervals, (copy->nr_intervals + 1) * sizeof(*grown));

	(void)run;
	(void)err;
	(void)errlen;
	assert_non_null(grown);
	copy->intervals = grown;
	grown[copy->nr_intervals] = *iv;
	grown[copy->nr_intervals].threads = calloc(iv->nr_threads + 1, sizeof(*iv->threads));
	if (iv->nr_threads)
		memcpy(grown[copy->nr_intervals].threads, iv->threads, iv->nr_threads * sizeof(*iv->threads));
	copy->nr_intervals++;
	return 0;
}

static int walked_metric(void *ctx, const struct td_run *run, const struct td_metric_row *row,
			 char *err, size_t errlen)
{
	struct walked *w = ctx;

	(void)run;
	if (++w->metric_rows == w->stop_after) {
		snprintf(err, errlen, "the reader stopped at row %zu", w->metric_rows);
		return -EPIPE;
	}
	return td_run_add_metric(w->run, row);
}

static const struct td_run_visitor walk_all = { walked_header, walked_interval, walked_metric, NULL };

/* Walks the run and checks that it hands over what td_store_read_run() reads. */
static void assert_walk_reads(struct backend *b, const struct td_run *run)
{
	struct td_run_visitor v = walk_all;
	struct walked w = { 0 };
	struct td_run *back = NULL;

	v.ctx = &w;
	assert_int_equal(td_store_walk_run(b->store, run->id, &v, b->err, ERRLEN), 0);
	assert_int_equal(w.headers, 1);
	assert_int_equal(td_store_read_run(b->store, run->id, &back, b->err, ERRLEN), 0);
	td_profile_free(back->profile); /* the walk leaves the profile out */
	back->profile = NULL;
	assert_same_run(back, w.run);
	td_run_free(back);
	td_run_free(w.run);
}

/*
 * td_store_walk_run hands over what td_store_read_run reads: a run with
 * intervals (one without threads, and more rows than one cursor batch),
 * a run with nothing but its header. A missing run is -ENOENT; a visitor
 * that fails stops the walk with its own error, and the store goes on.
 */
static void test_walk_run(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *run = full_run("walked", 1700000000000000000), *bare = td_run_new();
	struct td_run *lng = full_run("long", 1700000001000000000);
	struct td_run_visitor v = walk_all;
	struct walked w = { .stop_after = 2 };
	size_t n = 1500; /* x 3 counters: more rows than one FETCH */

	run->intervals = realloc(run->intervals, 3 * sizeof(*run->intervals));
	run->intervals[2] = (struct td_interval){ .seq = 7, .start_ns = run->ended_ns, .end_ns = run->ended_ns };
	run->nr_intervals = 3;
	for (size_t i = 0; i < lng->nr_intervals; i++)
		free(lng->intervals[i].threads);
	lng->intervals = realloc(lng->intervals, n * sizeof(*lng->intervals));
	for (size_t i = 0; i < n; i++) {
		lng->intervals[i] = (struct td_interval){ .seq = (uint32_t)i, .start_ns = (int64_t)i,
							  .end_ns = (int64_t)i + 1, .nr_threads = 1 };
		lng->intervals[i].threads = calloc(1, sizeof(struct td_thread_row));
		lng->intervals[i].threads[0] = thread_row(101 + (uint32_t)i % 7, "worker", 1e6 * (double)i);
	}
	lng->nr_intervals = n;
	for (size_t i = 0; i < 5000; i++)
		add_row(lng, TD_SCOPE_THREAD, "101", "Backend_Bound", 1.0 / (double)(i + 1), i % 2, 1.0);
	assert_int_equal(td_store_write_run(b->store, run, b->err, ERRLEN), 0);
	assert_int_equal(td_store_write_run(b->store, bare, b->err, ERRLEN), 0);
	assert_int_equal(td_store_write_run(b->store, lng, b->err, ERRLEN), 0);
	assert_walk_reads(b, run);
	assert_walk_reads(b, bare);
	assert_walk_reads(b, lng);

	/* Parts the visitor does not take are not read. */
	v.interval = NULL;
	v.ctx = &w;
	w.stop_after = 0;
	assert_int_equal(td_store_walk_run(b->store, run->id, &v, b->err, ERRLEN), 0);
	assert_int_equal(w.run->nr_intervals, 0);
	assert_int_equal(w.run->nr_metrics, run->nr_metrics);
	td_run_free(w.run);

	v = walk_all;
	v.ctx = &w;
	w = (struct walked){ .stop_after = 2 };
	assert_int_equal(td_store_walk_run(b->store, lng->id, &v, b->err, ERRLEN), -EPIPE);
	assert_string_equal(b->err, "the reader stopped at row 2");
	assert_int_equal(w.metric_rows, 2);
	td_run_free(w.run);
	w = (struct walked){ 0 };
	assert_int_equal(td_store_walk_run(b->store, "00000000-0000-4000-8000-000000000000", &v, b->err,
					   ERRLEN), -ENOENT);
	assert_int_equal(w.headers, 0);
	assert_non_null(strstr(b->err, "topdown list"));
	assert_walk_reads(b, run); /* the failed walks left the connection usable */
	td_run_free(lng);
	td_run_free(bare);
	td_run_free(run);
}

static void test_read_missing_run(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *back = (struct td_run *)&back;

	assert_int_equal(td_store_read_run(b->store, "00000000-0000-4000-8000-000000000000", &back,
					   b->err, ERRLEN), -ENOENT);
	assert_null(back);
	assert_non_null(strstr(b->err, "00000000-0000-4000-8000-000000000000"));
	assert_non_null(strstr(b->err, "topdown list"));
}

static size_t count_runs(struct backend *b, const struct td_run_filter *filter)
{
	struct td_run_summary *runs = NULL;
	size_t count = 0;

	if (td_store_list_runs(b->store, filter, &runs, &count, b->err, ERRLEN) != 0)
		fail_msg("list failed: %s", b->err);
	td_run_summaries_free(runs, count);
	return count;
}

static void test_duplicate_id(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *run = full_run("app", 10), *changed = full_run("other", 20), *back = NULL;

	assert_int_equal(td_store_write_run(b->store, run, b->err, ERRLEN), 0);
	memcpy(changed->id, run->id, sizeof(run->id));
	assert_int_equal(td_store_write_run(b->store, changed, b->err, ERRLEN), -EEXIST);
	assert_non_null(strstr(b->err, "already stored"));
	assert_non_null(strstr(b->err, run->id));
	assert_int_equal(count_runs(b, NULL), 1);
	assert_int_equal(td_store_read_run(b->store, run->id, &back, b->err, ERRLEN), 0);
	assert_same_run(run, back);
	td_run_free(back);
	td_run_free(changed);
	td_run_free(run);
}

/* The last interval repeats a tid: by then the run row, the threads and
 * the first interval are in. None of it may stay, and the store works on. */
static void test_failed_write_leaves_nothing(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *bad = full_run("app", 30), *good = full_run("app", 40), *back = NULL;
	struct td_interval *last = &bad->intervals[1];
	struct td_run_metrics *rows = NULL;
	size_t count = 0;

	last->threads = realloc(last->threads, 2 * sizeof(*last->threads));
	last->threads[1] = last->threads[0];
	last->nr_threads = 2;
	assert_int_equal(td_store_write_run(b->store, bad, b->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(b->err, "bug"));
	assert_int_equal(count_runs(b, NULL), 0);
	assert_int_equal(td_store_read_run(b->store, bad->id, &back, b->err, ERRLEN), -ENOENT);
	assert_int_equal(td_store_write_run(b->store, good, b->err, ERRLEN), 0);
	/* Only the good run's rows are there. */
	assert_int_equal(td_store_read_metrics(b->store, NULL, NULL, &rows, &count, b->err, ERRLEN),
			 0);
	assert_int_equal(count, 1);
	assert_string_equal(rows[0].run.id, good->id);
	assert_int_equal(rows[0].nr_rows, 1);
	td_run_metrics_free(rows, count);
	td_run_free(bad);
	td_run_free(good);
}

/* The ids a listing gives, in order. */
static void assert_listed(struct backend *b, const struct td_run_filter *filter,
			  const char (*ids)[TD_RUN_ID_LEN], size_t n)
{
	struct td_run_summary *runs = NULL;
	size_t count = 0;

	if (td_store_list_runs(b->store, filter, &runs, &count, b->err, ERRLEN) != 0)
		fail_msg("list failed: %s", b->err);
	assert_int_equal(count, n);
	for (size_t i = 0; i < count; i++)
		assert_string_equal(runs[i].id, ids[i]);
	td_run_summaries_free(runs, count);
}

static void test_list_filters(void **state)
{
	struct backend *b = backend_of(state);
	char id[5][TD_RUN_ID_LEN], want[5][TD_RUN_ID_LEN];
	struct td_labels labels;
	struct td_run_filter f;

	/* Written out of order: the start decides the order, newest first. */
	store_run(b, new_run("db", 300, "branch=main,test=get"), id[0]);
	store_run(b, new_run("db", 100, "branch=main,test=set"), id[1]);
	store_run(b, new_run("web", 500, "branch=dev,test=get"), id[2]);
	store_run(b, new_run("db", 400, "branch=dev,test=get"), id[3]);
	store_run(b, new_run("web", 200, NULL), id[4]);

	memcpy(want[0], id[2], TD_RUN_ID_LEN);
	memcpy(want[1], id[3], TD_RUN_ID_LEN);
	memcpy(want[2], id[0], TD_RUN_ID_LEN);
	memcpy(want[3], id[4], TD_RUN_ID_LEN);
	memcpy(want[4], id[1], TD_RUN_ID_LEN);
	assert_listed(b, NULL, (const char (*)[TD_RUN_ID_LEN])want, 5);

	td_labels_init(&labels);
	td_labels_set(&labels, "test", "get");
	f = (struct td_run_filter){ .labels = &labels };
	assert_listed(b, &f, (const char (*)[TD_RUN_ID_LEN])want, 3);
	td_labels_set(&labels, "branch", "dev"); /* AND */
	assert_listed(b, &f, (const char (*)[TD_RUN_ID_LEN])want, 2);
	f.process = "db";
	assert_listed(b, &f, (const char (*)[TD_RUN_ID_LEN])want + 1, 1);
	f = (struct td_run_filter){ .since_ns = 300, .before_ns = 500 };
	assert_listed(b, &f, (const char (*)[TD_RUN_ID_LEN])want + 1, 2);
	f = (struct td_run_filter){ .run_id = id[4] };
	assert_listed(b, &f, (const char (*)[TD_RUN_ID_LEN])want + 3, 1);
	f = (struct td_run_filter){ .limit = 2 };
	assert_listed(b, &f, (const char (*)[TD_RUN_ID_LEN])want, 2);
	/* The oldest two, oldest first. */
	memcpy(want[0], id[1], TD_RUN_ID_LEN);
	memcpy(want[1], id[4], TD_RUN_ID_LEN);
	f = (struct td_run_filter){ .limit = 2, .oldest_first = true };
	assert_listed(b, &f, (const char (*)[TD_RUN_ID_LEN])want, 2);
	td_labels_set(&labels, "branch", "nope");
	f = (struct td_run_filter){ .labels = &labels };
	assert_listed(b, &f, NULL, 0);
	td_labels_free(&labels);
}

/* Values that would change meaning as SQL text or LIKE patterns match
 * only themselves, everywhere a filter takes text. */
static void test_sql_metacharacters(void **state)
{
	static const char *const nasty[] = {
		"it's", "50%", "a_b", "x'; DROP TABLE runs;--", "\"q\"", "back\\slash", "%", "_",
	};
	enum { N = sizeof(nasty) / sizeof(nasty[0]) };
	struct backend *b = backend_of(state);
	char id[N][TD_RUN_ID_LEN], decoy[TD_RUN_ID_LEN];
	struct td_labels want;

	for (size_t i = 0; i < N; i++) {
		struct td_run *run = new_run(nasty[i], (int64_t)i + 1, NULL);
		char path[64];

		td_labels_set(&run->labels, "tag", nasty[i]);
		snprintf(path, sizeof(path), "Backend_Bound.%s", nasty[i]);
		add_row(run, TD_SCOPE_GROUP, nasty[i], path, 0.5, true, 1);
		store_run(b, run, id[i]);
	}
	/* Would match "50%", "a_b", "%" or "_" as a LIKE pattern. */
	struct td_run *run = new_run("50x", 100, "tag=axb");

	add_row(run, TD_SCOPE_GROUP, "axb", "Backend_Bound.axb", 0.5, true, 1);
	store_run(b, run, decoy);

	td_labels_init(&want);
	for (size_t i = 0; i < N; i++) {
		struct td_metric_filter metrics = { .scope = TD_SCOPE_GROUP, .scope_key = nasty[i],
						    .node = nasty[i] };
		struct td_run_filter by_labels = { .labels = &want };
		struct td_run_filter by_process = { .process = nasty[i] };
		struct td_run_metrics *rows = NULL;
		size_t count = 0;

		td_labels_set(&want, "tag", nasty[i]);
		assert_listed(b, &by_labels, (const char (*)[TD_RUN_ID_LEN])id[i], 1);
		assert_listed(b, &by_process, (const char (*)[TD_RUN_ID_LEN])id[i], 1);
		assert_int_equal(td_store_read_metrics(b->store, &by_labels, &metrics, &rows, &count,
						       b->err, ERRLEN), 0);
		assert_int_equal(count, 1);
		assert_string_equal(rows[0].run.id, id[i]);
		td_run_metrics_free(rows, count);
		/* The node filter alone, over every run. */
		metrics.scope_key = NULL;
		assert_int_equal(td_store_read_metrics(b->store, NULL, &metrics, &rows, &count,
						       b->err, ERRLEN), 0);
		assert_int_equal(count, 1);
		assert_string_equal(rows[0].run.id, id[i]);
		td_run_metrics_free(rows, count);
	}
	td_labels_free(&want);
}

/* Runs with ids chosen to share prefixes. */
static void store_with_id(struct backend *b, const char *id)
{
	struct td_run *run = new_run("app", 1, NULL);

	snprintf(run->id, sizeof(run->id), "%s", id);
	store_run(b, run, NULL);
}

static void test_resolve_run_id(void **state)
{
	struct backend *b = backend_of(state);
	char id[TD_RUN_ID_LEN];

	store_with_id(b, "abcdef01-1111-4000-8000-000000000001");
	store_with_id(b, "abcdef01-2222-4000-8000-000000000002");
	store_with_id(b, "abcdef02-3333-4000-8000-000000000003");
	store_with_id(b, "12345678");
	store_with_id(b, "12345678-9999-4000-8000-000000000004");

	/* Whole ids, unique prefixes of 8 or more, any case. */
	assert_int_equal(td_store_resolve_run_id(b->store, "abcdef01-2222-4000-8000-000000000002",
						 id, b->err, ERRLEN), 0);
	assert_string_equal(id, "abcdef01-2222-4000-8000-000000000002");
	assert_int_equal(td_store_resolve_run_id(b->store, "abcdef02", id, b->err, ERRLEN), 0);
	assert_string_equal(id, "abcdef02-3333-4000-8000-000000000003");
	assert_int_equal(td_store_resolve_run_id(b->store, "ABCDEF01-1", id, b->err, ERRLEN), 0);
	assert_string_equal(id, "abcdef01-1111-4000-8000-000000000001");
	/* A whole id that is also a prefix of another is that id. */
	assert_int_equal(td_store_resolve_run_id(b->store, "12345678", id, b->err, ERRLEN), 0);
	assert_string_equal(id, "12345678");

	assert_int_equal(td_store_resolve_run_id(b->store, "abcdef01", id, b->err, ERRLEN),
			 -ENOTUNIQ);
	assert_non_null(strstr(b->err, "ambiguous"));
	assert_non_null(strstr(b->err, "abcdef01-1111-4000-8000-000000000001"));
	assert_non_null(strstr(b->err, "abcdef01-2222-4000-8000-000000000002"));
	assert_null(strstr(b->err, "abcdef02"));

	assert_int_equal(td_store_resolve_run_id(b->store, "abcdef", id, b->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(b->err, "at least its first 8"));
	assert_int_equal(td_store_resolve_run_id(b->store, "fedcba98", id, b->err, ERRLEN),
			 -ENOENT);
	assert_non_null(strstr(b->err, "topdown list"));
	assert_int_equal(td_store_resolve_run_id(b->store, "abc'; --", id, b->err, ERRLEN),
			 -EINVAL);
	assert_non_null(strstr(b->err, "not a run id"));
	assert_int_equal(td_store_resolve_run_id(b->store, "", id, b->err, ERRLEN), -EINVAL);
	assert_int_equal(td_store_resolve_run_id(b->store, "abcdef01-1111-4000-8000-0000000000011",
						 id, b->err, ERRLEN), -EINVAL);
}

static void test_read_metrics_filters(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run_metrics *rows = NULL;
	struct td_metric_filter f;
	char old[TD_RUN_ID_LEN], new[TD_RUN_ID_LEN];
	struct td_run *run;
	size_t count = 0;

	run = new_run("app", 100, "k=v");
	add_node(run, "Backend_Bound", 0.4, true);
	add_node(run, "Backend_Bound.Memory_Bound", 0.3, true);
	add_node(run, "Backend_Bound.Memory_Bound.DRAM_Bound", 0.2, true);
	add_row(run, TD_SCOPE_PROCESS, "100", "tma_info_thread_ipc", 1.5, false, 1); /* level 1 */
	run->metrics[run->nr_metrics - 1].level = 0;                             /* Info */
	add_row(run, TD_SCOPE_PROCESS, "200", "Backend_Bound", 0.9, true, 1);
	add_row(run, TD_SCOPE_THREAD, "7", "Backend_Bound", 0.7, true, 1);
	add_node(run, "Retiring", 0.5, false);
	run->metrics[run->nr_metrics - 1].interval_seq = 0; /* an interval row: never read */
	store_run(b, run, old);
	run = new_run("app", 200, "k=v");
	add_node(run, "Backend_Bound", 0.1, false);
	add_node(run, "Frontend_Bound.Fetch_Latency.DRAM_Bound_Lookalike", 0.3, true);
	store_run(b, run, new);
	store_run(b, new_run("app", 300, "k=v"), NULL); /* no rows at all: left out */

	/* Process rows of every level, newest run first, written order. */
	f = (struct td_metric_filter){ .scope = TD_SCOPE_PROCESS };
	assert_int_equal(td_store_read_metrics(b->store, NULL, &f, &rows, &count, b->err, ERRLEN), 0);
	assert_int_equal(count, 2);
	assert_string_equal(rows[0].run.id, new);
	assert_string_equal(rows[1].run.id, old);
	assert_string_equal(rows[0].run.labels.items[0].value, "v");
	assert_int_equal(rows[1].nr_rows, 5);
	assert_string_equal(rows[1].rows[0].path, "Backend_Bound");
	assert_string_equal(rows[1].rows[2].path, "Backend_Bound.Memory_Bound.DRAM_Bound");
	assert_string_equal(rows[1].rows[2].parent, "Backend_Bound.Memory_Bound");
	assert_int_equal(rows[1].rows[2].level, 3);
	assert_string_equal(rows[1].rows[4].scope_key, "200");
	td_run_metrics_free(rows, count);

	/* Tree levels 1..2 of pid 100; the newest run only. */
	f = (struct td_metric_filter){ .scope = TD_SCOPE_PROCESS, .scope_key = "100",
				       .min_level = 1, .max_level = 2 };
	assert_int_equal(td_store_read_metrics(b->store, &(struct td_run_filter){ .limit = 1 }, &f,
					       &rows, &count, b->err, ERRLEN), 0);
	assert_int_equal(count, 1);
	assert_int_equal(rows[0].nr_rows, 1);
	td_run_metrics_free(rows, count);
	assert_int_equal(td_store_read_metrics(b->store, NULL, &f, &rows, &count, b->err, ERRLEN), 0);
	assert_int_equal(count, 2);
	assert_int_equal(rows[1].nr_rows, 2);
	td_run_metrics_free(rows, count);

	/* A node by its last part matches at any depth, and only whole parts. */
	f = (struct td_metric_filter){ .scope = TD_SCOPE_PROCESS, .node = "DRAM_Bound" };
	assert_int_equal(td_store_read_metrics(b->store, NULL, &f, &rows, &count, b->err, ERRLEN), 0);
	assert_int_equal(count, 1);
	assert_string_equal(rows[0].run.id, old);
	td_run_metrics_free(rows, count);
	f = (struct td_metric_filter){ .scope = TD_SCOPE_PROCESS, .node = "Memory_Bound.DRAM_Bound",
				       .min_value = 0.15 };
	assert_int_equal(td_store_read_metrics(b->store, NULL, &f, &rows, &count, b->err, ERRLEN), 0);
	assert_int_equal(count, 1);
	td_run_metrics_free(rows, count);
	f.min_value = 0.25;
	assert_int_equal(td_store_read_metrics(b->store, NULL, &f, &rows, &count, b->err, ERRLEN), 0);
	assert_int_equal(count, 0);
	assert_null(rows);

	/* Threads, and the runs filter. */
	f = (struct td_metric_filter){ .scope = TD_SCOPE_THREAD };
	assert_int_equal(td_store_read_metrics(b->store, &(struct td_run_filter){ .run_id = old },
					       &f, &rows, &count, b->err, ERRLEN), 0);
	assert_int_equal(count, 1);
	assert_string_equal(rows[0].rows[0].scope_key, "7");
	assert_true(rows[0].rows[0].value == 0.7);
	td_run_metrics_free(rows, count);

	f = (struct td_metric_filter){ .scope = (enum td_metric_scope)9 };
	assert_int_equal(td_store_read_metrics(b->store, NULL, &f, &rows, &count, b->err, ERRLEN),
			 -EINVAL);
}

/* One number a query over the backend's own tables gives. */
static long long stored_count(struct backend *b, const char *sql)
{
	sqlite3 *lite = NULL;
	sqlite3_stmt *st = NULL;
	long long n;

	if (is_postgres(b))
		return pg_int(b->dsn, sql);
	assert_int_equal(sqlite3_open(b->path, &lite), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(lite, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(lite);
	return n;
}

static void test_delete_in_batches(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run_filter old = { .before_ns = 1000 };
	struct td_labels labels;
	char kept[TD_RUN_ID_LEN];
	struct td_run *back = NULL;
	size_t deleted = 0;

	for (int i = 0; i < 23; i++) {
		struct td_run *run = full_run("app", 10 * i);

		td_labels_set(&run->labels, "batch", i % 2 ? "odd" : "even");
		store_run(b, run, NULL);
	}
	store_run(b, full_run("app", 5000), kept);

	/* Only the odd ones first: labels narrow what is deleted. */
	td_labels_init(&labels);
	td_labels_set(&labels, "batch", "odd");
	old.labels = &labels;
	assert_int_equal(td_store_delete_runs(b->store, &old, 4, &deleted, b->err, ERRLEN), 0);
	assert_int_equal(deleted, 11);
	old.labels = NULL;
	assert_int_equal(count_runs(b, &old), 12);
	/* Then the rest, batches of 5 (the last one short). */
	assert_int_equal(td_store_delete_runs(b->store, &old, 5, &deleted, b->err, ERRLEN), 0);
	assert_int_equal(deleted, 12);
	assert_int_equal(count_runs(b, NULL), 1);
	assert_int_equal(td_store_delete_runs(b->store, &old, 5, &deleted, b->err, ERRLEN), 0);
	assert_int_equal(deleted, 0);

	/* The survivor is whole, and no row of the others remains. */
	assert_int_equal(td_store_read_run(b->store, kept, &back, b->err, ERRLEN), 0);
	assert_int_equal(back->nr_threads, 3);
	assert_int_equal(back->nr_intervals, 2);
	assert_int_equal(back->nr_metrics, 5);
	td_run_free(back);
	struct td_run_metrics *rows = NULL;
	size_t count = 0;

	assert_int_equal(td_store_read_metrics(b->store, NULL,
					       &(struct td_metric_filter){ .scope = TD_SCOPE_THREAD },
					       &rows, &count, b->err, ERRLEN), 0);
	assert_int_equal(count, 1);
	td_run_metrics_free(rows, count);
	if (is_postgres(b)) {
		assert_int_equal(pg_int(b->dsn, "SELECT (SELECT count(*) FROM metrics) +"
					" (SELECT count(*) FROM threads) + (SELECT count(*) FROM counters)"
					" + (SELECT count(*) FROM intervals)"), 5 + 6 + 18 + 2);
	}
	/* The profile's rows went with their runs: the survivor's alone remain. */
	assert_int_equal(stored_count(b, "SELECT (SELECT count(*) FROM profiles) +"
				      " (SELECT count(*) FROM profile_frames) +"
				      " (SELECT count(*) FROM profile_stacks)"), 1 + 5 + 3);
	td_labels_free(&labels);
}

/* ---- several processes at once ---- */

enum { NR_WRITERS = 6, RUNS_EACH = 3 };

/* In a child: open the store (migrating a new one) and write runs. */
static void writer_child(const struct td_store_config *cfg, int gate, int index)
{
	char err[ERRLEN], byte;
	struct td_store *store;
	int ret = 0;

	if (read(gate, &byte, 1) != 0) /* EOF: the gate opened */
		_exit(3);
	store = td_store_open(cfg, err, ERRLEN);
	if (!store) {
		fprintf(stderr, "child open: %s\n", err);
		_exit(1);
	}
	for (int i = 0; i < RUNS_EACH && ret == 0; i++) {
		struct td_run *run = full_run("app", 1000 * index + i);

		ret = td_store_write_run(store, run, err, ERRLEN);
		if (ret)
			fprintf(stderr, "child write: %s\n", err);
		td_run_free(run);
	}
	td_store_close(store);
	_exit(ret ? 2 : 0);
}

static bool race_writers(const struct td_store_config *cfg)
{
	pid_t pids[NR_WRITERS];
	bool all_ok = true;
	int gate[2];

	assert_int_equal(pipe(gate), 0);
	for (int i = 0; i < NR_WRITERS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			close(gate[1]);
			writer_child(cfg, gate[0], i);
		}
	}
	close(gate[0]);
	close(gate[1]);
	for (int i = 0; i < NR_WRITERS; i++) {
		int status;

		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		all_ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	return all_ok;
}

/*
 * Writers start together on a store nobody has created yet: each migrates
 * or waits for the migration, and every run arrives.
 */
static void test_concurrent_writers(void **state)
{
	struct backend *b = backend_of(state);
	struct td_store_config cfg = b->cfg;
	char path[PATH_MAX + 16], dsn[1100];

	/* The fixture's connection must not cross the fork. */
	td_store_close(b->store);
	b->store = NULL;
	if (is_postgres(b)) {
		assert_true(pg_new_database(dsn, sizeof(dsn), b->err, ERRLEN));
		cfg.dsn = dsn;
	} else {
		snprintf(path, sizeof(path), "%s/shared.db", b->dir);
		cfg.path = path;
	}
	assert_true(race_writers(&cfg));
	b->store = td_store_open(&cfg, b->err, ERRLEN);
	assert_non_null(b->store);
	assert_int_equal(count_runs(b, NULL), NR_WRITERS * RUNS_EACH);
	if (is_postgres(b))
		assert_int_equal(pg_int(dsn, "SELECT count(*) - max(version) FROM schema_migrations"),
				 0);
}

/*
 * A writer holds a transaction that deletes every metric row: a reader
 * opening the store meanwhile sees the last committed state at once,
 * without waiting (WAL in SQLite, MVCC in PostgreSQL). Waiting would take
 * SQLite's 5 s busy timeout, or for ever in PostgreSQL; the bound is below
 * that and far above an open and a read on a loaded host under qemu-user
 * (over 1 s there, once).
 */
static void test_reader_while_writing(void **state)
{
	struct backend *b = backend_of(state);
	const char *hold = "DELETE FROM metrics";
	char id[TD_RUN_ID_LEN];
	struct td_run *back = NULL;
	struct timespec start, end;
	PGconn *pg = NULL;
	sqlite3 *lite = NULL;

	store_run(b, full_run("app", 1), id);
	if (is_postgres(b)) {
		pg = PQconnectdb(b->dsn);
		assert_int_equal(PQstatus(pg), CONNECTION_OK);
		PQclear(PQexec(pg, "BEGIN"));
		PGresult *res = PQexec(pg, hold);

		assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
		PQclear(res);
	} else {
		assert_int_equal(sqlite3_open(b->path, &lite), SQLITE_OK);
		assert_int_equal(sqlite3_exec(lite, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_exec(lite, hold, NULL, NULL, NULL), SQLITE_OK);
	}
	/* Opening the store too (the schema check) does not wait. */
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct td_store *reader = backend_open(b);

	assert_int_equal(td_store_read_run(reader, id, &back, b->err, ERRLEN), 0);
	clock_gettime(CLOCK_MONOTONIC, &end);
	assert_int_equal(back->nr_metrics, 5);
	assert_true(end.tv_sec - start.tv_sec < 4);
	td_run_free(back);
	td_store_close(reader);
	if (pg) {
		PQclear(PQexec(pg, "ROLLBACK"));
		PQfinish(pg);
	} else {
		sqlite3_exec(lite, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(lite);
	}
}

/* ---- the time limit (td_store_set_deadline) ---- */

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Reads every run's rows: 0 or the error, with the count read. */
static int read_all_rows(struct backend *b, size_t *count)
{
	struct td_metric_filter all = { .scope = TD_SCOPE_PROCESS };
	struct td_run_metrics *rows = NULL;
	int ret = td_store_read_metrics(b->store, NULL, &all, &rows, count, b->err, ERRLEN);

	td_run_metrics_free(rows, *count);
	return ret;
}

static void test_deadline(void **state)
{
	struct backend *b = backend_of(state);
	size_t count = 0;
	int64_t start, full_ns;

	store_many_runs(b, 200);
	start = monotonic_ns();
	assert_int_equal(read_all_rows(b, &count), 0);
	full_ns = monotonic_ns() - start;
	assert_int_equal(count, 200);
	assert_false(td_store_timed_out(b->store));

	/* A deadline already gone: the read stops and says so. */
	td_store_set_deadline(b->store, monotonic_ns() - 1);
	assert_int_equal(read_all_rows(b, &count), -ETIMEDOUT);
	assert_non_null(strstr(b->err, "time limit"));
	assert_true(td_store_timed_out(b->store));

	/* Lifted: the same read works on the same connection, and the flag
	 * is clear again. */
	td_store_set_deadline(b->store, 0);
	assert_false(td_store_timed_out(b->store));
	start = monotonic_ns();
	assert_int_equal(read_all_rows(b, &count), 0);
	if (monotonic_ns() - start < full_ns)
		full_ns = monotonic_ns() - start; /* the first read warmed the caches */
	assert_int_equal(count, 200);

	/* One that comes while the read runs stops it there: a tenth of the
	 * time the whole read takes. */
	td_store_set_deadline(b->store, monotonic_ns() + full_ns / 10);
	start = monotonic_ns();
	assert_int_equal(read_all_rows(b, &count), -ETIMEDOUT);
	assert_true(monotonic_ns() - start < full_ns);
	assert_true(td_store_timed_out(b->store));

	/* A deadline far off changes nothing. */
	td_store_set_deadline(b->store, monotonic_ns() + 60 * 1000000000LL);
	assert_int_equal(read_all_rows(b, &count), 0);
	assert_int_equal(count, 200);
	assert_false(td_store_timed_out(b->store));
}

/* PostgreSQL: a statement waiting on a lock is cancelled at the deadline
 * (the server's statement_timeout), and once the deadline is lifted the
 * same wait is no longer cut short. */
static void test_pg_deadline_cancels_a_wait(void **state)
{
	struct backend *b = backend_of(state);
	int ready[2];
	size_t count = 0;
	int64_t start, waited;
	pid_t locker;
	char c;

	store_many_runs(b, 2);
	assert_int_equal(pipe(ready), 0);
	locker = fork();
	assert_true(locker >= 0);
	if (locker == 0) {
		PGconn *conn = PQconnectdb(b->dsn);
		PGresult *res = PQexec(conn, "BEGIN; LOCK TABLE runs IN ACCESS EXCLUSIVE MODE");
		bool locked = PQresultStatus(res) == PGRES_COMMAND_OK;

		PQclear(res);
		if (write(ready[1], locked ? "y" : "n", 1) != 1)
			_exit(1);
		usleep(1500 * 1000); /* then the transaction ends with the connection */
		PQfinish(conn);
		_exit(locked ? 0 : 1);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	assert_int_equal(c, 'y');

	td_store_set_deadline(b->store, monotonic_ns() + 300 * 1000000LL);
	start = monotonic_ns();
	assert_int_equal(read_all_rows(b, &count), -ETIMEDOUT);
	waited = monotonic_ns() - start;
	assert_non_null(strstr(b->err, "time limit"));
	assert_true(td_store_timed_out(b->store));
	assert_true(waited >= 250 * 1000000LL && waited < 1400 * 1000000LL);

	td_store_set_deadline(b->store, 0);
	assert_int_equal(read_all_rows(b, &count), 0); /* waits for the lock to go */
	assert_int_equal(count, 2);
	assert_false(td_store_timed_out(b->store));
	assert_int_equal(waitpid(locker, NULL, 0), locker);
}

/* ---- PostgreSQL's own ---- */

#define SECRET "s3cr3t-Pa55"

static void assert_open_fails(const char *dsn, int errnum, const char *words, char *err)
{
	struct td_store_config cfg = { .backend = "postgresql", .dsn = dsn };

	errno = 0;
	assert_null(td_store_open(&cfg, err, ERRLEN));
	assert_int_equal(errno, errnum);
	if (words && !strstr(err, words))
		fail_msg("'%s' not in: %s", words, err);
	if (strstr(err, SECRET))
		fail_msg("the password shows in: %s", err);
}

static void test_pg_unreachable(void **state)
{
	struct backend *b = backend_of(state);

	assert_open_fails("postgresql://topdown:" SECRET "@127.0.0.1:1/runs", ECONNREFUSED,
			  "127.0.0.1", b->err);
	assert_non_null(strstr(b->err, "cannot connect to PostgreSQL"));
	assert_non_null(strstr(b->err, "--dsn or TOPDOWN_DSN"));
	assert_open_fails("host=/nonexistent/socket/dir port=5 password=" SECRET " dbname=x",
			  ECONNREFUSED, "/nonexistent/socket/dir", b->err);
	/* The server is there but the database is not. */
	char dsn[1200];

	snprintf(dsn, sizeof(dsn), "%s dbname=no_such_db password=" SECRET, pg_server.dsn);
	assert_open_fails(dsn, ECONNREFUSED, "no_such_db", b->err);
	/* Malformed strings are never quoted: they may hold the password. */
	assert_open_fails("postgresql://topdown:" SECRET "@[::1", EINVAL, "malformed", b->err);
	assert_open_fails("host=x password " SECRET, EINVAL, "malformed", b->err);
	assert_open_fails("", EINVAL, "--dsn", b->err);
	assert_open_fails(NULL, EINVAL, "TOPDOWN_DSN", b->err);
}

static void test_pg_location_hides_password(void **state)
{
	struct backend *b = backend_of(state);
	struct td_store_config cfg = b->cfg;
	char dsn[1200];
	struct td_store *store;

	snprintf(dsn, sizeof(dsn), "%s password=" SECRET, b->dsn);
	cfg.dsn = dsn;
	store = td_store_open(&cfg, b->err, ERRLEN); /* trust: the password is not needed */
	assert_non_null(store);
	assert_null(strstr(td_store_location(store), SECRET));
	assert_non_null(strstr(td_store_location(store), "postgresql://postgres@"));
	td_store_close(store);
}

static void test_pg_newer_schema_is_refused(void **state)
{
	struct backend *b = backend_of(state);

	assert_true(pg_exec(b->dsn, "INSERT INTO schema_migrations (version, applied_ns)"
			    " VALUES (1000000, 0)", b->err, ERRLEN));
	assert_null(td_store_open(&b->cfg, b->err, ERRLEN));
	assert_non_null(strstr(b->err, "1000000"));
	assert_non_null(strstr(b->err, "upgrade topdown"));
}

/* PostgreSQL text is UTF-8: a name cut mid-character is refused whole. */
static void test_pg_text_not_utf8(void **state)
{
	struct backend *b = backend_of(state);
	struct td_run *run = full_run("app", 1);

	snprintf(run->threads[0].comm, sizeof(run->threads[0].comm), "thr\xc3");
	assert_int_equal(td_store_write_run(b->store, run, b->err, ERRLEN), -EINVAL);
	assert_non_null(strstr(b->err, "UTF-8"));
	assert_int_equal(count_runs(b, NULL), 0);
	td_run_free(run);
}

/* ---- opening from flags and the environment ---- */

/*
 * A reader opens what a writer made, reads it, and cannot write to it:
 * the front refuses, and so does the connection itself (SQLite opened
 * read-only, PostgreSQL's session read-only), whatever the user's rights.
 */
static void test_reader_mode(void **state)
{
	struct backend *b = backend_of(state);
	struct td_store_config cfg = b->cfg;
	struct td_run *run = full_run("app", 7);
	struct td_store *reader;
	char id[TD_RUN_ID_LEN], dsn[1100], path[PATH_MAX + 16];
	struct td_run_summary *listed = NULL;
	size_t deleted = 1, count = 0;

	store_run(b, full_run("app", 1), id);
	cfg.mode = TD_STORE_READ_ONLY;
	reader = td_store_open(&cfg, b->err, ERRLEN);
	if (!reader)
		fail_msg("reader open failed: %s", b->err);
	assert_int_equal(td_store_list_runs(reader, NULL, &listed, &count, b->err, ERRLEN), 0);
	assert_int_equal(count, 1);
	assert_string_equal(listed[0].id, id);
	td_run_summaries_free(listed, count);
	assert_int_equal(td_store_write_run(reader, run, b->err, ERRLEN), -EROFS);
	assert_int_equal(td_store_delete_runs(reader, NULL, 0, &deleted, b->err, ERRLEN), -EROFS);
	assert_int_equal(deleted, 0);
	/* Past the front: the connection refuses too, and nothing is written. */
	assert_true(reader->ops->write_run(reader, run, b->err, ERRLEN) < 0);
	assert_non_null(strstr(b->err, is_postgres(b) ? "read-only" : "readonly"));
	td_store_close(reader);
	assert_int_equal(count_runs(b, NULL), 1);
	td_run_free(run);

	/* A place no writer used: no store, and none made. */
	if (is_postgres(b)) {
		assert_true(pg_new_database(dsn, sizeof(dsn), b->err, ERRLEN));
		cfg.dsn = dsn;
	} else {
		snprintf(path, sizeof(path), "%s/typo.db", b->dir);
		cfg.path = path;
	}
	errno = 0;
	assert_null(td_store_open(&cfg, b->err, ERRLEN));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(b->err, is_postgres(b) ? "no topdown tables" : "no database at"));
	if (is_postgres(b))
		assert_int_equal(pg_int(dsn, "SELECT count(*) FROM information_schema.tables"
					" WHERE table_schema = current_schema()"), 0);
	else
		assert_int_equal(access(path, F_OK), -1);
}

static void test_open_flags(void **state)
{
	struct backend *b = backend_of(state);
	struct td_store_flags flags = { 0 };
	char where[PATH_MAX], path[PATH_MAX + 16];
	struct td_store *store;

	unsetenv("TOPDOWN_BACKEND");
	unsetenv("TOPDOWN_DSN");
	snprintf(path, sizeof(path), "%s/flag.db", b->dir);
	store = td_store_open_flags(&flags, path, TD_STORE_READ_WRITE, where, sizeof(where), b->err, ERRLEN);
	assert_non_null(store);
	assert_string_equal(where, path);
	td_store_close(store);

	/* Each flag with the other backend's flag. */
	flags = (struct td_store_flags){ .backend = "sqlite", .dsn = "host=x" };
	errno = 0;
	assert_null(td_store_open_flags(&flags, NULL, TD_STORE_READ_WRITE, NULL, 0, b->err, ERRLEN));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(b->err, "--dsn names a PostgreSQL server"));
	flags = (struct td_store_flags){ .backend = "postgresql" };
	errno = 0;
	assert_null(td_store_open_flags(&flags, path, TD_STORE_READ_WRITE, NULL, 0, b->err, ERRLEN));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(b->err, "--db names a SQLite file"));
	/* PostgreSQL from the environment, without a connection string. */
	flags = (struct td_store_flags){ 0 };
	setenv("TOPDOWN_BACKEND", "postgresql", 1);
	assert_null(td_store_open_flags(&flags, NULL, TD_STORE_READ_WRITE, NULL, 0, b->err, ERRLEN));
	assert_non_null(strstr(b->err, "TOPDOWN_DSN"));
	setenv("TOPDOWN_BACKEND", "mongo", 1);
	errno = 0;
	assert_null(td_store_open_flags(&flags, NULL, TD_STORE_READ_WRITE, NULL, 0, b->err, ERRLEN));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(b->err, "'mongo'"));
	assert_non_null(strstr(b->err, "postgresql"));
	/* The flag beats the environment. */
	flags.backend = "sqlite";
	store = td_store_open_flags(&flags, path, TD_STORE_READ_WRITE, NULL, 0, b->err, ERRLEN);
	assert_non_null(store);
	td_store_close(store);
	unsetenv("TOPDOWN_BACKEND");
	/* --db "" names no file: refused, not taken for the default. */
	flags = (struct td_store_flags){ 0 };
	errno = 0;
	assert_null(td_store_open_flags(&flags, "", TD_STORE_READ_ONLY, NULL, 0, b->err, ERRLEN));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(b->err, "--db was given an empty path"));
	/* Both stores in the environment and nothing to choose: refused. */
	setenv("TOPDOWN_DSN", "host=/nonexistent", 1);
	setenv("TOPDOWN_DB_PATH", path, 1);
	errno = 0;
	assert_null(td_store_open_flags(&flags, NULL, TD_STORE_READ_ONLY, NULL, 0, b->err, ERRLEN));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(b->err, "TOPDOWN_DSN and TOPDOWN_DB_PATH are both set"));
	/* --db chooses SQLite over TOPDOWN_DSN. */
	store = td_store_open_flags(&flags, path, TD_STORE_READ_ONLY, where, sizeof(where), b->err,
				    ERRLEN);
	if (!store)
		fail_msg("open failed: %s", b->err);
	assert_string_equal(where, path);
	td_store_close(store);
	unsetenv("TOPDOWN_DB_PATH");
	unsetenv("TOPDOWN_DSN");
	if (!pg_server.ready)
		return;
	/* --dsn alone means PostgreSQL, and so does TOPDOWN_DSN alone. */
	flags = (struct td_store_flags){ .dsn = pg_server.dsn };
	store = td_store_open_flags(&flags, NULL, TD_STORE_READ_WRITE, where, sizeof(where), b->err, ERRLEN);
	if (!store)
		fail_msg("open failed: %s", b->err);
	assert_non_null(strstr(where, "postgresql://"));
	td_store_close(store);
	flags = (struct td_store_flags){ 0 };
	setenv("TOPDOWN_DSN", pg_server.dsn, 1);
	store = td_store_open_flags(&flags, NULL, TD_STORE_READ_WRITE, where, sizeof(where), b->err,
				    ERRLEN);
	if (!store)
		fail_msg("open with TOPDOWN_DSN alone failed: %s", b->err);
	assert_non_null(strstr(where, "postgresql://"));
	td_store_close(store);
	setenv("TOPDOWN_BACKEND", "postgresql", 1);
	store = td_store_open_flags(&flags, NULL, TD_STORE_READ_WRITE, NULL, 0, b->err, ERRLEN);
	assert_non_null(store);
	td_store_close(store);
	unsetenv("TOPDOWN_BACKEND");
	unsetenv("TOPDOWN_DSN");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		ON_BOTH(test_round_trip),
		ON_BOTH(test_read_missing_run),
		ON_BOTH(test_walk_run),
		ON_BOTH(test_duplicate_id),
		ON_BOTH(test_failed_write_leaves_nothing),
		ON_BOTH(test_list_filters),
		ON_BOTH(test_sql_metacharacters),
		ON_BOTH(test_resolve_run_id),
		ON_BOTH(test_read_metrics_filters),
		ON_BOTH(test_delete_in_batches),
		ON_BOTH(test_concurrent_writers),
		ON_BOTH(test_reader_while_writing),
		ON_BOTH(test_deadline),
		ON_BOTH(test_reader_mode),
		BACKEND_TEST(test_pg_deadline_cancels_a_wait, "postgresql"),
		BACKEND_TEST(test_pg_unreachable, "postgresql"),
		BACKEND_TEST(test_pg_location_hides_password, "postgresql"),
		BACKEND_TEST(test_pg_newer_schema_is_refused, "postgresql"),
		BACKEND_TEST(test_pg_text_not_utf8, "postgresql"),
		BACKEND_TEST(test_open_flags, "sqlite"),
	};

	(void)argc;
	return run_on_backends("storage backends", tests, sizeof(tests) / sizeof(tests[0]),
			       argv[0]);
}
