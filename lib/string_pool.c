// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "lib/demangle.h"
#include "lib/string_pool.h"

/* Two independent 64-bit hashes form the index key; a string whose key is taken by another
 * string (practically never) probes the next second-hash value. */
static void hash2(const char *s, uint64_t *h1, uint64_t *h2)
{
	uint64_t a = 0xcbf29ce484222325ULL, b = 5381;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		a = (a ^ *p) * 0x100000001b3ULL;
		b = b * 33 + *p;
	}
	*h1 = a;
	*h2 = b;
}

int string_pool_intern(struct string_pool *p, const char *s, uint32_t *id)
{
	struct pooled_string *e;
	uint64_t h1, h2;
	size_t i;

	hash2(s, &h1, &h2);
	for (;; h2++) {
		if (!key_index_find(&p->ix, h1, h2, &i))
			break;
		if (!strcmp(p->v[i].s, s)) {
			*id = (uint32_t)i;
			return 0;
		}
	}
	if (p->n >= UINT32_MAX)
		return -1;
	e = array_grow((void **)&p->v, &p->n, &p->cap, sizeof(*e));
	if (!e)
		return -1;
	e->s = strdup(s);
	if (!e->s || key_index_put(&p->ix, h1, h2, p->n - 1)) {
		free(e->s);
		p->n--;
		return -1;
	}
	*id = (uint32_t)(p->n - 1);
	return 0;
}

const char *string_pool_get(const struct string_pool *p, uint32_t id)
{
	return id < p->n ? p->v[id].s : "";
}

int string_pool_demangle(struct string_pool *p, uint32_t id)
{
	if (id >= p->n || p->v[id].display)
		return 0;
	p->v[id].display = demangle(p->v[id].s);
	return p->v[id].display ? 0 : -1;
}

const char *string_pool_display(const struct string_pool *p, uint32_t id)
{
	if (id >= p->n)
		return "";
	return p->v[id].display ? p->v[id].display : p->v[id].s;
}

void string_pool_free(struct string_pool *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].s);
		free(p->v[i].display);
	}
	free(p->v);
	key_index_free(&p->ix);
	memset(p, 0, sizeof(*p));
}
