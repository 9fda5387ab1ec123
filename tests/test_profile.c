// SPDX-License-Identifier: BSD-3-Clause
/*
 * The profile model (user/core/profile.c): frames and stacks are
 * deduplicated as they are added, across the hash tables' growth; and the
 * stored form of a stack's frame list (storage/storage.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend.h"
#include "profile.h"

static struct td_frame frame_named(const char *function, const char *module, uint64_t offset)
{
	return (struct td_frame){ .function = (char *)function, .module = (char *)module, .offset = offset };
}

static void test_frames_deduplicated(void **state)
{
	struct td_profile *p = td_profile_new();
	struct td_frame a = frame_named("hot_a", "app", 0x10), b = frame_named("hot_a", "app", 0x20);
	struct td_frame unresolved = frame_named(NULL, "app", 0x10), kernel = a;
	char name[64];

	(void)state;
	kernel.kernel = true;
	assert_int_equal(td_profile_intern_frame(p, &a), 0);
	assert_int_equal(td_profile_intern_frame(p, &b), 1); /* another address of it: another frame */
	assert_int_equal(td_profile_intern_frame(p, &unresolved), 2);
	assert_int_equal(td_profile_intern_frame(p, &kernel), 3);
	assert_int_equal(td_profile_intern_frame(p, &a), 0);
	assert_int_equal(p->nr_frames, 4);
	assert_ptr_not_equal(p->frames[0].function, a.function); /* a copy */
	/* Thousands, through several growths of the table, each still found. */
	for (int i = 0; i < 5000; i++) {
		char fn[32];
		struct td_frame f = frame_named(fn, "lib.so", (uint64_t)i);

		snprintf(fn, sizeof(fn), "f%d", i % 100);
		assert_int_equal(td_profile_intern_frame(p, &f), 4 + i);
	}
	for (int i = 0; i < 5000; i += 499) {
		char fn[32];
		struct td_frame f = frame_named(fn, "lib.so", (uint64_t)i);

		snprintf(fn, sizeof(fn), "f%d", i % 100);
		assert_int_equal(td_profile_intern_frame(p, &f), 4 + i);
	}
	td_frame_name(&p->frames[0], name, sizeof(name));
	assert_string_equal(name, "hot_a");
	td_frame_name(&p->frames[2], name, sizeof(name));
	assert_string_equal(name, "app+0x10");
	td_frame_name(&(struct td_frame){ 0 }, name, sizeof(name));
	assert_string_equal(name, "[unknown]");
	td_profile_free(p);
}

static void test_stacks_merge_per_thread(void **state)
{
	struct td_profile *p = td_profile_new();
	uint32_t ab[] = { 0, 1 }, ba[] = { 1, 0 };
	struct td_profile_stack s = { .tid = 7, .pid = 7, .comm = "main", .count = 3, .nr_frames = 2, .frames = ab };

	(void)state;
	td_profile_intern_frame(p, &(struct td_frame){ .function = "a" });
	td_profile_intern_frame(p, &(struct td_frame){ .function = "b" });
	assert_int_equal(td_profile_add_stack(p, &s), 0);
	assert_int_equal(td_profile_add_stack(p, &s), 0);
	assert_int_equal(p->nr_stacks, 1);
	assert_int_equal(p->stacks[0].count, 6);
	s.frames = ba; /* the same frames in another order: another stack */
	assert_int_equal(td_profile_add_stack(p, &s), 0);
	s.frames = ab;
	s.tid = 8; /* another thread */
	assert_int_equal(td_profile_add_stack(p, &s), 0);
	s.tid = 7;
	s.nr_frames = 1; /* a prefix */
	assert_int_equal(td_profile_add_stack(p, &s), 0);
	s.nr_frames = 2;
	s.truncated = true;
	assert_int_equal(td_profile_add_stack(p, &s), 0);
	assert_int_equal(p->nr_stacks, 5);
	for (uint32_t i = 0; i < 3000; i++) {
		struct td_profile_stack t = s;

		t.tid = 100 + i;
		t.count = 1;
		assert_int_equal(td_profile_add_stack(p, &t), 0);
		assert_int_equal(td_profile_add_stack(p, &t), 0);
	}
	assert_int_equal(p->nr_stacks, 3005);
	assert_int_equal(p->stacks[2999].count, 2);
	td_profile_free(p);
}

