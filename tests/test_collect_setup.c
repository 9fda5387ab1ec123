// SPDX-License-Identifier: BSD-3-Clause
/*
 * The host checks collect and agent make before anything is loaded
 * (user/collect/collect_setup.h): below the minimum kernel, one line
 * naming the feature it lacks.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "collect_setup.h"

static void test_minimum_kernel(void **state)
{
	char err[512];

	(void)state;
	assert_int_equal(td_kernel_check("5.10.0-32-amd64", err, sizeof(err)), 0);
	assert_int_equal(td_kernel_check("6.1.0-50-amd64", err, sizeof(err)), 0);
	assert_int_equal(td_kernel_check("6.18.44", err, sizeof(err)), 0);
	assert_int_equal(td_kernel_check("10.0", err, sizeof(err)), 0);

	assert_int_equal(td_kernel_check("5.9.16", err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "kernel 5.9.16 is older than 5.10"));
	assert_non_null(strstr(err, "BPF_F_TEST_RUN_ON_CPU"));
	assert_null(strstr(err, "ring buffers")); /* 5.9 has them */
	assert_non_null(strstr(err, "use a kernel of 5.10 or later"));

	assert_int_equal(td_kernel_check("4.14.355-275.582.amzn2.x86_64", err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "nor has BPF ring buffers (5.8)"));
	assert_int_equal(td_kernel_check("5.4.0-150-generic", err, sizeof(err)), -ENOTSUP);
	assert_null(strchr(err, '\n')); /* one line */

	assert_int_equal(td_kernel_check("linux", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cannot read the kernel version from 'linux'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimum_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
