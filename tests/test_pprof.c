// SPDX-License-Identifier: BSD-3-Clause
/*
 * The pprof export (user/render/pprof.h), read back as a viewer reads it:
 * gunzipped with zlib and decoded with protobuf-c's generated unpacker.
 * Sample counts, leaf-first locations, functions, mappings and labels,
 * one Location per frame however many stacks share it, the thread filter,
 * the header (types, period, time, comments) and the errors. With
 * TD_PPROF_OUT set to a directory, test_samples_and_locations leaves its
 * profile there as sample.pb.gz, for tests/check_pprof.sh to read with
 * another decoder.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <zlib.h>

#include "pprof.h"
#include "profile.h"
#include "profile.pb-c.h"
#include "run.h"

typedef Perftools__Profiles__Profile Profile;

enum { MAIN, HOT, JIT, SCHED, UNKNOWN, HOT_LATER };

/* Two threads of one group, one of another; stacks share frames. */
static struct td_run *sample_run(const char *event, int64_t started_ns)
{
	struct td_frame frames[] = {
		[MAIN] = { .function = "main", .module = "app", .offset = 0x1234, .file = "app.c", .line = 10 },
		[HOT] = { .function = "hot", .module = "app", .offset = 0x40, .file = "hot.c", .line = 99 },
		[JIT] = { .module = "libjit.so", .offset = 0x10 },
		[SCHED] = { .function = "schedule", .module = "[kernel]", .offset = 0xffff0000, .kernel = true },
		[UNKNOWN] = { 0 },
		[HOT_LATER] = { .function = "hot", .module = "app", .offset = 0x44, .file = "hot.c", .line = 100 },
	};
	uint32_t deep[] = { MAIN, HOT, SCHED }, jit[] = { MAIN, JIT }, odd[] = { MAIN, HOT_LATER, UNKNOWN };
	struct td_profile_stack stacks[] = {
		{ .tid = 101, .pid = 100, .comm = "main", .count = 70, .nr_frames = 3, .frames = deep },
		{ .tid = 102, .pid = 100, .comm = "io_thd_0", .count = 5, .truncated = true, .nr_frames = 2, .frames = jit },
		{ .tid = 102, .pid = 100, .comm = "io_thd_0", .count = 1, .nr_frames = 0, .frames = deep },
		{ .tid = 103, .pid = 100, .comm = "io_thd_1", .count = 3, .nr_frames = 3, .frames = odd },
	};
	struct td_run *run = td_run_new();
	struct td_profile *p = td_profile_new();

	assert_non_null(run);
	assert_non_null(p);
	run->started_ns = started_ns;
	run->ended_ns = started_ns + 3000000000;
	run->process = strdup("app");
	run->profile = p;
	p->event = strdup(event);
	p->unit = strdup("samples");
	p->frequency_hz = 99;
	p->samples = 79;
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		assert_int_equal(td_profile_intern_frame(p, &frames[i]), (int64_t)i);
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++)
		assert_int_equal(td_profile_add_stack(p, &stacks[i]), 0);
	return run;
}

/* Writes runs as pprof into memory: td_pprof_write's return, the bytes in *data. */
static int write_pprof(struct td_run **runs, size_t n, const char *thread, char **data, size_t *len, char *err)
{
	FILE *out = open_memstream(data, len);
	int ret;

	assert_non_null(out);
	ret = td_pprof_write(out, (const struct td_run *const *)runs, n, thread, err, 256);
	assert_int_equal(fclose(out), 0);
	return ret;
}

static uint8_t *gunzip(const char *data, size_t len, size_t *out_len)
{
	z_stream z = { .next_in = (Bytef *)data, .avail_in = (uInt)len };
	size_t cap = 4096;
	uint8_t *buf = malloc(cap);
	int ret;

	assert_non_null(buf);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK); /* gzip only: a zlib or raw stream fails */
	do {
		if (z.total_out == cap) {
			buf = realloc(buf, cap *= 2);
			assert_non_null(buf);
		}
		z.next_out = buf + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		ret = inflate(&z, Z_NO_FLUSH);
		assert_true(ret == Z_OK || ret == Z_STREAM_END);
	} while (ret != Z_STREAM_END);
	assert_int_equal(z.avail_in, 0); /* one gzip member, nothing after it */
	*out_len = z.total_out;
	inflateEnd(&z);
	return buf;
}

