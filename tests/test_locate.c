// SPDX-License-Identifier: BSD-3-Clause
/*
 * Raw stacks into a profile (user/locate/locate.c), on this process's own
 * addresses: the order outermost first (user side, then the kernel's
 * above it), return addresses looked up at the call, markers for a lost
 * or an absent stack, the tallies, the frame-pointer hint, and the
 * profile handed over named and replaced by an empty one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "locate.h"

__attribute__((noinline)) void locate_leaf(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void locate_caller(void)
{
	locate_leaf();
	__asm__ volatile("" ::: "memory");
}

/* The address after the call in fn: a frame's return address. The call
 * ends where the next instruction starts, so the address just past fn's
 * first call is found by scanning for locate_leaf's relative target. */
static uint64_t return_address_in(void (*fn)(void))
{
	const unsigned char *code = (const unsigned char *)fn;

	for (size_t i = 0; i < 64; i++) {
#if defined(__x86_64__)
		if (code[i] == 0xe8) { /* call rel32 */
			int32_t rel;

			memcpy(&rel, code + i + 1, sizeof(rel));
			if (code + i + 5 + rel == (const unsigned char *)&locate_leaf)
				return (uint64_t)(uintptr_t)(code + i + 5);
		}
#elif defined(__aarch64__)
		uint32_t insn;

		memcpy(&insn, code + 4 * i, sizeof(insn));
		if ((insn & 0xfc000000u) == 0x94000000u) /* bl */
			return (uint64_t)(uintptr_t)(code + 4 * i + 4);
#endif
	}
	fail_msg("no call in the caller's first instructions");
	return 0;
}

/* A raw stack of this process: leaf first, as the kernel gives it. */
static struct td_raw_stack own_stack(uint64_t count)
{
	struct td_raw_stack raw = { .tid = (uint32_t)getpid(), .pid = (uint32_t)getpid(), .comm = "worker_3",
				    .count = count, .nr_user = 2 };

	raw.user_ips[0] = (uint64_t)(uintptr_t)&locate_leaf;      /* where the sample hit */
	raw.user_ips[1] = return_address_in(&locate_caller);     /* where locate_leaf returns to */
	return raw;
}

static const char *frame_name(const struct td_profile *p, const struct td_profile_stack *s, uint32_t i)
{
	return p->frames[s->frames[i]].function;
}

static void test_stack_order_and_names(void **state)
{
	char err[256];
	struct td_locate *l = td_locate_new(NULL, err, sizeof(err));
	struct td_raw_stack raw = own_stack(3);
	struct td_locate_summary sum;
	struct td_profile *p;

	(void)state;
	assert_non_null(l);
	assert_int_equal(td_locate_raw_stack(l, &raw), 0);
	assert_int_equal(td_locate_raw_stack(l, &raw), 0); /* the same stack again: counts add */
	td_locate_summarize(l, &sum);
	assert_int_equal(sum.samples, 6);
	assert_int_equal(sum.user_samples, 6);
	assert_int_equal(sum.shallow_user_samples, 0);
	p = td_locate_take_profile(l, "cpu-clock", 99, 0, 4);
	assert_non_null(p);
	assert_string_equal(p->event, "cpu-clock");
	assert_string_equal(p->unit, "cpu-clock samples");
	assert_int_equal(p->frequency_hz, 99);
	assert_int_equal(p->samples, 10);     /* 6 kept, 4 the kernel had no room for */
	assert_int_equal(p->lost_samples, 4);
	assert_int_equal(p->nr_stacks, 1);
	assert_int_equal(p->stacks[0].count, 6);
	assert_string_equal(p->stacks[0].comm, "worker_3");
	assert_int_equal(p->stacks[0].nr_frames, 2);
	assert_string_equal(frame_name(p, &p->stacks[0], 0), "locate_caller");
	assert_string_equal(frame_name(p, &p->stacks[0], 1), "locate_leaf");
	assert_non_null(strstr(p->frames[p->stacks[0].frames[1]].file, "test_locate.c"));
	td_profile_free(p);
	/* Handed over: the next profile starts empty. */
	td_locate_summarize(l, &sum);
	assert_int_equal(sum.samples, 0);
	p = td_locate_take_profile(l, "cycles", 0, 10007, 0);
	assert_int_equal(p->nr_stacks, 0);
	assert_int_equal(p->period, 10007);
	assert_int_equal(p->frequency_hz, 0);
	td_profile_free(p);
	td_locate_free(l);
}

/* Kernel frames sit above the user frames; a lost or an absent stack is one marker frame. */
static void test_kernel_side_and_markers(void **state)
{
	char err[256];
	struct td_locate *l = td_locate_new(NULL, err, sizeof(err));
	struct td_raw_stack raw = own_stack(1), lost = { .tid = 1, .pid = 1, .count = 2, .stack_lost = true },
			    none = { .tid = 2, .pid = 2, .count = 5 };
	struct td_locate_summary sum;
	struct td_profile *p;

	(void)state;
	raw.nr_kernel = 1;
	raw.kernel_ips[0] = 0xffffffff81000000ull;
	assert_int_equal(td_locate_raw_stack(l, &raw), 0);
	assert_int_equal(td_locate_raw_stack(l, &lost), 0);
	assert_int_equal(td_locate_raw_stack(l, &none), 0);
	td_locate_summarize(l, &sum);
	assert_int_equal(sum.lost_stack_samples, 2);
	p = td_locate_take_profile(l, "cpu-clock", 99, 0, 0);
	assert_int_equal(p->nr_stacks, 3);
	assert_int_equal(p->stacks[0].nr_frames, 3);
	assert_true(p->frames[p->stacks[0].frames[2]].kernel);
	assert_false(p->frames[p->stacks[0].frames[1]].kernel);
	assert_string_equal(frame_name(p, &p->stacks[1], 0), TD_FRAME_STACK_LOST);
	assert_string_equal(frame_name(p, &p->stacks[2], 0), TD_FRAME_NO_STACK);
	assert_int_equal(p->lost_samples, 2);
	td_profile_free(p);
	td_locate_free(l);
}

static void test_frame_pointer_hint(void **state)
{
	struct td_locate_summary few = { .user_samples = 10, .shallow_user_samples = 10 };
	struct td_locate_summary shallow = { .user_samples = 100, .shallow_user_samples = 60 };
	struct td_locate_summary deep = { .user_samples = 100, .shallow_user_samples = 20 };

	(void)state;
	assert_null(td_locate_frame_pointer_hint(&few)); /* too few samples to say */
	assert_non_null(strstr(td_locate_frame_pointer_hint(&shallow), "-fno-omit-frame-pointer"));
	assert_null(td_locate_frame_pointer_hint(&deep));
}

static void test_bad_proc_root(void **state)
{
	struct td_symbolizer_opts opts = { .proc_root = "/nonexistent/proc" };
	char err[256] = "";

	(void)state;
	assert_null(td_locate_new(&opts, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/proc"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_order_and_names),
		cmocka_unit_test(test_kernel_side_and_markers),
		cmocka_unit_test(test_frame_pointer_hint),
		cmocka_unit_test(test_bad_proc_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
