/* SPDX-License-Identifier: MIT */
/* Appending to the model's dynamic arrays. */
#ifndef GPUSPY_ARRAY_GROW_H
#define GPUSPY_ARRAY_GROW_H

#include <stdlib.h>
#include <string.h>

/* Grows an array by doubling; returns a zeroed new last element or NULL. */
static inline void *array_grow(void **items, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void *p = realloc(*items, ncap * size);

		if (!p)
			return NULL;
		*items = p;
		*cap = ncap;
	}
	memset((char *)*items + *n * size, 0, size);
	return (char *)*items + (*n)++ * size;
}

#endif /* GPUSPY_ARRAY_GROW_H */
