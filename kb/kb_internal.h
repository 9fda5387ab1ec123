/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kb_internal: the private side of a parsed knowledge base, shared by the
 * parser (kb_parse.c), the builder and lookups (kb.c) and CPU detection
 * (kb_detect.c).  Nothing outside kb/ includes this.
 */
#ifndef TD_KB_INTERNAL_H
#define TD_KB_INTERNAL_H

#include <stddef.h>

#include "kb.h"

/* A name of the value vector: event, '#' constant, metric or alias. */
struct kb_name {
	const char *name; /* not NUL-terminated for aliases: len counts */
	size_t len;
	int slot;
};

/* Keys a detect rule can test.  Each holds ranges; none means "any". */
enum kb_detect_key {
	KB_KEY_FAMILY,
	KB_KEY_MODEL,
	KB_KEY_STEPPING,
	KB_KEY_IMPLEMENTER,
	KB_KEY_PART,
	KB_KEY_VARIANT,
	KB_KEY_REVISION,
	KB_KEY_COUNT
};

#define KB_MAX_RANGES 8

struct kb_match {
	unsigned n;
	unsigned lo[KB_MAX_RANGES], hi[KB_MAX_RANGES];
};

struct kb_detect_rule {
	struct kb_match key[KB_KEY_COUNT];
};

struct kb_model {
	struct td_model pub; /* first: a td_model pointer converts back */
	struct td_event_def *events;
	size_t cap_events;
	const char **constants;
	size_t cap_constants;
	struct td_metric_def *metrics;
	size_t cap_metrics;
	struct kb_detect_rule *rules;
	size_t n_rules, cap_rules;
	const char *e_core_name;
	const char *alternate_for_name; /* "alternate_for NAME" */
	struct kb_name *index; /* hash table of index_mask + 1 cells */
	size_t index_mask;
	const char *file; /* where the model was defined, for errors */
};

struct td_kb {
	char *text; /* the definitions; every string points into it */
	struct kb_model *models;
	size_t n_models, cap_models;
};

static inline struct kb_model *kb_model_of(const struct td_model *m)
{
	return (struct kb_model *)m;
}

/* Split text (modified in place) into kb->models; syntax only. */
int kb_parse_text(struct td_kb *kb, char *text, char *err, size_t errlen);

#endif
