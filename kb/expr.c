// SPDX-License-Identifier: BSD-3-Clause
/*
 * expr: parser and evaluator of perf-style metric formulas (see expr.h).
 *
 * The parser is a recursive descent over a one-token lexer that emits a
 * postfix program directly, so no syntax tree is built.  Everything is
 * written into one scratch block sized from the text length (a token emits
 * at most one instruction and a canonical name is never longer than its
 * source text), then copied into one exactly sized td_expr.
 */
#include "expr.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Operand stack of the evaluator; the parser rejects programs needing more. */
#define STACK_MAX 256

enum op {
	OP_NUM, /* push num */
	OP_LOAD, /* push values[slot] */
	OP_NEG,
	OP_NOT,
	OP_HAS_VALUE, /* has_event(): 1 unless NaN */
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_DIV,
	OP_LT,
	OP_GT,
	OP_LE,
	OP_GE,
	OP_EQ,
	OP_NE,
	OP_AND,
	OP_OR,
	OP_MIN,
	OP_MAX,
	OP_SELECT, /* a c b -> c ? a : b */
};

struct insn {
	uint32_t op;
	uint32_t name; /* OP_LOAD: index in the name table */
	union {
		double num; /* OP_NUM */
		int slot; /* OP_LOAD, once bound */
	};
};

struct td_expr {
	size_t ncode;
	size_t nnames;
	int bound;
	const uint32_t *name_off; /* offsets in chars, one per name */
	const char *chars; /* the names, NUL-terminated */
	struct insn code[]; /* followed by name_off, then chars */
};

enum tok {
	TOK_END,
	TOK_NUM,
	TOK_NAME,
	TOK_IF,
	TOK_ELSE,
	TOK_AND,
	TOK_OR,
	TOK_NOT,
	TOK_LPAREN,
	TOK_RPAREN,
	TOK_COMMA,
	TOK_PLUS,
	TOK_MINUS,
	TOK_STAR,
	TOK_SLASH,
	TOK_AMP,
	TOK_BAR,
	TOK_LT,
	TOK_GT,
	TOK_LE,
	TOK_GE,
	TOK_EQ,
	TOK_NE,
	TOK_COUNT
};

/* Binding strength, loosest first; 0 marks "not at this level". */
enum level {
	LEVEL_NONE,
	LEVEL_OR,
	LEVEL_AND,
	LEVEL_NOT,
	LEVEL_CMP,
	LEVEL_ADD,
	LEVEL_MUL,
	LEVEL_UNARY
};

/* The left-associative binary operators, by token. */
static const struct {
	enum level level;
	enum op op;
} binary_ops[TOK_COUNT] = {
	[TOK_OR] = {LEVEL_OR, OP_OR},	  [TOK_BAR] = {LEVEL_OR, OP_OR},
	[TOK_AND] = {LEVEL_AND, OP_AND},  [TOK_AMP] = {LEVEL_AND, OP_AND},
	[TOK_LT] = {LEVEL_CMP, OP_LT},	  [TOK_GT] = {LEVEL_CMP, OP_GT},
	[TOK_LE] = {LEVEL_CMP, OP_LE},	  [TOK_GE] = {LEVEL_CMP, OP_GE},
	[TOK_EQ] = {LEVEL_CMP, OP_EQ},	  [TOK_NE] = {LEVEL_CMP, OP_NE},
	[TOK_PLUS] = {LEVEL_ADD, OP_ADD}, [TOK_MINUS] = {LEVEL_ADD, OP_SUB},
	[TOK_STAR] = {LEVEL_MUL, OP_MUL}, [TOK_SLASH] = {LEVEL_MUL, OP_DIV},
};

static const struct {
	const char *word;
	enum tok tok;
} keywords[] = {
	{"if", TOK_IF}, {"else", TOK_ELSE}, {"and", TOK_AND}, {"or", TOK_OR}, {"not", TOK_NOT},
};

/* OP_LOAD marks a call that is itself a name supplied by the caller. */
static const struct function {
	const char *word;
	int nargs;
	enum op op;
} functions[] = {
	{"min", 2, OP_MIN},	      {"max", 2, OP_MAX},
	{"d_ratio", 2, OP_DIV},	      {"has_event", 1, OP_HAS_VALUE},
	{"source_count", 1, OP_LOAD}, {"strcmp_cpuid_str", 1, OP_LOAD},
};