static const char *str(const Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

/* What go tool pprof's Profile.CheckValid asks: ids nonzero, unique and resolvable, one value per type. */
static void assert_valid(const Profile *p)
{
	assert_true(p->n_string_table > 0);
	assert_string_equal(p->string_table[0], "");
	for (size_t i = 0; i < p->n_mapping; i++)
		assert_int_equal(p->mapping[i]->id, i + 1);
	for (size_t i = 0; i < p->n_function; i++)
		assert_int_equal(p->function[i]->id, i + 1);
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		assert_int_equal(l->id, i + 1);
		assert_true(l->mapping_id <= p->n_mapping);
		for (size_t k = 0; k < l->n_line; k++)
			assert_true(l->line[k]->function_id >= 1 && l->line[k]->function_id <= p->n_function);
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		assert_int_equal(p->sample[i]->n_value, p->n_sample_type);
		for (size_t k = 0; k < p->sample[i]->n_location_id; k++)
			assert_true(p->sample[i]->location_id[k] >= 1 && p->sample[i]->location_id[k] <= p->n_location);
	}
}

static Profile *decode(const char *data, size_t len)
{
	size_t raw_len;
	uint8_t *raw = gunzip(data, len, &raw_len);
	Profile *p = perftools__profiles__profile__unpack(NULL, raw_len, raw);

	free(raw);
	assert_non_null(p);
	assert_valid(p);
	return p;
}

/* Writes the bytes to $TD_PPROF_OUT/name, when set. */
static void keep(const char *data, size_t len, const char *name)
{
	const char *dir = getenv("TD_PPROF_OUT");
	char path[4096];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Writes and decodes, asserting success; keep_as: a name for keep(), or NULL. */
static Profile *export(struct td_run **runs, size_t n, const char *thread, const char *keep_as)
{
	char *data = NULL, err[256] = "";
	size_t len = 0;
	int ret = write_pprof(runs, n, thread, &data, &len, err);
	Profile *p;

	if (ret)
		fail_msg("td_pprof_write: %d %s", ret, err);
	if (keep_as)
		keep(data, len, keep_as);
	p = decode(data, len);
	free(data);
	return p;
}

static const Perftools__Profiles__Location *location(const Profile *p, uint64_t id)
{
	assert_true(id >= 1 && id <= p->n_location);
	return p->location[id - 1];
}

/* The function name at a location, "" for one with no line (an address only). */
static const char *location_name(const Profile *p, uint64_t id)
{
	const Perftools__Profiles__Location *l = location(p, id);

	if (!l->n_line)
		return "";
	assert_int_equal(l->n_line, 1);
	return str(p, p->function[l->line[0]->function_id - 1]->name);
}

static const Perftools__Profiles__Label *label(const Perftools__Profiles__Sample *s, const Profile *p, const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (strcmp(str(p, s->label[i]->key), key) == 0)
			return s->label[i];
	return NULL;
}

/* The sample of thread tid with n locations. */
static const Perftools__Profiles__Sample *sample_of(const Profile *p, int64_t tid, size_t n)
{
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Label *l = label(p->sample[i], p, "tid");

		if (l && l->num == tid && p->sample[i]->n_location_id == n)
			return p->sample[i];
	}
	fail_msg("no sample of tid %lld with %zu locations", (long long)tid, n);
	return NULL;
}

static void free_runs(struct td_run **runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		td_run_free(runs[i]);
}

