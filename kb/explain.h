/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * explain: what each Top-Down metric means and what to do about it.
 *
 * Two halves joined at lookup time:
 *   - the prose, a compiled-in table (explain_text.c): per metric a title,
 *     a description, typical causes and tuning hints;
 *   - the definition, from the kb: tree path, level, parent, threshold and
 *     the models that define the metric.  The kb stays the one source of
 *     truth for everything that is not prose.
 *
 * Naming scheme.  A table entry is keyed by (vendor, metric name) and the
 * name is the one the kb uses: perf's tma_* names on Intel, Arm's and
 * AMD's own names elsewhere.  Arm and AMD both call their level-1 nodes
 * frontend_bound, backend_bound, bad_speculation and retiring, but count
 * them with different events and drill down differently, so each vendor
 * has its own entry.  A query that names several vendors' entries picks
 * the best match (exact name, then alias, then path, then tree node) and,
 * among equals, Intel, then Arm, then AMD; the others are reported in
 * td_explanation.also so the caller can point at --model.
 *
 * Both renderers (the CLI, the MCP tools) call td_explain_lookup() and
 * td_explain_list() and format what they return; neither computes
 * anything of its own.
 */
#ifndef TD_EXPLAIN_H
#define TD_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kb.h"

#define TD_EXPLAIN_MAX_ITEMS 5   /* causes or hints per entry */
#define TD_EXPLAIN_MAX_ALIASES 3
#define TD_EXPLAIN_MAX_SUGGESTIONS 3
#define TD_EXPLAIN_MAX_GROUP_MODELS 64 /* bits of td_explain_node.models */

/* The prose of one metric.  Arrays end at the first NULL. */
struct td_explain_text {
	enum td_vendor vendor;
	const char *name;  /* the kb's metric name */
	/* names the kb may not know: older or newer vendor spellings */
	const char *aliases[TD_EXPLAIN_MAX_ALIASES + 1];
	const char *title;
	const char *description;
	const char *causes[TD_EXPLAIN_MAX_ITEMS + 1];
	const char *hints[TD_EXPLAIN_MAX_ITEMS + 1];
	/*
	 * Only for vendor tree nodes the kb does not compute (Intel level-4
	 * nodes that need events beyond level 3): where the vendor's tree puts
	 * them, so explain can still place them.  NULL for every node the kb
	 * defines; the lint test keeps the two disjoint.
	 */
	const char *ref_path;
};

/* The compiled-in table, in Top-Down tree order within each vendor. */
extern const struct td_explain_text td_explain_texts[];
extern const size_t td_explain_text_count;

/*
 * One way the metric is defined: the models that agree on path, parent,
 * level and threshold.  Most metrics have one placement; a few sit
 * elsewhere on some models (Intel E-cores) or use other thresholds.
 */
struct td_explain_placement {
	const char *path;      /* dotted tree path; NULL for Info metrics */
	const char *parent;    /* dotted path of the parent; NULL at level 1 or off-tree */
	int level;             /* 1..4; 0 for Info metrics */
	const char *threshold; /* perf syntax; NULL when the kb has none */
	const char **models;   /* short model names */
	size_t n_models;
};

/* What explain shows for one metric.  Strings point into the kb or the
 * table and live as long as they do, except the arrays and the strings
 * marked owned, which td_explanation_free() releases. */
struct td_explanation {
	const struct td_explain_text *text;
	const char *name;                     /* the model's metric name with a model, else text->name */
	enum td_metric_kind kind;             /* TD_METRIC_TREE or TD_METRIC_INFO */
	bool computed;                        /* false: no model defines it (text->ref_path) */
	char **aliases;                       /* owned: kb and table aliases, deduplicated */
	size_t n_aliases;
	struct td_explain_placement *placements; /* most models first */
	size_t n_placements;
	const char **notes;                   /* the models' notes that apply, deduplicated */
	size_t n_notes;
	const struct td_explain_text **also;  /* other entries the query names too */
	size_t n_also;
	char *ref_parent;                     /* owned: parent path of a ref_path */
	/*
	 * Finding its code: what `topdown collect --sample-for` takes for it
	 * (the tree node; an uncomputed node's parent; else the metric name)
	 * and, when the lookup names a model, the event that samples on that
	 * model (td_model_sample_event) and whether precisely; else NULL.
	 */
	const char *locate_node;
	const char *sample_event;
	bool sample_precise;
	const char *sample_model;             /* the model's short name, with sample_event */
};

/* Short vendor name for output: "intel", "arm", "amd". */
const char *td_explain_vendor_name(enum td_vendor vendor);

/*
 * Find the entry for query: a metric name or alias (tma_dram_bound,
 * tma_l3_miss_bound, backend_bound), a full dotted path
 * (Backend_Bound.Memory_Bound.DRAM_Bound) or a tree node (DRAM_Bound);
 * case-insensitive.  model, when not NULL, restricts the search to that
 * model (name or alias, as td_kb_model() accepts) and the placements to it.
 *
 * Returns 0 and *out (free with td_explanation_free), or with one sentence
 * in err:
 *   -ENOENT  no such metric (on that model); err carries the nearest
 *            names as "did you mean" suggestions;
 *   -EINVAL  unknown model; err lists the known ones;
 *   -ENOMEM.
 */
int td_explain_lookup(const struct td_kb *kb, const char *query, const char *model,
		      struct td_explanation **out, char *err, size_t errlen);
void td_explanation_free(struct td_explanation *e);

/*
 * Up to max names (tree nodes, metric names, aliases) closest to query by
 * edit distance, nearest first, among those model (or every model, when
 * NULL) defines.  Returns how many were stored in names[]; they point into
 * the kb or the table.  Only names close enough to be a plausible typo
 * are offered.
 */
size_t td_explain_suggest(const struct td_kb *kb, const char *query, const struct td_model *model,
			  const char **names, size_t max);

/* One node of a listed tree, children in tree order. */
struct td_explain_node {
	const struct td_explain_text *text; /* NULL if the table lacks prose for it */
	const char *name;  /* metric name */
	const char *node;  /* tree node: "DRAM_Bound"; NULL for Info metrics */
	const char *path;  /* NULL for Info metrics */
	int level;         /* 0 for Info metrics */
	bool computed;     /* false: explained only (text->ref_path) */
	uint64_t models;   /* bit i set: the group's models[i] defines the node */
	struct td_explain_node *children;
	size_t n_children;
};

/* The metrics of a set of models that share one tree. */
struct td_explain_group {
	const char *label;    /* "Intel", "Intel E-core (cpu_atom)", "Arm Neoverse", "AMD Zen" */
	enum td_vendor vendor;
	const char **models;  /* short model names, at most TD_EXPLAIN_MAX_GROUP_MODELS */
	size_t n_models;
	struct td_explain_node *roots; /* level-1 nodes */
	size_t n_roots;
	struct td_explain_node *info;  /* Info metrics, table order */
	size_t n_info;
};

struct td_explain_listing {
	struct td_explain_group *groups;
	size_t n_groups;
};

/*
 * The tree of every model, grouped by vendor (Intel E-cores apart), or of
 * one model (with its E-core model, for hybrid parts).  Without a model the Intel tree also shows the nodes that are
 * explained but not computed.  0, -EINVAL (unknown model, err lists the
 * known ones), -E2BIG (a group outgrew TD_EXPLAIN_MAX_GROUP_MODELS) or
 * -ENOMEM.
 */
int td_explain_list(const struct td_kb *kb, const char *model,
		    struct td_explain_listing **out, char *err, size_t errlen);
void td_explain_listing_free(struct td_explain_listing *listing);

#endif
