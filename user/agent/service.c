// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's systemd unit and settings file, as text.
 *
 * The unit comes from the template packaging/packaging.mk embeds: a field
 * is an at sign, capital letters or '_', and an at sign ("@EXEC_START@");
 * other at signs ("@system-service") are text. Values are quoted the way
 * systemd reads them back: ExecStart= splits words at spaces unless they
 * are double-quoted and expands '%' and '$'; EnvironmentFile= unquotes
 * "..." with backslash escapes before '"', '\', '`' and '$'.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"

extern const char td_service_unit_template[];

#define CAPS_COMMON "CAP_BPF CAP_PERFMON CAP_SYS_RESOURCE CAP_SYS_PTRACE"

struct field {
	const char *name;
	const char *value;
};

const char *td_service_capabilities(const char *kernel_release, int perf_event_paranoid)
{
	unsigned major, minor;

	if (!kernel_release || sscanf(kernel_release, "%u.%u", &major, &minor) != 2)
		return CAPS_COMMON " CAP_SYS_ADMIN"; /* unknown: the set that works everywhere */
	if (major < 5 || (major == 5 && minor < 8))
		return CAPS_COMMON " CAP_SYS_ADMIN";
	/* Debian's and Ubuntu's levels 3 and 4: perf_event_open checks
	 * capable(CAP_SYS_ADMIN) first, whatever CAP_PERFMON says. */
	if (perf_event_paranoid > 2 || perf_event_paranoid == TD_PARANOID_UNKNOWN)
		return CAPS_COMMON " CAP_SYS_ADMIN";
	return CAPS_COMMON;
}

int td_service_label_check(const struct td_label *label, char *err, size_t errlen)
{
	if (strpbrk(label->value, ",\"'\n")) {
		snprintf(err, errlen, "label %s=%.64s: the agent's TOPDOWN_LABELS cannot carry a comma, "
			 "quote or newline in a value; choose a value without them", label->key,
			 label->value);
		return -EINVAL;
	}
	return 0;
}

static bool has_control_char(const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

/* Characters an ExecStart= word may hold without quotes. */
static bool is_plain_exec_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("-_./:=,+", c));
}

/* One word of ExecStart=, quoted when it needs to be. */
static void put_exec_word(FILE *out, const char *word)
{
	bool plain = *word != '\0';

	for (const char *p = word; *p; p++)
		plain = plain && is_plain_exec_char(*p);
	if (!plain)
		fputc('"', out);
	for (const char *p = word; *p; p++) {
		if (*p == '%' || *p == '$') /* "%%" and "$$" are systemd's literal % and $ */
			fputc(*p, out);
		else if (*p == '"' || *p == '\\')
			fputc('\\', out);
		fputc(*p, out);
	}
	if (!plain)
		fputc('"', out);
}

/* The ExecStart= value (malloc'd): exe agent ARGS..., or NULL with err. */
static char *exec_start(const struct td_service_unit *unit, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len;
	FILE *out = open_memstream(&text, &len);

	if (!out) {
		snprintf(err, errlen, "out of memory writing the unit; free memory and retry");
		return NULL;
	}
	put_exec_word(out, unit->exe);
	fputs(" agent", out);
	for (size_t i = 0; i < unit->nr_agent_args; i++) {
		if (has_control_char(unit->agent_args[i])) {
			snprintf(err, errlen, "the agent option '%.64s' holds a control character, which a "
				 "unit file cannot carry; remove it", unit->agent_args[i]);
			fclose(out);
			free(text);
			return NULL;
		}
		fputc(' ', out);
		put_exec_word(out, unit->agent_args[i]);
	}
	if (fclose(out)) {
		free(text);
		snprintf(err, errlen, "out of memory writing the unit; free memory and retry");
		return NULL;
	}
	return text;
}

#define FIELD_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZ_"

/*
 * What starts at *at: 1 and *field for a field ("@NAME@"), 0 for text
 * ("@system-service"), -EINVAL with err for a name the template should
 * not hold.
 */
static int field_at(const char *at, const struct field *fields, size_t nr,
		    const struct field **field, char *err, size_t errlen)
{
	size_t len = strspn(at + 1, FIELD_NAME_CHARS);

	if (*at != '@' || len == 0 || at[1 + len] != '@')
		return 0;
	for (size_t i = 0; i < nr; i++)
		if (strlen(fields[i].name) == len && !strncmp(fields[i].name, at + 1, len)) {
			*field = &fields[i];
			return 1;
		}
	snprintf(err, errlen, "the unit template names an unknown field '%.*s'; "
		 "fix packaging/topdown-agent.service.in", (int)len + 2, at);
	return -EINVAL;
}

/* Writes the line [line, eol) with its fields filled in, or nothing when
 * one of its fields is empty. */
static int put_template_line(FILE *out, const char *line, const char *eol,
			     const struct field *fields, size_t nr, char *err, size_t errlen)
{
	const struct field *f;
	const char *p;
	int ret;

	for (p = line; p < eol; p++) {
		if ((ret = field_at(p, fields, nr, &f, err, errlen)) < 0)
			return ret;
		if (ret && !*f->value)
			return 0;
	}
	for (p = line; p < eol; p++) {
		if (field_at(p, fields, nr, &f, err, errlen) == 1) {
			fputs(f->value, out);
			p += strlen(f->name) + 1; /* past the closing '@' */
		} else {
			fputc(*p, out);
		}
	}
	return 0;
}

char *td_service_unit_render(const struct td_service_unit *unit, char *err, size_t errlen)
{
	char *exec = exec_start(unit, err, errlen), *text = NULL;
	const struct field fields[] = {
		{ "EXEC_START", exec },
		{ "ENVIRONMENT_FILE", unit->env_file },
		{ "CAPABILITIES", td_service_capabilities(unit->kernel_release, unit->perf_event_paranoid) },
		{ "READ_WRITE_PATHS", unit->read_write_dir ? unit->read_write_dir : "" },
	};
	const char *line, *eol;
	size_t len;
	FILE *out;
	int ret = 0;

	if (!exec)
		return NULL;
	if (!(out = open_memstream(&text, &len))) {
		free(exec);
		snprintf(err, errlen, "out of memory writing the unit; free memory and retry");
		return NULL;
	}
	for (line = td_service_unit_template; !ret && *line; line = eol) {
		eol = strchrnul(line, '\n');
		eol += *eol == '\n';
		ret = put_template_line(out, line, eol, fields, sizeof(fields) / sizeof(fields[0]),
					err, errlen);
	}
	free(exec);
	if (fclose(out) && !ret) {
		snprintf(err, errlen, "out of memory writing the unit; free memory and retry");
		ret = -ENOMEM;
	}
	if (ret) {
		free(text);
		return NULL;
	}
	return text;
}

/* NAME="value" with systemd's (and the shell's) double-quote escapes. */
static int put_env(FILE *out, const char *name, const char *value, char *err, size_t errlen)
{
	if (has_control_char(value)) {
		snprintf(err, errlen, "the value for %s holds a control character (a newline?), "
			 "which the settings file cannot carry; remove it", name);
		return -EINVAL;
	}
	fprintf(out, "%s=\"", name);
	for (const char *p = value; *p; p++) {
		if (strchr("\"\\`$", *p))
			fputc('\\', out);
		fputc(*p, out);
	}
	fputs("\"\n", out);
	return 0;
}

