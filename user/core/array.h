/* SPDX-License-Identifier: BSD-3-Clause */
/* Growing arrays. */
#ifndef TOPDOWN_ARRAY_H
#define TOPDOWN_ARRAY_H

#include <stddef.h>

/*
 * items with room for one more of size bytes past count: the array itself
 * while count < *cap, else reallocated to twice the capacity (16 at
 * first) with *cap updated. NULL when out of memory; the old array is
 * then still valid and still the caller's.
 */
void *td_grow(void *items, size_t *cap, size_t count, size_t size);

#endif