struct parser {
	const char *text;
	size_t len;
	const char *pos; /* first character after the current token */

	enum tok tok; /* current token */
	const char *tok_start;
	double num; /* TOK_NUM */
	size_t name_len; /* TOK_NAME: canonical name, uncommitted, at chars + nchars */

	int depth; /* nesting of parentheses, conditionals and prefixes */
	int stack; /* operand stack height after the code emitted so far */

	struct insn *code;
	size_t ncode;
	uint32_t *name_off;
	size_t nnames;
	char *chars;
	size_t nchars;

	char *err;
	size_t errlen;
};

static int is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_name_start(int c)
{
	return is_alpha(c) || c == '_' || c == '#' || c == '\\';
}

static int is_name_char(int c)
{
	return is_alpha(c) || is_digit(c) || c == '_' || c == '.' || c == '#' || c == ':';
}

static int hex_value(int c)
{
	if (is_digit(c))
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

static size_t column(const struct parser *p, const char *at)
{
	return (size_t)(at - p->text) + 1;
}

/*
 * Report an error at a position.  Long texts are quoted as a window around
 * the position so the message itself survives a small err buffer.
 */
__attribute__((format(printf, 3, 4))) static int fail(struct parser *p, const char *at,
						      const char *fmt, ...)
{
	enum { WHOLE = 60, WINDOW = 50 };
	size_t start = 0, shown = p->len;
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->len > WHOLE) {
		size_t off = (size_t)(at - p->text);
		start = off > WINDOW / 2 ? off - WINDOW / 2 : 0;
		if (start > p->len - WINDOW)
			start = p->len - WINDOW;
		shown = WINDOW;
	}
	snprintf(p->err, p->errlen, "expression error at column %zu in '%s%.*s%s': %s",
		 column(p, at), start > 0 ? "..." : "", (int)shown, p->text + start,
		 start + shown < p->len ? "..." : "", msg);
	return -1;
}

/* How much of the current token to quote in a message. */
static int token_width(const struct parser *p)
{
	return (int)(p->pos - p->tok_start > 40 ? 40 : p->pos - p->tok_start);
}

static int enter(struct parser *p)
{
	if (++p->depth > TD_EXPR_MAX_NESTING)
		return fail(p, p->tok_start,
			    "the expression nests deeper than %d levels; simplify it",
			    TD_EXPR_MAX_NESTING);
	return 0;
}

/* ------------------------------------------------------------------ lexer */

static int lex_number(struct parser *p)
{
	const char *s = p->pos;

	if (s[0] == '0' && (s[1] | 0x20) == 'x') {
		double v = 0;
		for (s += 2; hex_value(*s) >= 0; s++)
			v = v * 16 + hex_value(*s);
		p->num = v;
		if (s == p->pos + 2) /* "0x" without digits */
			s = p->pos;
	} else {
		while (is_digit(*s))
			s++;
		if (*s == '.')
			for (s++; is_digit(*s); s++)
				;
		if ((*s | 0x20) == 'e') {
			const char *t = s + 1 + (s[1] == '+' || s[1] == '-');
			if (is_digit(*t))
				for (s = t; is_digit(*s); s++)
					;
		}
		char *end;
		p->num = strtod(p->pos, &end);
		if (end != s) /* only under a numeric locale other than "C" */
			s = p->pos;
	}
	if (s == p->pos || is_name_char(*s) || *s == '\\' || *s == '@') {
		const char *bad = p->pos;
		while (is_name_char(*s) || *s == '.')
			s++;
		return fail(p, bad,
			    "malformed number '%.*s'; write numbers as 12, 0.5, 1e9 or 0x1f",
			    (int)(s - bad > 40 ? 40 : s - bad), bad);
	}
	p->pos = s;
	p->tok = TOK_NUM;
	return 0;
}

/*
 * Copy the pmu@body@[[:]mods] part of a name that starts at the '@' in *src.
 * out holds the PMU name (n bytes so far); see expr.h for the canonical form.
 */
