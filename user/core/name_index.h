/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A string-keyed index: each distinct key gets the next position, 0, 1,
 * 2..., in the order keys were first seen, and keys[] holds them by
 * position. Whoever deduplicates names (hot functions, folded stacks, a
 * pprof string table) keeps its items in an array of its own at the same
 * positions.
 */
#ifndef TOPDOWN_NAME_INDEX_H
#define TOPDOWN_NAME_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct td_name_index {
	uint32_t *slots; /* position + 1; 0: free */
	char **keys;     /* by position; the index owns them */
	size_t cap, count, keys_cap;
};

/* The position of key, adding a copy when new; -ENOMEM. *added says which. */
int64_t td_name_index_get(struct td_name_index *ix, const char *key, bool *added);

/* Frees the keys still held (a caller may take one and put NULL in its place). */
void td_name_index_free(struct td_name_index *ix);

#endif
