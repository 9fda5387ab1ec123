// SPDX-License-Identifier: BSD-3-Clause
/*
 * The one option parser (user/cli/cli_options.h): every type with its
 * bounds, one error line naming the option, the shared groups, and the
 * usage printed from the same table.
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

#include "agent_args.h"
#include "cli_options.h"
#include "labels.h"
#include "parse.h"
#include "target_args.h"

struct args {
	bool flag, also;
	int format;
	const char *text, *name, *db;
	uint64_t duration_ns, count;
	long level;
	size_t page;
	unsigned sessions;
	double pct;
	struct td_labels labels;
	struct td_store_flags store;
	struct td_target_args target;
	bool sample;
	const char *sample_event;
	uint64_t sample_freq_hz;
	int calls;
};

static int count_call(void *field, const struct td_opt *opt, const char *value, char *err, size_t errlen)
{
	struct args *a = field;

	(void)opt;
	if (value && strcmp(value, "bad") == 0) {
		snprintf(err, errlen, "--call refuses 'bad'");
		return -EINVAL;
	}
	a->calls++;
	return 0;
}

static const struct td_opt options[] = {
	TD_USAGE_HEADING("some options:"),
	TD_OPTION("flag", TD_OPT_FLAG, offsetof(struct args, flag), NULL, "a flag", .short_name = 'f',
		  .sets = true, .set_offset = offsetof(struct args, also)),
	TD_OPTION("json", TD_OPT_SET, offsetof(struct args, format), NULL, "as JSON", .min = 7),
	TD_OPTION("text", TD_OPT_TEXT, offsetof(struct args, text), "T", "any text"),
	TD_OPTION("name", TD_OPT_NAME, offsetof(struct args, name), "NAME", "a name", .short_name = 'n'),
	TD_OPTION("every", TD_OPT_DURATION, offsetof(struct args, duration_ns), "D", "a duration"),
	TD_OPTION("level", TD_OPT_INT, offsetof(struct args, level), "N", "1 to 4", .min = 1, .max = 4),
	TD_OPTION("count", TD_OPT_U64, offsetof(struct args, count), "N", NULL, .min = 1, .max = 1L << 40),
	TD_OPTION("page", TD_OPT_SIZE, offsetof(struct args, page), "N", "a size", .min = 1, .max = 10000),
	TD_OPTION("sessions", TD_OPT_UNSIGNED, offsetof(struct args, sessions), "N", "a count", .min = 1, .max = 9),
	TD_OPTION("pct", TD_OPT_NUMBER, offsetof(struct args, pct), "PCT", "a share", .low = 0.01, .high = 100),
	TD_OPT_LABELS(struct args, labels, "a label"),
	TD_OPTION("call", TD_OPT_CALL, 0, "V", "a call", .call = count_call),
	TD_OPTION("toggle", TD_OPT_CALL, 0, NULL, "a call without a value", .call = count_call),
	TD_OPTS_TARGET(struct args, target),
	TD_OPTS_SAMPLE(struct args, sample, sample_event, sample_freq_hz, TD_OPT_GROUP_AGENT),
	TD_OPTS_STORE(struct args, db, store),
	{ 0 }
};

static const struct td_cli command = {
	.command = "try",
	.synopsis = "usage: topdown try [OPTIONS] [ARG]\n",
	.notes = "the end\n",
	.opts = options,
	.max_operands = 1,
};

/* Parses the NULL-terminated arguments after "try" into a; seen's
 * operands point into argv, which outlives the call. */
static int parse(struct args *a, struct td_cli_seen *seen, char *err, size_t errlen, ...)
{
	static char *argv[64] = { "try" };
	int argc = 1;
	va_list ap;

	va_start(ap, errlen);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	memset(a, 0, sizeof(*a));
	td_labels_init(&a->labels);
	err[0] = '\0';
	return td_cli_parse(&command, argc, argv, a, seen, err, errlen);
}