static int lex_pmu_event(struct parser *p, const char **src, char *out, size_t *n)
{
	const char *at = *src, *s = at + 1;
	int core = *n == 3 && memcmp(out, "cpu", 3) == 0;
	size_t body;

	if (core)
		*n = 0;
	else
		out[(*n)++] = '/';
	body = *n;
	for (; *s != '@'; s++) {
		if (*s == '\0')
			return fail(p, at,
				    "this PMU event has no closing '@'; write it as pmu@event@");
		if (*s == '\\' && s[1] != '\0')
			s++;
		out[(*n)++] = *s;
	}
	if (*n == body)
		return fail(p, at, "the PMU event between '@' and '@' is empty; name the event");
	s++;
	if (!core)
		out[(*n)++] = '/';
	/* modifiers: "@k" as Intel's files write them, or "@:k" */
	s += *s == ':';
	if (core && (is_alpha(*s) || is_digit(*s)))
		out[(*n)++] = ':';
	for (; is_alpha(*s) || is_digit(*s); s++)
		out[(*n)++] = *s;
	*src = s;
	return 0;
}

/*
 * Scan a name at *src and write its canonical form, NUL-terminated, to out.
 * The caller has checked the first character.
 */
static int lex_name_at(struct parser *p, const char **src, char *out, size_t *len)
{
	const char *s = *src;
	size_t n = 0;

	for (;;) {
		if (*s == '\\') {
			if (s[1] == '\0')
				return fail(p, s, "a '\\' at the end escapes nothing; remove it");
			out[n++] = s[1];
			s += 2;
		} else if (is_name_char(*s)) {
			out[n++] = *s++;
		} else if (*s == '@') {
			if (lex_pmu_event(p, &s, out, &n))
				return -1;
			break;
		} else {
			break;
		}
	}
	out[n] = '\0';
	*len = n;
	*src = s;
	return 0;
}

static int lex_word(struct parser *p)
{
	size_t i, raw;

	if (lex_name_at(p, &p->pos, p->chars + p->nchars, &p->name_len))
		return -1;
	raw = (size_t)(p->pos - p->tok_start);
	p->tok = TOK_NAME;
	for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strlen(keywords[i].word) == raw &&
		    memcmp(keywords[i].word, p->tok_start, raw) == 0)
			p->tok = keywords[i].tok;
	return 0;
}

/* Advance to the next token. */
static int next_token(struct parser *p)
{
	static const char singles[] = "(),+-*/&|";
	static const enum tok single_toks[] = {TOK_LPAREN, TOK_RPAREN, TOK_COMMA,
					       TOK_PLUS,   TOK_MINUS,  TOK_STAR,
					       TOK_SLASH,  TOK_AMP,    TOK_BAR};
	const char *s = skip_space(p->pos);
	const char *single;
	int c = (unsigned char)*s;

	p->tok_start = p->pos = s;
	if (c == '\0') {
		p->tok = TOK_END;
		return 0;
	}
	if (is_digit(c) || (c == '.' && is_digit(s[1])))
		return lex_number(p);
	if (is_name_start(c))
		return lex_word(p);
	if ((single = strchr(singles, c)) != NULL) {
		p->tok = single_toks[single - singles];
		p->pos = s + 1;
		return 0;
	}
	if (c == '<' || c == '>') {
		int eq = s[1] == '=';
		p->tok = c == '<' ? (eq ? TOK_LE : TOK_LT) : (eq ? TOK_GE : TOK_GT);
		p->pos = s + 1 + eq;
		return 0;
	}
	if ((c == '=' || c == '!') && s[1] == '=') {
		p->tok = c == '=' ? TOK_EQ : TOK_NE;
		p->pos = s + 2;
		return 0;
	}
	if (c == '=' || c == '!')
		return fail(p, s, "unexpected '%c'; compare with '==' or '!=', negate with 'not'",
			    c);
	if (c < 0x20 || c > 0x7e)
		return fail(p, s, "unexpected byte 0x%02x; formulas are plain ASCII", (unsigned)c);
	return fail(p, s, "unexpected character '%c'", c);
}

/* ---------------------------------------------------------------- emitter */