static void test_samples_and_locations(void **state)
{
	struct td_run *run = sample_run("cpu-clock", 1700000000000000000);
	Profile *p = export(&run, 1, NULL, "sample.pb.gz");
	const Perftools__Profiles__Sample *deep, *jit, *odd, *empty;
	const Perftools__Profiles__Location *l;

	(void)state;
	assert_int_equal(p->n_sample, 4);
	deep = sample_of(p, 101, 3);
	jit = sample_of(p, 102, 2);
	empty = sample_of(p, 102, 0);
	odd = sample_of(p, 103, 3);
	assert_int_equal(deep->value[0], 70);
	assert_int_equal(jit->value[0], 5);
	assert_int_equal(empty->value[0], 1);
	assert_int_equal(odd->value[0], 3);

	/* leaf first */
	assert_string_equal(location_name(p, deep->location_id[0]), "schedule");
	assert_string_equal(location_name(p, deep->location_id[1]), "hot");
	assert_string_equal(location_name(p, deep->location_id[2]), "main");
	assert_string_equal(location_name(p, odd->location_id[0]), "[unknown]");
	assert_string_equal(location_name(p, odd->location_id[1]), "hot");

	/* one Location per frame: main is shared by three stacks */
	assert_int_equal(p->n_location, 6);
	assert_int_equal(deep->location_id[2], jit->location_id[1]);
	assert_int_equal(deep->location_id[2], odd->location_id[2]);
	/* two lines of hot: two Locations, one Function (name, file) */
	assert_int_not_equal(deep->location_id[1], odd->location_id[1]);
	assert_int_equal(location(p, deep->location_id[1])->line[0]->function_id,
			 location(p, odd->location_id[1])->line[0]->function_id);
	assert_int_equal(location(p, deep->location_id[1])->line[0]->line, 99);
	assert_int_equal(location(p, odd->location_id[1])->line[0]->line, 100);
	assert_int_equal(p->n_function, 4); /* main, hot, schedule, [unknown] */

	/* functions: names and files */
	l = location(p, deep->location_id[2]);
	assert_string_equal(str(p, p->function[l->line[0]->function_id - 1]->filename), "app.c");
	assert_string_equal(str(p, p->function[l->line[0]->function_id - 1]->system_name), "main");
	assert_int_equal(l->line[0]->line, 10);
	assert_int_equal(l->address, 0x1234);
	assert_string_equal(str(p, p->mapping[l->mapping_id - 1]->filename), "app");
	l = location(p, deep->location_id[0]);
	assert_string_equal(str(p, p->function[l->line[0]->function_id - 1]->filename), "");
	assert_string_equal(str(p, p->mapping[l->mapping_id - 1]->filename), "[kernel]");

	/* unresolved in a module: address and mapping, no line */
	l = location(p, jit->location_id[0]);
	assert_int_equal(l->n_line, 0);
	assert_int_equal(l->address, 0x10);
	assert_string_equal(str(p, p->mapping[l->mapping_id - 1]->filename), "libjit.so");
	assert_false(p->mapping[l->mapping_id - 1]->has_functions);
	/* no module at all: no mapping, a name to show */
	l = location(p, odd->location_id[0]);
	assert_int_equal(l->mapping_id, 0);
	assert_int_equal(l->n_line, 1);

	/* mappings: one per module; app's covers its addresses and is fully symbolized */
	assert_int_equal(p->n_mapping, 3);
	l = location(p, deep->location_id[2]);
	assert_true(p->mapping[l->mapping_id - 1]->has_functions);
	assert_true(p->mapping[l->mapping_id - 1]->has_line_numbers);
	assert_int_equal(p->mapping[l->mapping_id - 1]->memory_limit, 0x1235);

	/* labels */
	assert_string_equal(str(p, label(deep, p, "thread")->str), "main");
	assert_int_equal(label(deep, p, "pid")->num, 100);
	assert_string_equal(str(p, label(odd, p, "thread")->str), "io_thd_1");
	assert_null(label(deep, p, "truncated"));
	assert_string_equal(str(p, label(jit, p, "truncated")->str), "true");

	perftools__profiles__profile__free_unpacked(p, NULL);
	free_runs(&run, 1);
}

