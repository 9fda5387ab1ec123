/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every command's options as one declarative table: each entry names the
 * option, the type of its value with its bounds, where the value goes in
 * the command's argument struct, and its help line. One parser
 * (td_cli_parse, on getopt_long) reads argv against the table, checks
 * each value once, at the edge, and fills the struct; the same table
 * prints the usage (td_cli_usage), so `topdown COMMAND --help` lists
 * every option the command takes, which tests/check_cli_docs.sh holds the
 * man page and the bash completion to.
 *
 * Options several commands share come as groups (TD_OPTS_STORE here,
 * TD_OPTS_TARGET in target_args.h, TD_OPTS_RUN_FILTERS in query_cli.h,
 * TD_OPTS_AGENT in user/agent/agent_options.h...): one definition, one
 * help line, placed into each command's table.
 */
#ifndef TOPDOWN_CLI_OPTIONS_H
#define TOPDOWN_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store_open.h"

enum td_opt_type {
	TD_OPT_HEADING,  /* no option: a line of the usage ("modes (one):") */
	TD_OPT_FLAG,     /* bool, set to true; no value */
	TD_OPT_SET,      /* int, set to .min; no value (--json sets the format) */
	TD_OPT_TEXT,     /* const char *, as given */
	TD_OPT_NAME,     /* const char *, not empty */
	TD_OPT_DURATION, /* uint64_t nanoseconds, 1ms to 100 years (parse.h) */
	TD_OPT_INT,      /* long in [.min, .max] */
	TD_OPT_U64,      /* uint64_t in [.min, .max] */
	TD_OPT_SIZE,     /* size_t in [.min, .max] */
	TD_OPT_UNSIGNED, /* unsigned in [.min, .max] */
	TD_OPT_NUMBER,   /* double in [.low, .high], decimal */
	TD_OPT_LABEL,    /* key=value into a struct td_labels, repeatable (labels.h) */
	TD_OPT_CALL,     /* .call decides; takes a value when .value names one */
};

struct td_opt;

/* A TD_OPT_CALL option's parser: field is the command's struct plus
 * .offset, value is NULL for an option given without one. 0, or -EINVAL
 * with one sentence in err. */
typedef int (*td_opt_call_fn)(void *field, const struct td_opt *opt, const char *value, char *err,
			      size_t errlen);

struct td_opt {
	const char *name;     /* the long option, without "--"; a heading's text */
	enum td_opt_type type;
	size_t offset;        /* where the value goes, from the start of the command's struct */
	const char *value;    /* the value's name in the usage ("D", "N", "key=value"); NULL: none */
	const char *help;     /* the usage line; NULL: only the option and its value */
	long min, max;        /* TD_OPT_INT and the other integers; TD_OPT_SET's value */
	double low, high;     /* TD_OPT_NUMBER */
	td_opt_call_fn call;  /* TD_OPT_CALL */
	bool optional;        /* TD_OPT_CALL and TD_OPT_TEXT: --name or --name=VALUE */
	bool sets;            /* given, the option also sets the bool at set_offset */
	size_t set_offset;
	int group;            /* a group that a command treats as one, or 0 */
	char short_name;      /* -x as well, or 0 */
};

/* An entry: the fields every option has, then any of the others by name
 * (.min = 1, .max = 4, .short_name = 'l', ...). */
#define TD_OPTION(name_, type_, offset_, value_, help_, ...) \
	{ .name = (name_), .type = (type_), .offset = (offset_), .value = (value_), .help = (help_), __VA_ARGS__ }

/* A line of the usage between options. */
#define TD_USAGE_HEADING(text) { .name = (text), .type = TD_OPT_HEADING }

#define TD_OPT_GROUP_AGENT 1 /* TD_OPTS_AGENT: what install-service passes to the agent */

#define TD_CLI_MAX_OPTIONS 64

/* A command: its name, usage lines and table, ending with an entry without a name. */
struct td_cli {
	const char *command;   /* "collect" */
	const char *synopsis;  /* the usage's first lines, "usage: topdown collect ...\n" */
	const char *notes;     /* printed after the options, or NULL */
	const struct td_opt *opts;
	int max_operands;      /* arguments beside the options: 0, a count, or -1 for any */
};

/* What td_cli_parse saw beyond the values it stored. */
struct td_cli_seen {
	char **operands;       /* the arguments that are no options, in order */
	int nr_operands;
	uint64_t given;        /* bit i: the table's entry i was given */
};

#define TD_CLI_HELP_SHOWN 1

/*
 * Reads argv (argv[0] is the command) against cli's table into args.
 * 0; TD_CLI_HELP_SHOWN after printing the usage for --help or -h;
 * -EINVAL with err naming the option and what is wrong.
 */
int td_cli_parse(const struct td_cli *cli, int argc, char **argv, void *args, struct td_cli_seen *seen,
		 char *err, size_t errlen);

/* Called for each option td_cli_parse_each takes, in the order given,
 * after its value is stored; value is NULL for one without. */
typedef int (*td_cli_each_fn)(void *ctx, const struct td_opt *opt, const char *value, char *err, size_t errlen);

/* td_cli_parse, calling each (when not NULL) for every option taken; an
 * error of each ends the parse with it. */
int td_cli_parse_each(const struct td_cli *cli, int argc, char **argv, void *args, struct td_cli_seen *seen,
		      td_cli_each_fn each, void *ctx, char *err, size_t errlen);

/* Whether option name (without "--") was given. */
bool td_cli_given(const struct td_cli *cli, const struct td_cli_seen *seen, const char *name);

/* The usage: the synopsis, a line per option, the notes. */
void td_cli_usage(const struct td_cli *cli, FILE *out);

/* "topdown COMMAND: message (topdown COMMAND --help lists the options)"
 * on stderr; returns TD_EXIT_USAGE. */
int td_cli_usage_error(const struct td_cli *cli, const char *message);

/*
 * td_cli_parse with its errors printed: 0, TD_EXIT_USAGE after a bad
 * option, or -1 after --help (the command then exits 0).
 */
int td_cli_read(const struct td_cli *cli, int argc, char **argv, void *args, struct td_cli_seen *seen);

/* --db, --backend and --dsn into a const char * and a struct td_store_flags of type. */
#define TD_OPTS_STORE(type, db_field, flags_field) \
	TD_OPTS_STORE_DB(type, db_field, flags_field, \
			 "the SQLite file (default ~/.topdown/data.db, or $TOPDOWN_DB_PATH)")

/* The same, where --db means another default (db_help says which). */
#define TD_OPTS_STORE_DB(type, db_field, flags_field, db_help) \
	TD_OPTION("db", TD_OPT_TEXT, offsetof(type, db_field), "PATH", db_help, .short_name = 'D'), \
	TD_OPTION("backend", TD_OPT_NAME, offsetof(type, flags_field.backend), "NAME", \
		  "sqlite or postgresql (default sqlite, or $TOPDOWN_BACKEND)"), \
	TD_OPTION("dsn", TD_OPT_NAME, offsetof(type, flags_field.dsn), "DSN", \
		  "a PostgreSQL connection string (or $TOPDOWN_DSN)")

/* --label key=value, repeatable, into a struct td_labels of type. */
#define TD_OPT_LABELS(type, labels_field, help_text) \
	TD_OPTION("label", TD_OPT_LABEL, offsetof(type, labels_field), "key=value", help_text, .short_name = 'L')

#endif