static int emit(struct parser *p, enum op op)
{
	static const signed char effect[] = {
		[OP_NUM] = 1,  [OP_LOAD] = 1,	 [OP_ADD] = -1, [OP_SUB] = -1, [OP_MUL] = -1,
		[OP_DIV] = -1, [OP_LT] = -1,	 [OP_GT] = -1,	[OP_LE] = -1,  [OP_GE] = -1,
		[OP_EQ] = -1,  [OP_NE] = -1,	 [OP_AND] = -1, [OP_OR] = -1,  [OP_MIN] = -1,
		[OP_MAX] = -1, [OP_SELECT] = -2,
	};

	p->stack += effect[op];
	if (p->stack > STACK_MAX)
		return fail(
			p, p->tok_start,
			"the expression holds more than %d pending values; split or simplify it",
			STACK_MAX);
	p->code[p->ncode++] = (struct insn){.op = op};
	return 0;
}

static int emit_num(struct parser *p, double v)
{
	if (emit(p, OP_NUM))
		return -1;
	p->code[p->ncode - 1].num = v;
	return 0;
}

/* Commit the pending name at chars + nchars (or find it already there) and load it. */
static int emit_pending_name(struct parser *p, size_t len)
{
	const char *name = p->chars + p->nchars;
	size_t i;

	for (i = 0; i < p->nnames; i++)
		if (strcmp(p->chars + p->name_off[i], name) == 0)
			break;
	if (i == p->nnames) {
		p->name_off[p->nnames++] = (uint32_t)p->nchars;
		p->nchars += len + 1;
	}
	if (emit(p, OP_LOAD))
		return -1;
	p->code[p->ncode - 1].name = (uint32_t)i;
	return 0;
}

/* ----------------------------------------------------------------- parser */

static int parse_ternary(struct parser *p);
static int parse_level(struct parser *p, enum level level);

static int expect_close(struct parser *p, const char *open)
{
	if (p->tok != TOK_RPAREN)
		return fail(p, p->tok_start, "expected ')' to close the '(' at column %zu",
			    column(p, open));
	return next_token(p);
}

/*
 * name(N) calls: the call itself is a name, "word(N)" with N canonical.
 * The argument may start with a digit (a CPUID such as 0x410fd0c0).
 */
static int parse_name_call(struct parser *p, const struct function *f, const char *open)
{
	char *out = p->chars + p->nchars;
	size_t word = strlen(f->word), arg;
	const char *s = skip_space(open + 1);

	out[word] = '(';
	if (!is_name_start(*s) && !is_digit(*s))
		return fail(p, s, "%s() takes one event name", f->word);
	if (lex_name_at(p, &s, out + word + 1, &arg))
		return -1;
	s = skip_space(s);
	if (*s != ')')
		return fail(p, s, "%s() takes one event name; close it with ')'", f->word);
	strcpy(out + word + 1 + arg, ")");
	p->pos = s + 1;
	if (emit_pending_name(p, word + arg + 2))
		return -1;
	return next_token(p);
}

static int parse_call(struct parser *p, const char *open)
{
	const struct function *f = NULL;
	size_t raw = (size_t)(p->pos - p->tok_start), i;
	int arg;

	for (i = 0; i < sizeof(functions) / sizeof(functions[0]); i++)
		if (strlen(functions[i].word) == raw &&
		    memcmp(functions[i].word, p->tok_start, raw) == 0)
			f = &functions[i];
	if (f == NULL)
		return fail(p, p->tok_start,
			    "unknown function '%.*s'; use min, max, d_ratio, has_event, "
			    "source_count or strcmp_cpuid_str",
			    token_width(p), p->tok_start);
	if (f->op == OP_LOAD)
		return parse_name_call(p, f, open);
	p->pos = open + 1;
	if (next_token(p))
		return -1;
	for (arg = 0; arg < f->nargs; arg++) {
		if (arg > 0 && p->tok != TOK_COMMA)
			return fail(p, p->tok_start, "%s() takes %d arguments separated by ','",
				    f->word, f->nargs);
		if ((arg > 0 && next_token(p)) || parse_ternary(p))
			return -1;
	}
	if (p->tok == TOK_COMMA)
		return fail(p, p->tok_start, "%s() takes %d argument%s; remove the extra ones",
			    f->word, f->nargs, f->nargs == 1 ? "" : "s");
	if (expect_close(p, open))
		return -1;
	return emit(p, f->op);
}

