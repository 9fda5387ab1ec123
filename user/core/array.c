// SPDX-License-Identifier: BSD-3-Clause
#include <stdlib.h>

#include "array.h"

void *td_grow(void *items, size_t *cap, size_t count, size_t size)
{
	size_t new_cap = *cap ? *cap * 2 : 16;
	void *grown;

	if (count < *cap)
		return items;
	grown = reallocarray(items, new_cap, size);
	if (grown)
		*cap = new_cap;
	return grown;
}
