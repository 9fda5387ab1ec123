// SPDX-License-Identifier: BSD-3-Clause
/* Open addressing over FNV-1a hashes, twice as many slots as keys at least. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "name_index.h"

static uint64_t hash_text(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

int64_t td_name_index_get(struct td_name_index *ix, const char *key, bool *added)
{
	size_t mask, i;

	*added = false;
	if ((ix->count + 1) * 2 > ix->cap) {
		size_t cap = ix->cap ? ix->cap * 2 : 256;
		uint32_t *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (size_t k = 0; k < ix->count; k++) {
			for (i = hash_text(ix->keys[k]) & (cap - 1); slots[i]; i = (i + 1) & (cap - 1))
				;
			slots[i] = (uint32_t)k + 1;
		}
		free(ix->slots);
		ix->slots = slots;
		ix->cap = cap;
	}
	mask = ix->cap - 1;
	for (i = hash_text(key) & mask; ix->slots[i]; i = (i + 1) & mask)
		if (strcmp(ix->keys[ix->slots[i] - 1], key) == 0)
			return ix->slots[i] - 1;
	char **grown = td_grow(ix->keys, &ix->keys_cap, ix->count, sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	ix->keys = grown;
	if (!(ix->keys[ix->count] = strdup(key)))
		return -ENOMEM;
	ix->slots[i] = (uint32_t)++ix->count;
	*added = true;
	return (int64_t)ix->count - 1;
}

void td_name_index_free(struct td_name_index *ix)
{
	for (size_t i = 0; i < ix->count; i++)
		free(ix->keys[i]);
	free(ix->keys);
	free(ix->slots);
}