static int parse_primary(struct parser *p)
{
	const char *open;

	switch (p->tok) {
	case TOK_NUM:
		if (emit_num(p, p->num))
			return -1;
		return next_token(p);
	case TOK_NAME:
		open = skip_space(p->pos);
		if (*open == '(')
			return parse_call(p, open);
		if (emit_pending_name(p, p->name_len))
			return -1;
		return next_token(p);
	case TOK_LPAREN:
		open = p->tok_start;
		if (next_token(p) || parse_ternary(p))
			return -1;
		return expect_close(p, open);
	case TOK_END:
		if (*skip_space(p->text) == '\0')
			return fail(p, p->tok_start,
				    "the expression is empty; write a formula such as 'A / B'");
		return fail(p, p->tok_start,
			    "the expression ends where a number, name or '(' is expected");
	default:
		return fail(p, p->tok_start, "expected a number, name or '(' but found '%.*s'",
			    token_width(p), p->tok_start);
	}
}

/* The prefix levels: "not x" and "-x". */
static int parse_prefix(struct parser *p, enum level level)
{
	enum tok prefix = level == LEVEL_NOT ? TOK_NOT : TOK_MINUS;

	if (p->tok != prefix)
		return level == LEVEL_NOT ? parse_level(p, LEVEL_CMP) : parse_primary(p);
	if (enter(p) || next_token(p) || parse_prefix(p, level))
		return -1;
	p->depth--;
	return emit(p, level == LEVEL_NOT ? OP_NOT : OP_NEG);
}

static int parse_level(struct parser *p, enum level level)
{
	if (level == LEVEL_NOT || level == LEVEL_UNARY)
		return parse_prefix(p, level);
	if (parse_level(p, level + 1))
		return -1;
	while (binary_ops[p->tok].level == level) {
		enum op op = binary_ops[p->tok].op;
		if (next_token(p) || parse_level(p, level + 1) || emit(p, op))
			return -1;
	}
	return 0;
}

/* a if c else b: the loosest rule, right associative. */
static int parse_ternary(struct parser *p)
{
	const char *if_at;

	if (enter(p) || parse_level(p, LEVEL_OR))
		return -1;
	if (p->tok == TOK_IF) {
		if_at = p->tok_start;
		if (next_token(p) || parse_ternary(p))
			return -1;
		if (p->tok != TOK_ELSE)
			return fail(p, p->tok_start,
				    "expected 'else' to complete the 'if' at column %zu",
				    column(p, if_at));
		if (next_token(p) || parse_ternary(p) || emit(p, OP_SELECT))
			return -1;
	}
	p->depth--;
	return 0;
}

static int parse_all(struct parser *p)
{
	if (next_token(p) || parse_ternary(p))
		return -1;
	if (p->tok == TOK_RPAREN)
		return fail(p, p->tok_start, "')' has no matching '('; remove it or add the '('");
	if (p->tok != TOK_END)
		return fail(
			p, p->tok_start,
			"unexpected '%.*s' after a complete expression; is an operator missing?",
			token_width(p), p->tok_start);
	return 0;
}

/* Copy the parsed program and names into one exactly sized object. */
static struct td_expr *pack(const struct parser *p)
{
	size_t code = p->ncode * sizeof(struct insn), offs = p->nnames * sizeof(uint32_t);
	struct td_expr *e = malloc(sizeof(*e) + code + offs + p->nchars);
	uint32_t *name_off;
	char *chars;

	if (e == NULL) {
		snprintf(
			p->err, p->errlen,
			"out of memory compiling an expression of %zu bytes; free memory and retry",
			p->len);
		return NULL;
	}
	name_off = (uint32_t *)(e->code + p->ncode);
	chars = (char *)(name_off + p->nnames);
	memcpy(e->code, p->code, code);
	memcpy(name_off, p->name_off, offs);
	memcpy(chars, p->chars, p->nchars);
	e->ncode = p->ncode;
	e->nnames = p->nnames;
	e->bound = 0;
	e->name_off = name_off;
	e->chars = chars;
	return e;
}

struct td_expr *td_expr_parse(const char *text, char *err, size_t errlen)
{
	struct parser p = {.text = text, .pos = text, .err = err, .errlen = errlen};
	struct td_expr *e = NULL;
	size_t cap;

