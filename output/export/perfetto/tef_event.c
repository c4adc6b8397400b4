// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "output/export/perfetto/tef_event.h"

struct cursor {
	char *p, *end;
};

static void skip_ws(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
}

static void put_utf8(char **out, unsigned cp)
{
	char *o = *out;

	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xe0 | cp >> 12);
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	*out = o;
}

/* A string, unescaped in place: the unescaped text is never longer than the escaped one, and
 * the closing quote's byte is there for its terminating NUL. */
static char *parse_string(struct cursor *c)
{
	char *start, *out;

	if (c->p >= c->end || *c->p != '"')
		return NULL;
	start = out = ++c->p;
	while (c->p < c->end && *c->p != '"') {
		char ch = *c->p++;

		if (ch != '\\') {
			*out++ = ch;
			continue;
		}
		if (c->p >= c->end)
			return NULL;
		ch = *c->p++;
		switch (ch) {
		case 'n':
			*out++ = '\n';
			break;
		case 't':
			*out++ = '\t';
			break;
		case 'r':
			*out++ = '\r';
			break;
		case 'b':
			*out++ = '\b';
			break;
		case 'f':
			*out++ = '\f';
			break;
		case 'u': {
			char hex[5];

			if (c->end - c->p < 4)
				return NULL;
			memcpy(hex, c->p, 4);
			hex[4] = '\0';
			c->p += 4;
			/* \uXXXX is at most 3 bytes of UTF-8, shorter than its 6 */
			put_utf8(&out, (unsigned)strtoul(hex, NULL, 16));
			break;
		}
		default: /* \" \\ \/ */
			*out++ = ch;
			break;
		}
	}
	if (c->p >= c->end)
		return NULL;
	*out = '\0';
	c->p++;
	return start;
}

/* Skips any value: strings, numbers, literals, nested arrays and objects. */
static int skip_value(struct cursor *c)
{
	int depth = 0;
	bool in_str = false;

	skip_ws(c);
	do {
		if (c->p >= c->end)
			return -1;
		char ch = *c->p++;

		if (in_str) {
			if (ch == '\\')
				c->p++;
			else if (ch == '"')
				in_str = false;
		} else if (ch == '"') {
			in_str = true;
		} else if (ch == '{' || ch == '[') {
			depth++;
		} else if (ch == '}' || ch == ']') {
			depth--;
		} else if (!depth && (ch == ',' || ch == ' ' || ch == '\n')) {
			c->p--;
			return 0;
		}
	} while (depth > 0 || in_str || (c->p < c->end && !strchr(",}] \n", *c->p)));
	return depth ? -1 : 0;
}

static uint64_t parse_uint(struct cursor *c)
{
	uint64_t v = 0;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		v = v * 10 + (uint64_t)(*c->p++ - '0');
	return v;
}

/* µs with up to three decimals, as ns; the writer prints ns exactly so no rounding is needed */
static uint64_t parse_us(struct cursor *c)
{
	uint64_t ns = parse_uint(c) * 1000, scale = 100;

	if (c->p < c->end && *c->p == '.') {
		c->p++;
		while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
			ns += (uint64_t)(*c->p++ - '0') * scale;
			scale /= 10;
		}
	}
	return ns;
}

int tef_parse(char *text, size_t len, struct tef_event *e)
{
	struct cursor c = {text, text + len};

	*e = (struct tef_event){.name = "", .cat = ""};
	skip_ws(&c);
	if (c.p >= c.end || *c.p++ != '{')
		return -1;
	for (;;) {
		char *key, *v;

		skip_ws(&c);
		if (c.p < c.end && *c.p == '}')
			return 0;
		if (!(key = parse_string(&c)))
			return -1;
		skip_ws(&c);
		if (c.p >= c.end || *c.p++ != ':')
			return -1;
		skip_ws(&c);
		if (!strcmp(key, "ph") || !strcmp(key, "name") || !strcmp(key, "cat")) {
			if (!(v = parse_string(&c)))
				return -1;
			if (key[0] == 'p')
				e->ph = v[0];
			else if (key[0] == 'n')
				e->name = v;
			else
				e->cat = v;
		} else if (!strcmp(key, "pid")) {
			e->pid = parse_uint(&c);
		} else if (!strcmp(key, "tid")) {
			e->tid = parse_uint(&c);
		} else if (!strcmp(key, "id")) {
			e->id = parse_uint(&c);
			e->has_id = true;
		} else if (!strcmp(key, "ts")) {
			e->ts_ns = parse_us(&c);
		} else if (!strcmp(key, "dur")) {
			e->dur_ns = parse_us(&c);
			e->has_dur = true;
		} else if (!strcmp(key, "args")) {
			if (c.p >= c.end || *c.p != '{')
				return -1;
			e->args = c.p + 1;
			if (skip_value(&c))
				return -1;
			e->args_end = c.p - 1;
		} else if (skip_value(&c)) {
			return -1;
		}
		skip_ws(&c);
		if (c.p < c.end && *c.p == ',')
			c.p++;
	}
}

int tef_next_arg(const struct tef_event *e, char **pos, struct tef_arg *a)
{
	struct cursor c = {*pos, (char *)e->args_end};
	char *start;

	skip_ws(&c);
	if (c.p < c.end && *c.p == ',')
		c.p++;
	skip_ws(&c);
	if (c.p >= c.end)
		return 0;
	*a = (struct tef_arg){0};
	if (!(a->key = parse_string(&c)))
		return -1;
	skip_ws(&c);
	if (c.p >= c.end || *c.p++ != ':')
		return -1;
	skip_ws(&c);
	start = c.p;
	if (c.p < c.end && *c.p == '"') {
		a->kind = TEF_ARG_STRING;
		if (!(a->s = parse_string(&c)))
			return -1;
	} else {
		if (skip_value(&c))
			return -1;
		if (*start == 't' || *start == 'f') {
			a->kind = TEF_ARG_BOOL;
			a->b = *start == 't';
		} else if (*start == '[' || *start == '{' || *start == 'n') {
			a->kind = TEF_ARG_JSON;
		} else {
			char *num_end;

			a->kind = memchr(start, '.', (size_t)(c.p - start)) ||
					  memchr(start, 'e', (size_t)(c.p - start))
				      ? TEF_ARG_DOUBLE
				      : TEF_ARG_INT;
			if (a->kind == TEF_ARG_INT)
				a->i = strtoll(start, &num_end, 10);
			else
				a->d = strtod(start, &num_end);
		}
		if (a->kind == TEF_ARG_JSON) {
			/* its text, cut off where the value ends: the separator after it (or
			 * the args' closing brace) is overwritten, and the next call starts past
			 * it */
			a->s = start;
			*c.p = '\0';
			c.p++;
		}
	}
	*pos = c.p;
	return 1;
}
