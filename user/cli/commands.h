/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The subcommands main() dispatches to. Each takes argv from the command
 * name on (argv[0] is "collect", "list", ...) and returns the exit code.
 */
#ifndef TOPDOWN_COMMANDS_H
#define TOPDOWN_COMMANDS_H

/* Exit codes, the same for every command. */
#define TD_EXIT_FAILURE 1    /* the command could not do its work */
#define TD_EXIT_USAGE 2      /* bad arguments: nothing was done */
#define TD_EXIT_REGRESSION 3 /* compare --fail-on-regression found one */

int td_cmd_collect(int argc, char **argv);
int td_cmd_top(int argc, char **argv);
int td_cmd_agent(int argc, char **argv);
int td_cmd_list(int argc, char **argv);
int td_cmd_query(int argc, char **argv);
int td_cmd_compare(int argc, char **argv);
int td_cmd_flamegraph(int argc, char **argv);
int td_cmd_report(int argc, char **argv);
int td_cmd_gc(int argc, char **argv);
int td_cmd_export(int argc, char **argv);
int td_cmd_import(int argc, char **argv);
int td_cmd_mcp_serve(int argc, char **argv);
int td_cmd_install_service(int argc, char **argv);
int td_cmd_uninstall_service(int argc, char **argv);
int td_cmd_doctor(int argc, char **argv);
/* topdown explain NAME [--model M] [--json] | --list [--model M] [--json]:
 * 2 also for an unknown metric or model. */
int td_cmd_explain(int argc, char **argv);

#endif
