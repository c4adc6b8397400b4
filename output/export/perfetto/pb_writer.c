// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "output/export/perfetto/pb_writer.h"

static bool reserve(struct pb_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *p;

	if (b->oom)
		return false;
	if (b->len + more <= b->cap)
		return true;
	while (cap < b->len + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void put_varint(struct pb_buf *b, uint64_t v)
{
	if (!reserve(b, 10))
		return;
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

static void put_tag(struct pb_buf *b, uint32_t field, unsigned wire)
{
	put_varint(b, (uint64_t)field << 3 | wire);
}

void pb_reset(struct pb_buf *b)
{
	b->len = 0;
}

void pb_free(struct pb_buf *b)
{
	free(b->p);
	*b = (struct pb_buf){0};
}

void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	put_tag(b, field, 0);
	put_varint(b, v);
}

void pb_int(struct pb_buf *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

void pb_fixed64(struct pb_buf *b, uint32_t field, uint64_t v)
{
	put_tag(b, field, 1);
	if (!reserve(b, 8))
		return;
	/* little-endian whatever the host */
	for (int i = 0; i < 8; i++)
		b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

void pb_double(struct pb_buf *b, uint32_t field, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	pb_fixed64(b, field, bits);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
	put_tag(b, field, 2);
	put_varint(b, len);
	if (!len || !reserve(b, len))
		return;
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

void pb_string(struct pb_buf *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg)
{
	if (msg->oom)
		b->oom = true;
	pb_bytes(b, field, msg->p, msg->len);
}