static void test_every_type(void **state)
{
	struct args a;
	struct td_cli_seen seen;
	char err[256];

	(void)state;
	assert_int_equal(parse(&a, &seen, err, sizeof(err), "-f", "--json", "--text=", "-n", "x", "--every", "1.5m",
			       "--level", "4", "--count", "1099511627776", "--page", "10000", "--sessions", "9",
			       "--pct", "0.01", "--label", "k=v", "--label", "k2=v2", "--call", "ok", "--toggle",
			       "--sample=cycles", "--sample-freq", "7", "--db", "x.db", "--backend", "postgresql",
			       "--dsn", "host=h", "--system-wide", "operand", NULL), 0);
	assert_true(a.flag);
	assert_true(a.also); /* .sets */
	assert_int_equal(a.format, 7);
	assert_string_equal(a.text, "");
	assert_string_equal(a.name, "x");
	assert_int_equal(a.duration_ns, 90000000000ULL);
	assert_int_equal(a.level, 4);
	assert_int_equal(a.count, 1ULL << 40);
	assert_int_equal(a.page, 10000);
	assert_int_equal(a.sessions, 9);
	assert_true(a.pct == 0.01);
	assert_int_equal(a.labels.count, 2);
	assert_string_equal(td_labels_get(&a.labels, "k2"), "v2");
	assert_int_equal(a.calls, 2);
	assert_true(a.sample);
	assert_string_equal(a.sample_event, "cycles");
	assert_int_equal(a.sample_freq_hz, 7);
	/* the store's flags are the parser's, as any other: no argv editing */
	assert_string_equal(a.db, "x.db");
	assert_string_equal(a.store.backend, "postgresql");
	assert_string_equal(a.store.dsn, "host=h");
	assert_true(a.target.system_wide);
	assert_int_equal(a.target.given, 1);
	assert_int_equal(seen.nr_operands, 1);
	assert_string_equal(seen.operands[0], "operand");
	assert_true(td_cli_given(&command, &seen, "every"));
	assert_true(td_cli_given(&command, &seen, "sample"));
	assert_false(td_cli_given(&command, &seen, "pid"));
	assert_false(td_cli_given(&command, &seen, "no-such-option"));
	td_labels_free(&a.labels);

	/* --sample alone, and an abbreviation getopt_long accepts */
	assert_int_equal(parse(&a, &seen, err, sizeof(err), "--sample", "--dur", "x", NULL), -EINVAL);
	assert_int_equal(parse(&a, &seen, err, sizeof(err), "--sample", "--ever", "2s", NULL), 0);
	assert_true(a.sample);
	assert_null(a.sample_event);
	assert_int_equal(a.duration_ns, 2000000000ULL);
	td_labels_free(&a.labels);
}

/* Each bad value: -EINVAL and one sentence naming the option. */
static void expect_error(const char *want, ...)
{
	char *argv[16] = { "try" }, err[256] = "";
	struct td_cli_seen seen;
	struct args a = { 0 };
	int argc = 1;
	va_list ap;

	va_start(ap, want);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	td_labels_init(&a.labels);
	assert_int_equal(td_cli_parse(&command, argc, argv, &a, &seen, err, sizeof(err)), -EINVAL);
	if (!strstr(err, want))
		fail_msg("'%s' lacks '%s'", err, want);
	assert_null(strchr(err, '\n'));
	td_labels_free(&a.labels);
}

static void test_bad_values(void **state)
{
	(void)state;
	expect_error("bad duration '150000d' for --every: it is longer than 100 years; use at most 36500d",
		     "--every", "150000d", NULL);
	expect_error("bad duration '213503d' for --every", "--every=213503d", NULL);
	expect_error("bad duration '0.5ms' for --every: it is shorter than 1ms", "--every", "0.5ms", NULL);
	expect_error("--level", "--level", "5", NULL);
	expect_error("--level", "--level", "0", NULL);
	expect_error("--count", "--count", "1099511627777", NULL);
	expect_error("--page", "--page", "0", NULL);
	expect_error("--sessions", "--sessions", "10", NULL);
	expect_error("--pct", "--pct", "100.5", NULL);
	expect_error("--name takes a NAME, not an empty value", "--name", "", NULL);
	expect_error("bad label 'k=?': the value is not UTF-8 text", "--label", "k=\xff", NULL);
	expect_error("--call refuses 'bad'", "--call", "bad", NULL);
	expect_error("--every needs a value: --every D", "--every", NULL);
	expect_error("unknown option, or one missing its value: '--frob'", "--frob", NULL);
	expect_error("unknown option, or one missing its value: '-z'", "-z", NULL);
	expect_error("unexpected argument 'two'", "one", "two", NULL);
	expect_error("--flag", "--flag=yes", NULL); /* a flag takes no value */
	expect_error("bad pid list '0'", "--pid", "0", NULL);
}