static void test_header(void **state)
{
	struct td_run *runs[] = { sample_run("cpu-clock", 1700000010000000000), sample_run("cpu-clock", 1700000000000000000) };
	Profile *p;

	(void)state;
	runs[0]->profile->frequency_hz = 0;
	runs[0]->profile->period = 100000;
	p = export(runs, 2, NULL, NULL);
	assert_int_equal(p->n_sample_type, 1);
	assert_string_equal(str(p, p->sample_type[0]->type), "samples");
	assert_string_equal(str(p, p->sample_type[0]->unit), "count");
	assert_non_null(p->period_type);
	assert_string_equal(str(p, p->period_type->type), "cpu-clock");
	assert_string_equal(str(p, p->period_type->unit), "count");
	assert_int_equal(p->period, 100000);
	assert_int_equal(p->time_nanos, 1700000000000000000);
	assert_int_equal(p->duration_nanos, 6000000000);
	assert_int_equal(p->n_comment, 3);
	assert_non_null(strstr(str(p, p->comment[0]), "topdown"));
	assert_non_null(strstr(str(p, p->comment[0]), "2 runs"));
	assert_non_null(strstr(str(p, p->comment[1]), runs[0]->id));
	assert_non_null(strstr(str(p, p->comment[2]), runs[1]->id));
	/* the runs' frames are one set of Locations: each stack twice, each frame once */
	assert_int_equal(p->n_sample, 8);
	assert_int_equal(p->n_location, 6);
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* at a frequency: a sample per 1e9 / Hz ns of CPU time */
	p = export(runs + 1, 1, NULL, NULL);
	assert_string_equal(str(p, p->period_type->unit), "nanoseconds");
	assert_int_equal(p->period, 1000000000 / 99);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free_runs(runs, 2);
}

static void test_thread_filter(void **state)
{
	struct td_run *run = sample_run("cpu-clock", 1700000000000000000);
	Profile *p;

	(void)state;
	/* a tid: that thread's stack, and only its frames */
	p = export(&run, 1, "101", NULL);
	assert_int_equal(p->n_sample, 1);
	assert_int_equal(p->sample[0]->value[0], 70);
	assert_int_equal(p->n_location, 3);
	assert_int_equal(p->n_mapping, 2); /* app, [kernel] */
	assert_non_null(strstr(str(p, p->comment[0]), "thread 101"));
	perftools__profiles__profile__free_unpacked(p, NULL);
	/* a name: its group, io_thd_0 and io_thd_1 */
	p = export(&run, 1, "io_thd_7", NULL);
	assert_int_equal(p->n_sample, 3);
	for (size_t i = 0; i < p->n_sample; i++)
		assert_non_null(strstr(str(p, label(p->sample[i], p, "thread")->str), "io_thd_"));
	perftools__profiles__profile__free_unpacked(p, NULL);
	free_runs(&run, 1);
}

static void test_errors(void **state)
{
	struct td_run *runs[] = { sample_run("cpu-clock", 1700000000000000000),
				  sample_run("mem_load_retired.l3_miss", 1700000000000000000) };
	char *data = NULL, err[256] = "";
	size_t len = 0;
	FILE *full;

	(void)state;
	/* no stacks in scope: nothing written */
	assert_int_equal(write_pprof(runs, 1, "nosuch", &data, &len, err), -ENODATA);
	assert_int_equal(len, 0);
	assert_non_null(strstr(err, "no stacks of that thread"));
	free(data);
	data = NULL;
	/* different events: refused, naming both */
	assert_int_equal(write_pprof(runs, 2, NULL, &data, &len, err), -EINVAL);
	assert_int_equal(len, 0);
	assert_non_null(strstr(err, "(cpu-clock, mem_load_retired.l3_miss)"));
	assert_non_null(strstr(err, "--label"));
	free(data);
	data = NULL;
	/* no run */
	assert_int_equal(write_pprof(runs, 0, NULL, &data, &len, err), -ENODATA);
	free(data);
	/* a write that fails */
	full = fopen("/dev/full", "w");
	if (full) {
		assert_int_equal(td_pprof_write(full, (const struct td_run *const *)runs, 1, NULL, err, sizeof(err)), -EIO);
		assert_non_null(strstr(err, "cannot write the profile"));
		fclose(full);
	}
	free_runs(runs, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_and_locations),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_thread_filter),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