static void test_frame_list_text(void **state)
{
	uint32_t frames[] = { 0, 4, 4294967295u }, *back;
	uint32_t nr;
	char *text = td_frame_list_to_text(frames, 3);

	(void)state;
	assert_string_equal(text, "0,4,4294967295");
	assert_int_equal(td_frame_list_from_text(text, 4294967296ull, &back, &nr), 0);
	assert_int_equal(nr, 3);
	assert_memory_equal(back, frames, sizeof(frames));
	free(back);
	assert_int_equal(td_frame_list_from_text(text, 5, &back, &nr), -EIO); /* an index past the frames */
	assert_null(back);
	free(text);
	text = td_frame_list_to_text(frames, 0);
	assert_string_equal(text, "");
	assert_int_equal(td_frame_list_from_text(text, 5, &back, &nr), 0);
	assert_int_equal(nr, 0);
	free(back);
	free(text);
	static const char *const bad[] = { "1,", ",1", "1,,2", "1;2", "-1", "1 ", "99999999999999999999", "a" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(td_frame_list_from_text(bad[i], 10, &back, &nr), -EIO);
		assert_null(back);
	}
	assert_int_equal(td_frame_list_from_text(NULL, 10, &back, &nr), -EIO);
}

/* One process's stacks, with only the frames they use, renumbered. */
static void test_subset_per_process(void **state)
{
	struct td_profile *p = td_profile_new(), *one, *all;
	uint32_t a[] = { 0, 1 }, b[] = { 2, 1 }, lost[] = { 3 };

	(void)state;
	p->event = strdup("cpu-clock");
	p->unit = strdup("cpu-clock samples");
	p->frequency_hz = 99;
	td_profile_intern_frame(p, &(struct td_frame){ .function = "main_a" });
	td_profile_intern_frame(p, &(struct td_frame){ .function = "shared", .file = "s.c", .line = 3 });
	td_profile_intern_frame(p, &(struct td_frame){ .function = "main_b" });
	td_profile_intern_frame(p, &(struct td_frame){ .function = TD_FRAME_STACK_LOST });
	td_profile_add_stack(p, &(struct td_profile_stack){ .tid = 10, .pid = 10, .count = 5, .nr_frames = 2, .frames = a });
	td_profile_add_stack(p, &(struct td_profile_stack){ .tid = 20, .pid = 20, .count = 7, .nr_frames = 2, .frames = b });
	td_profile_add_stack(p, &(struct td_profile_stack){ .tid = 21, .pid = 20, .count = 2, .nr_frames = 1, .frames = lost });

	one = td_profile_subset(p, 20);
	assert_non_null(one);
	assert_string_equal(one->event, "cpu-clock");
	assert_int_equal(one->frequency_hz, 99);
	assert_int_equal(one->nr_stacks, 2);
	assert_int_equal(one->nr_frames, 3); /* main_b, shared, the marker; not main_a */
	assert_string_equal(one->frames[one->stacks[0].frames[0]].function, "main_b");
	assert_string_equal(one->frames[one->stacks[0].frames[1]].function, "shared");
	assert_int_equal(one->frames[one->stacks[0].frames[1]].line, 3);
	assert_int_equal(one->samples, 9);
	assert_int_equal(one->lost_samples, 2);
	all = td_profile_subset(p, 0);
	assert_int_equal(all->nr_stacks, 3);
	assert_int_equal(all->samples, 14);
	td_profile_free(one);
	td_profile_free(all);
	td_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_deduplicated),
		cmocka_unit_test(test_stacks_merge_per_thread),
		cmocka_unit_test(test_frame_list_text),
		cmocka_unit_test(test_subset_per_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