/* The usage lists every option of the table, one line each, after the synopsis. */
static void test_usage(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	td_cli_usage(&command, out);
	fclose(out);
	assert_true(strncmp(text, command.synopsis, strlen(command.synopsis)) == 0);
	assert_non_null(strstr(text, "\nsome options:\n"));
	for (size_t i = 0; options[i].name; i++) {
		char line[64];

		if (options[i].type == TD_OPT_HEADING)
			continue;
		snprintf(line, sizeof(line), "\n  --%s", options[i].name);
		if (!strstr(text, line))
			fail_msg("the usage lacks --%s:\n%s", options[i].name, text);
	}
	assert_non_null(strstr(text, "\n  --sample[=EVENT]    also sample"));
	assert_non_null(strstr(text, "\n  --count N\n")); /* no help: the option alone */
	/* lines are wrapped, none longer than 100 characters */
	for (char *line = text, *end; *line; line = end + 1) {
		end = strchr(line, '\n');
		assert_non_null(end);
		assert_true(end - line <= 100);
	}
	assert_non_null(strstr(text, "\nthe end\n"));
	free(text);
}

/* --help prints the usage on stdout and says so. */
static void test_help(void **state)
{
	struct args a;
	struct td_cli_seen seen;
	char err[256];

	(void)state;
	assert_int_equal(parse(&a, &seen, err, sizeof(err), "--level", "2", "--help", NULL), TD_CLI_HELP_SHOWN);
	assert_int_equal(parse(&a, &seen, err, sizeof(err), "-h", NULL), TD_CLI_HELP_SHOWN);
	td_labels_free(&a.labels);
}

/* td_cli_parse_each sees each option in order, and can refuse one. */
struct seen_list {
	char names[256];
	int refuse_at;
};

static int record(void *ctx, const struct td_opt *opt, const char *value, char *err, size_t errlen)
{
	struct seen_list *l = ctx;
	size_t used = strlen(l->names);

	snprintf(l->names + used, sizeof(l->names) - used, "%s%s=%s", used ? " " : "", opt->name,
		 value ? value : "-");
	if (--l->refuse_at == 0) {
		snprintf(err, errlen, "refused %s", opt->name);
		return -EINVAL;
	}
	return 0;
}

