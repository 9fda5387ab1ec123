// SPDX-License-Identifier: BSD-3-Clause
/*
 * Run labels: a small ordered array. Runs carry a handful of labels, so a
 * linear search beats anything cleverer and keeps insertion order, which
 * is the order they are shown in.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "utf8.h"

#define STR_(x) #x
#define STR(x) STR_(x)

void td_labels_init(struct td_labels *labels)
{
	labels->count = 0;
	labels->cap = 0;
	labels->items = NULL;
}

void td_labels_free(struct td_labels *labels)
{
	for (size_t i = 0; i < labels->count; i++) {
		free(labels->items[i].key);
		free(labels->items[i].value);
	}
	free(labels->items);
	td_labels_init(labels);
}

static struct td_label *find(const struct td_labels *labels, const char *key)
{
	for (size_t i = 0; i < labels->count; i++)
		if (strcmp(labels->items[i].key, key) == 0)
			return &labels->items[i];
	return NULL;
}

static int grow(struct td_labels *labels)
{
	size_t cap = labels->cap ? labels->cap * 2 : 8;
	struct td_label *items = realloc(labels->items, cap * sizeof(*items));

	if (!items)
		return -ENOMEM;
	labels->items = items;
	labels->cap = cap;
	return 0;
}

int td_labels_set(struct td_labels *labels, const char *key, const char *value)
{
	struct td_label *old = find(labels, key);
	char *value_copy = strdup(value);

	if (!value_copy)
		return -ENOMEM;
	if (old) {
		free(old->value);
		old->value = value_copy;
		return 0;
	}

	char *key_copy = strdup(key);

	if (!key_copy || (labels->count == labels->cap && grow(labels) < 0)) {
		free(key_copy);
		free(value_copy);
		return -ENOMEM;
	}
	labels->items[labels->count].key = key_copy;
	labels->items[labels->count].value = value_copy;
	labels->count++;
	return 0;
}

const char *td_labels_get(const struct td_labels *labels, const char *key)
{
	const struct td_label *label = find(labels, key);

	return label ? label->value : NULL;
}

/* dst receives src's labels on top of what it holds; on failure dst keeps
 * whatever was copied so far and still owns it. */
int td_labels_copy(struct td_labels *dst, const struct td_labels *src)
{
	for (size_t i = 0; i < src->count; i++) {
		int rc = td_labels_set(dst, src->items[i].key, src->items[i].value);

		if (rc < 0)
			return rc;
	}
	return 0;
}

static bool is_key_start(unsigned char c)
{
	return isascii(c) && (isalpha(c) || c == '_');
}

static bool is_key_char(unsigned char c)
{
	return isascii(c) && (isalnum(c) || c == '_' || c == '.' || c == '-');
}

/*
 * A printable excerpt of arg for error messages: at most 40 bytes, control
 * characters and bytes that are not UTF-8 shown as '?', so a message stays one readable line.
 */
