// SPDX-License-Identifier: BSD-3-Clause
/*
 * expr: the formula language of the Top-Down tree.
 *
 * Formulas are written in the expression language of Linux perf's
 * pmu-events metric files (MetricExpr, MetricThreshold) and of Arm's
 * telemetry formulas, so they can be compared with the vendor files.
 * An expression is parsed once into a flat postfix program, bound once to
 * the slots of a value array, then evaluated many times without allocating.
 *
 * Grammar, from lowest to highest precedence:
 *
 *   a if c else b      right associative; c and b may themselves be
 *                      conditionals: "a if c else b if d else e"
 *   |   or             logical or (left associative)
 *   &   and            logical and (left associative)
 *   not                logical not (prefix, binds looser than comparisons,
 *                      so "not a > b" is "not (a > b)")
 *   < > <= >= == !=    comparisons (left associative)
 *   + -                (left associative)
 *   * /                (left associative)
 *   -                  unary minus
 *   primary            number, name, ( expr ), function call
 *
 * Numbers: 12, 0.05, .5, 5., 1e9, 100e3, 1.5E-3, 0x1F.
 *
 * Functions:
 *   min(a, b), max(a, b)
 *   d_ratio(a, b)      a / b.  perf defines d_ratio as 0 when b is 0;
 *                      topdown defines it as NaN like every division,
 *                      because a missing denominator is not a measured zero.
 *   has_event(x)       1 if x has a value (is not NaN), else 0.  The caller
 *                      passes NaN for events the machine cannot count.
 *   source_count(N), strcmp_cpuid_str(N)
 *                      facts about the machine rather than arithmetic: the
 *                      whole call is one name ("source_count(N)" with N in
 *                      canonical form, no spaces) whose value the caller
 *                      supplies, like the '#' constants.
 * A word followed by '(' that is none of these is an error.  perf's '%' and
 * '^' are not accepted: no vendor formula uses them.
 *
 * Names (events, other metrics, machine constants) and their canonical form
 * as returned by td_expr_name():
 *   INST_RETIRED.ANY, ls_not_halted_cyc, STALL_SLOT_BACKEND, tma_info_thread_slots
 *                      unchanged
 *   EVENT:k, EVENT:R   unchanged: modifiers stay attached after ':'
 *   topdown\-fe\-bound '\' escapes the next character: "topdown-fe-bound"
 *   cpu@EVENT\,cmask\=1@
 *                      the core PMU is the default, so the prefix is
 *                      dropped: "EVENT,cmask=1"
 *   cpu_core@EVENT@, cstate_core@c1\-residency@, msr@tsc\,cpu=cpu_core@
 *                      any other PMU is kept, written as perf's command line
 *                      writes it: "cpu_core/EVENT/", "cstate_core/c1-residency/",
 *                      "msr/tsc,cpu=cpu_core/"
 *   pmu@body@mods, pmu@body@:mods  (modifiers such as k, u, R)
 *                      "pmu/body/mods" ("body:mods" for the cpu PMU)
 *   #SMT_on, #core_wide, #slots, #num_dies, #num_cpus_online, #has_pmem, ...
 *                      unchanged; machine constants supplied by the caller
 *   duration_time      unchanged; the interval length in seconds, supplied
 *                      by the caller
 * The words if, else, and, or, not are reserved.
 *
 * Semantics: IEEE doubles.
 *   - x / 0 is NaN, not infinity.
 *   - Any NaN operand gives NaN, through arithmetic, min, max, and, or, not.
 *   - Comparisons involving NaN are false (0), "!=" included.
 *   - "a if c else b" is NaN when c is NaN; otherwise a when c != 0, else b.
 *   - Logical operators treat nonzero as true and yield 1 or 0.
 *   - Both branches of a conditional are evaluated; none has side effects.
 *
 * Limits: the text is at most TD_EXPR_MAX_TEXT bytes, nests at most
 * TD_EXPR_MAX_NESTING levels (parentheses, conditionals, unary operators)
 * and keeps at most 256 operands pending; larger input is rejected with an
 * error rather than risking the C stack.  The vendor formulas nest at most
 * 9 levels.
 */
#ifndef TD_EXPR_H
#define TD_EXPR_H

#include <stddef.h>

#define TD_EXPR_MAX_TEXT 65535
#define TD_EXPR_MAX_NESTING 64

struct td_expr; /* compiled; immutable except by td_expr_bind */

/*
 * Compile text.  Returns NULL on error with err saying where, e.g.
 * "expression error at column 17 in 'min(a, b': expected ')' to close the
 * '(' at column 4".  Columns count bytes from 1.
 */
struct td_expr *td_expr_parse(const char *text, char *err, size_t errlen);

/* The distinct names the expression refers to, in first-use order.
 * td_expr_name returns NULL when i is out of range; the string lives as long
 * as the expression. */
size_t td_expr_name_count(const struct td_expr *e);
const char *td_expr_name(const struct td_expr *e, size_t i);

/*
 * Bind each name to the index of its value in the array given to
 * td_expr_eval.  slot_of is called once per name and returns the slot
 * (>= 0), or a negative errno when it does not know the name; bind then
 * fails with that value and an err naming the name.  The caller guarantees
 * every slot it returns is inside the array it will evaluate with.
 * Binding again replaces the previous binding.  Returns 0 on success.
 */
int td_expr_bind(struct td_expr *e, int (*slot_of)(void *ctx, const char *name), void *ctx,
		 char *err, size_t errlen);

/* Evaluate with values[slot] for every name; NaN if not (successfully) bound.
 * Does not allocate; safe to call concurrently on the same expression. */
double td_expr_eval(const struct td_expr *e, const double *values);

void td_expr_free(struct td_expr *e);

#endif