	if (text == NULL) {
		snprintf(err, errlen, "no expression text was given; pass the formula string");
		return NULL;
	}
	p.len = strlen(text);
	if (p.len > TD_EXPR_MAX_TEXT) {
		snprintf(err, errlen,
			 "the expression is %zu bytes long; split formulas longer than %d bytes",
			 p.len, TD_EXPR_MAX_TEXT);
		return NULL;
	}
	/* Every token takes at least one byte and emits at most one instruction
	 * and one name; names are no longer than their source plus a NUL. */
	cap = p.len + 1;
	p.code = malloc(cap * (sizeof(struct insn) + sizeof(uint32_t)) + 2 * cap);
	if (p.code == NULL) {
		snprintf(
			err, errlen,
			"out of memory compiling an expression of %zu bytes; free memory and retry",
			p.len);
		return NULL;
	}
	p.name_off = (uint32_t *)(p.code + cap);
	p.chars = (char *)(p.name_off + cap);
	if (parse_all(&p) == 0)
		e = pack(&p);
	free(p.code);
	return e;
}

size_t td_expr_name_count(const struct td_expr *e)
{
	return e->nnames;
}

const char *td_expr_name(const struct td_expr *e, size_t i)
{
	return i < e->nnames ? e->chars + e->name_off[i] : NULL;
}

int td_expr_bind(struct td_expr *e, int (*slot_of)(void *ctx, const char *name), void *ctx,
		 char *err, size_t errlen)
{
	size_t i, k;

	e->bound = 0;
	for (i = 0; i < e->nnames; i++) {
		const char *name = td_expr_name(e, i);
		int slot = slot_of(ctx, name);
		if (slot < 0) {
			snprintf(err, errlen,
				 "the formula uses '%s', which is no known event, metric or "
				 "constant; define it or fix the formula",
				 name);
			return slot;
		}
		for (k = 0; k < e->ncode; k++)
			if (e->code[k].op == OP_LOAD && e->code[k].name == i)
				e->code[k].slot = slot;
	}
	e->bound = 1;
	return 0;
}

static double truth(int b)
{
	return b ? 1.0 : 0.0;
}

/* Pop b, then replace a (the new top) with the value of expr. */
#define BINARY(expr)                                   \
	do {                                           \
		double a = st[sp - 2], b = st[sp - 1]; \
		st[--sp - 1] = (expr);                 \
	} while (0)
#define EITHER_NAN (isnan(a) || isnan(b))

double td_expr_eval(const struct td_expr *e, const double *values)
{
	double st[STACK_MAX];
	int sp = 0;
	size_t i;

	if (!e->bound)
		return NAN;
	for (i = 0; i < e->ncode; i++) {
		const struct insn *in = &e->code[i];
		switch (in->op) {
		case OP_NUM: st[sp++] = in->num; break;
		case OP_LOAD: st[sp++] = values[in->slot]; break;
		case OP_NEG: st[sp - 1] = -st[sp - 1]; break;
		case OP_NOT: st[sp - 1] = isnan(st[sp - 1]) ? NAN : truth(st[sp - 1] == 0); break;
		case OP_HAS_VALUE: st[sp - 1] = truth(!isnan(st[sp - 1])); break;
		case OP_ADD: BINARY(a + b); break;
		case OP_SUB: BINARY(a - b); break;
		case OP_MUL: BINARY(a * b); break;
		case OP_DIV: BINARY(b == 0 ? NAN : a / b); break;
		case OP_LT: BINARY(truth(a < b)); break;
		case OP_GT: BINARY(truth(a > b)); break;
		case OP_LE: BINARY(truth(a <= b)); break;
		case OP_GE: BINARY(truth(a >= b)); break;
		case OP_EQ: BINARY(truth(a == b)); break;
		case OP_NE: BINARY(EITHER_NAN ? 0.0 : truth(a != b)); break;
		case OP_AND: BINARY(EITHER_NAN ? NAN : truth(a != 0 && b != 0)); break;
		case OP_OR: BINARY(EITHER_NAN ? NAN : truth(a != 0 || b != 0)); break;
		case OP_MIN: BINARY(EITHER_NAN ? NAN : a < b ? a : b); break;
		case OP_MAX: BINARY(EITHER_NAN ? NAN : a > b ? a : b); break;
		case OP_SELECT: { /* x c y */
			double c = st[sp - 2];
			st[sp - 3] = isnan(c) ? NAN : c != 0 ? st[sp - 3] : st[sp - 1];
			sp -= 2;
			break;
		}
		}
	}
	return st[0];
}

void td_expr_free(struct td_expr *e)
{
	free(e);
}
