/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Run labels: an ordered set of key=value pairs (git_branch=unstable).
 * Keys are unique; setting an existing key replaces its value, which is
 * how user labels override the auto-detected ones.
 */
#ifndef TOPDOWN_LABELS_H
#define TOPDOWN_LABELS_H

#include <stddef.h>

#define TD_LABEL_KEY_MAX 64     /* bytes, without the NUL */
#define TD_LABEL_VALUE_MAX 256

struct td_label {
	char *key;
	char *value;
};

struct td_labels {
	size_t count, cap;
	struct td_label *items;
};

void td_labels_init(struct td_labels *labels);
void td_labels_free(struct td_labels *labels);

/* Adds or replaces key. 0, or -ENOMEM. Does not validate. */
int td_labels_set(struct td_labels *labels, const char *key, const char *value);
const char *td_labels_get(const struct td_labels *labels, const char *key);
int td_labels_copy(struct td_labels *dst, const struct td_labels *src);

/*
 * Parses one "key=value" argument into labels. Keys: a letter or '_',
 * then letters, digits, '_', '.', '-', at most TD_LABEL_KEY_MAX bytes;
 * values: non-empty UTF-8 text without control characters (C0, DEL, C1),
 * at most TD_LABEL_VALUE_MAX bytes. This is the one check of labels a
 * user gives (the CLI, MCP arguments, the agent, TOPDOWN_LABELS): what it
 * accepts, every store accepts, so no window is collected only to be
 * refused. On bad syntax returns -EINVAL and writes one sentence naming
 * the problem and the fix into err.
 */
int td_labels_parse_arg(struct td_labels *labels, const char *arg,
			char *err, size_t errlen);

/*
 * Parses a comma-separated list of key=value labels, as the
 * TOPDOWN_LABELS environment variable holds them ("team=db,tier=prod"),
 * into labels; what names the list in messages. Each item follows
 * td_labels_parse_arg's rules (a value cannot hold a comma); spaces
 * around an item are ignored, and NULL or an empty list adds nothing.
 * On a bad item returns -EINVAL, err names it and what, and labels keeps
 * nothing of the list.
 */
int td_labels_parse_list(struct td_labels *labels, const char *list, const char *what,
			 char *err, size_t errlen);

/* Whether key could be a label key, by the rules above: 0, or -EINVAL
 * with one sentence in err. */
int td_label_key_check(const char *key, char *err, size_t errlen);

#endif