#define PREVIEW_MAX 40
static void preview(const char *arg, char out[PREVIEW_MAX + 4])
{
	size_t n = 0;

	for (; arg[n] && n < PREVIEW_MAX; n++) {
		unsigned char c = (unsigned char)arg[n];

		out[n] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	out[n] = '\0';
	td_utf8_sanitize(out); /* bytes that are not UTF-8, or a character cut at the end */
	strcpy(out + n, arg[n] ? "..." : "");
}

/* What is wrong with key (len bytes), or NULL. */
static const char *key_problem(const char *key, size_t len)
{
	if (len == 0)
		return "the key before '=' is empty";
	if (len > TD_LABEL_KEY_MAX)
		return "the key is longer than " STR(TD_LABEL_KEY_MAX) " bytes";
	if (!is_key_start((unsigned char)key[0]))
		return "a key starts with a letter or '_'";
	for (size_t i = 1; i < len; i++)
		if (!is_key_char((unsigned char)key[i]))
			return "a key holds only letters, digits, '_', '.' and '-'";
	return NULL;
}

/* What is wrong with value, or NULL. */
static const char *value_problem(const char *value)
{
	size_t len = strlen(value);

	if (len == 0)
		return "the value after '=' is empty";
	if (len > TD_LABEL_VALUE_MAX)
		return "the value is longer than " STR(TD_LABEL_VALUE_MAX) " bytes";
	for (size_t i = 0, n; i < len; i += n) {
		const unsigned char *c = (const unsigned char *)value + i;

		/* both stores keep text as UTF-8 only: refused here, before any window */
		if (!(n = td_utf8_char_len(c)))
			return "the value is not UTF-8 text; give it in UTF-8";
		/* C0, DEL, and C1 (U+0080..U+009F, 0xC2 0x80..0x9F in UTF-8) */
		if (*c < 0x20 || *c == 0x7f || (*c == 0xc2 && c[1] < 0xa0))
			return "the value holds a control character (tab, newline...)";
	}
	return NULL;
}

/* What is wrong with a key=value text, or NULL; "" without '=', where the general advice says it all. */
static const char *label_problem(const char *text)
{
	const char *eq = strchr(text, '=');
	const char *why = eq ? key_problem(text, (size_t)(eq - text)) : "";

	return why ? why : value_problem(eq + 1);
}

int td_labels_parse_arg(struct td_labels *labels, const char *arg,
			char *err, size_t errlen)
{
	const char *text = arg ? arg : "";
	const char *eq = strchr(text, '=');
	const char *why = label_problem(text);

	if (why) {
		char shown[PREVIEW_MAX + 4];

		preview(text, shown);
		snprintf(err, errlen, "bad label '%s': %s%suse key=value, e.g. --label git_branch=unstable",
			 shown, why, *why ? "; " : "");
		return -EINVAL;
	}

	char key[TD_LABEL_KEY_MAX + 1];
	size_t key_len = (size_t)(eq - text);

	memcpy(key, text, key_len);
	key[key_len] = '\0';
	if (td_labels_set(labels, key, eq + 1) < 0) {
		snprintf(err, errlen, "out of memory storing label '%s'; free memory and retry", key);
		return -ENOMEM;
	}
	return 0;
}

/* One item of a list, without its surrounding spaces, into labels. */
static int parse_list_item(struct td_labels *labels, const char *item, size_t len, const char *what,
			   char *err, size_t errlen)
{
	const char *problem;
	char *arg;
	int ret;

	while (len && isspace((unsigned char)*item)) {
		item++;
		len--;
	}
	while (len && isspace((unsigned char)item[len - 1]))
		len--;
	if (!len) {
		snprintf(err, errlen, "%s: an empty label between commas, or a comma at an end; "
			 "write it as key=value,key2=value2 (e.g. team=db,tier=prod)", what);
		return -EINVAL;
	}
	if (!(arg = strndup(item, len))) {
		snprintf(err, errlen, "out of memory reading %s; free memory and retry", what);
		return -ENOMEM;
	}
	if ((problem = label_problem(arg))) {
		char shown[PREVIEW_MAX + 4];

		preview(arg, shown);
		snprintf(err, errlen, "%s: bad label '%s': %s%swrite it as key=value,key2=value2 (e.g. team=db,tier=prod)",
			 what, shown, problem, *problem ? "; " : "");
		ret = -EINVAL;
	} else {
		ret = td_labels_parse_arg(labels, arg, err, errlen); /* valid: only memory can fail */
	}
	free(arg);
	return ret;
}

int td_labels_parse_list(struct td_labels *labels, const char *list, const char *what,
			 char *err, size_t errlen)
{
	struct td_labels parsed;
	int ret = 0;

	if (!list || !list[strspn(list, " \t")])
		return 0;
	td_labels_init(&parsed);
	for (const char *item = list; !ret; item++) {
		size_t len = strcspn(item, ",");

		ret = parse_list_item(&parsed, item, len, what, err, errlen);
		item += len;
		if (!*item)
			break;
	}
	if (!ret && td_labels_copy(labels, &parsed)) {
		snprintf(err, errlen, "out of memory reading %s; free memory and retry", what);
		ret = -ENOMEM;
	}
	td_labels_free(&parsed);
	return ret;
}

int td_label_key_check(const char *key, char *err, size_t errlen)
{
	/* key_problem() speaks of the part before '=' when it is empty */
	const char *why = *key ? key_problem(key, strlen(key)) : "it is empty";
	char shown[PREVIEW_MAX + 4];

	if (!why)
		return 0;
	preview(key, shown);
	snprintf(err, errlen, "bad label key '%s': %s; keys look like git_branch or test_name",
		 shown, why);
	return -EINVAL;
}
