// SPDX-License-Identifier: BSD-3-Clause
/*
 * Fuzzes td_labels_parse_arg: the input is split at newlines into label
 * arguments, each parsed into one set, which is then copied and freed.
 * The whole input is also parsed as a TOPDOWN_LABELS list (check_list).
 * On success the stored value must be what followed the first '='; on
 * failure the message must be a non-empty, single line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"

static void check_one(struct td_labels *labels, const char *arg)
{
	char err[256] = "";

	if (td_labels_parse_arg(labels, arg, err, sizeof(err)) == 0) {
		const char *eq = strchr(arg, '=');
		char key[TD_LABEL_KEY_MAX + 1];
		size_t key_len = (size_t)(eq - arg);

		if (!eq || key_len > TD_LABEL_KEY_MAX)
			abort();
		memcpy(key, arg, key_len);
		key[key_len] = '\0';
		const char *value = td_labels_get(labels, key);

		if (!value || strcmp(value, eq + 1) != 0)
			abort();
	} else if (err[0] == '\0' || strchr(err, '\n')) {
		abort();
	}
}

/*
 * The whole input as a TOPDOWN_LABELS list: on success no more labels
 * than items; on failure one non-empty line, and nothing of the list kept.
 */
static void check_list(const char *text)
{
	struct td_labels labels;
	char err[512] = "";
	size_t items = 1;

	for (const char *p = text; *p; p++)
		items += *p == ',';
	td_labels_init(&labels);
	if (td_labels_parse_list(&labels, text, "TOPDOWN_LABELS", err, sizeof(err)) == 0) {
		if (labels.count > items)
			abort();
	} else if (err[0] == '\0' || strchr(err, '\n') || labels.count) {
		abort();
	}
	td_labels_free(&labels);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct td_labels labels, copy;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	check_list(text);

	td_labels_init(&labels);
	for (char *arg = text, *next; arg; arg = next) {
		next = strchr(arg, '\n');
		if (next)
			*next++ = '\0';
		check_one(&labels, arg);
	}
	td_labels_init(&copy);
	if (td_labels_copy(&copy, &labels) == 0 && copy.count != labels.count)
		abort();
	td_labels_free(&copy);
	td_labels_free(&labels);
	free(text);
	return 0;
}