/* TOPDOWN_LABELS: the labels as "k=v,k2=v2". */
static int put_labels(FILE *out, const struct td_labels *labels, char *err, size_t errlen)
{
	char *joined = NULL;
	size_t len;
	FILE *buf;
	int ret = 0;

	if (!labels || labels->count == 0)
		return 0;
	if (!(buf = open_memstream(&joined, &len)))
		return -ENOMEM;
	for (size_t i = 0; i < labels->count && !ret; i++) {
		ret = td_service_label_check(&labels->items[i], err, errlen);
		fprintf(buf, "%s%s=%s", i ? "," : "", labels->items[i].key, labels->items[i].value);
	}
	if (fclose(buf) && !ret)
		ret = -ENOMEM;
	if (!ret)
		ret = put_env(out, "TOPDOWN_LABELS", joined, err, errlen);
	free(joined);
	return ret;
}

char *td_service_env_render(const struct td_service_env *env, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len;
	FILE *out = open_memstream(&text, &len);
	int ret = 0;

	if (!out) {
		snprintf(err, errlen, "out of memory writing the settings; free memory and retry");
		return NULL;
	}
	fputs("# topdown agent settings, read by systemd (EnvironmentFile=). Written by\n"
	      "# `topdown install-service`; mode 0600, since TOPDOWN_DSN may hold a password.\n", out);
	ret = put_labels(out, env->labels, err, errlen);
	if (!ret && env->backend)
		ret = put_env(out, "TOPDOWN_BACKEND", env->backend, err, errlen);
	if (!ret && env->dsn)
		ret = put_env(out, "TOPDOWN_DSN", env->dsn, err, errlen);
	if (!ret && env->db_path)
		ret = put_env(out, "TOPDOWN_DB_PATH", env->db_path, err, errlen);
	if (fclose(out) && !ret)
		ret = -ENOMEM;
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory writing the settings; free memory and retry");
	if (ret) {
		free(text);
		return NULL;
	}
	return text;
}