static void test_each(void **state)
{
	char *argv[] = { "try", "--process", "a", "--flag", "--sample", "--process", "b", NULL };
	struct seen_list l = { "", -1 };
	struct td_cli_seen seen;
	struct args a = { 0 };
	char err[256] = "";

	(void)state;
	td_labels_init(&a.labels);
	assert_int_equal(td_cli_parse_each(&command, 7, argv, &a, &seen, record, &l, err, sizeof(err)), 0);
	assert_string_equal(l.names, "process=a flag=- sample=- process=b");
	assert_int_equal(a.target.given, 2);
	l = (struct seen_list){ "", 2 };
	assert_int_equal(td_cli_parse_each(&command, 7, argv, &a, &seen, record, &l, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "refused flag");
	td_labels_free(&a.labels);
}

/* A table that gives one letter to two options is refused, not half read. */
static void test_short_name_twice(void **state)
{
	static const struct td_opt twice[] = {
		TD_OPTION("one", TD_OPT_FLAG, offsetof(struct args, flag), NULL, "one", .short_name = 'x'),
		TD_OPTION("two", TD_OPT_FLAG, offsetof(struct args, also), NULL, "two", .short_name = 'x'),
		{ 0 }
	};
	static const struct td_cli cli = { .command = "twice", .synopsis = "", .opts = twice };
	char *argv[] = { "twice", NULL }, err[128];
	struct td_cli_seen seen;
	struct args a = { 0 };

	(void)state;
	assert_int_equal(td_cli_parse(&cli, 1, argv, &a, &seen, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "internal error: twice gives -x to two options");
}

/* Sampling: rate or period, decided in one place. */
static void test_sample_check(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(td_sample_options_check(false, NULL, NULL, 0, 0, err, sizeof(err)), 0);
	assert_int_equal(td_sample_options_check(true, "cycles", NULL, 99, 0, err, sizeof(err)), 0);
	assert_int_equal(td_sample_options_check(true, NULL, "DRAM_Bound", 0, 1000, err, sizeof(err)), 0);
	assert_int_equal(td_sample_options_check(false, NULL, NULL, 99, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--sample-freq sets the rate of --sample"));
	assert_int_equal(td_sample_options_check(false, NULL, NULL, 0, 10, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--sample-period sets the rate of --sample"));
	assert_int_equal(td_sample_options_check(true, NULL, NULL, 99, 10, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "both set the rate"));
	assert_int_equal(td_sample_options_check(true, "cycles", "DRAM_Bound", 0, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--sample-for chooses the event"));
	assert_int_equal(td_sample_options_check(true, "", NULL, 0, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--sample= names no event"));
}

/* The agent's group, as `topdown agent` and `topdown install-service` place it. */
static const struct td_opt agent_options[] = {
	TD_OPTS_AGENT(struct td_agent_args, ),
	{ 0 }
};

static const struct td_cli agent_command = {
	.command = "agent",
	.synopsis = "usage: topdown agent [OPTIONS]\n",
	.opts = agent_options,
};

/* --rotation-offset VALUE into a; 0, or -EINVAL with err. */
static int parse_rotation_offset(struct td_agent_args *a, const char *value, char *err, size_t errlen)
{
	char *argv[] = { "agent", "--rotation-offset", (char *)value, NULL };
	struct td_cli_seen seen;

	memset(a, 0, sizeof(*a));
	td_agent_args_init(a);
	err[0] = '\0';
	return td_cli_parse(&agent_command, 3, argv, a, &seen, err, errlen);
}

/* --rotation-offset: auto (the default), or an integer from 0 to 65535; anything else, one line. */
static void test_rotation_offset(void **state)
{
	const char *bad[] = { "65536", "-1", "x", "", "1.5", "+3", " 3", "3 ", "AUTO", "0x10", "99999999999999999999" };
	struct td_agent_args a;
	char err[256];

	(void)state;
	memset(&a, 0, sizeof(a));
	td_agent_args_init(&a);
	assert_false(a.config.rotation_offset_given); /* auto when not given */
	assert_int_equal(parse_rotation_offset(&a, "auto", err, sizeof(err)), 0);
	assert_false(a.config.rotation_offset_given);
	assert_int_equal(parse_rotation_offset(&a, "0", err, sizeof(err)), 0);
	assert_true(a.config.rotation_offset_given);
	assert_int_equal(a.config.rotation_offset, 0);
	assert_int_equal(parse_rotation_offset(&a, "65535", err, sizeof(err)), 0);
	assert_true(a.config.rotation_offset_given);
	assert_int_equal(a.config.rotation_offset, 65535);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[128];

		assert_int_equal(parse_rotation_offset(&a, bad[i], err, sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "bad value '%s' for --rotation-offset: use auto, or", bad[i]);
		if (!strstr(err, want) || !strstr(err, "from 0 to 65535") || strchr(err, '\n'))
			fail_msg("--rotation-offset '%s': %s", bad[i], err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_each),
		cmocka_unit_test(test_short_name_twice),
		cmocka_unit_test(test_sample_check),
		cmocka_unit_test(test_rotation_offset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
