/* SPDX-License-Identifier: MIT */
/*
 * Interned strings: every GPU kernel, CUPTI API and NVTX range name is stored once and referred
 * to by a small id, since a training step repeats the same few hundred names millions of times.
 * Kernel names also get their demangled form, computed once per name.
 */
#ifndef GPUSPY_STRING_POOL_H
#define GPUSPY_STRING_POOL_H

#include <stddef.h>
#include <stdint.h>
#include "lib/key_index.h"

struct pooled_string {
	char *s;
	char *display; /* demangled, when asked for; NULL otherwise */
};

struct string_pool {
	struct pooled_string *v;
	size_t n, cap;
	struct key_index ix; /* (hash, hash') -> v[] */
};

/* The id of `s`, added if new; 0, or -1 when out of memory. */
int string_pool_intern(struct string_pool *p, const char *s, uint32_t *id);
const char *string_pool_get(const struct string_pool *p, uint32_t id);
/* Computes the demangled form of string `id` (once); 0, or -1 when out of memory. */
int string_pool_demangle(struct string_pool *p, uint32_t id);
/* The demangled form when computed, else the string itself. */
const char *string_pool_display(const struct string_pool *p, uint32_t id);
void string_pool_free(struct string_pool *p);

#endif /* GPUSPY_STRING_POOL_H */
