// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "loader/record/record_buf.h"

#define MIN_CAP (64u << 10)

static int reserve(struct record_buf *b, size_t cap)
{
	unsigned char *p = realloc(b->data, cap);

	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int record_buf_add(struct record_buf *b, const struct gs_hdr *rec)
{
	size_t cap = b->cap ? b->cap : MIN_CAP;

	while (cap - b->len < rec->size)
		cap *= 2;
	if (cap != b->cap && reserve(b, cap))
		return -ENOMEM;
	memcpy(b->data + b->len, rec, rec->size);
	b->len += rec->size;
	b->count++;
	return 0;
}

const struct gs_hdr *record_buf_first(const struct record_buf *b)
{
	return b->len ? (const struct gs_hdr *)b->data : NULL;
}

const struct gs_hdr *record_buf_next(const struct record_buf *b, const struct gs_hdr *h)
{
	size_t next = (size_t)((const unsigned char *)h - b->data) + h->size;

	return next < b->len ? (const struct gs_hdr *)(b->data + next) : NULL;
}

int record_buf_filter(struct record_buf *b, record_buf_keep_fn keep, void *ctx)
{
	size_t in = 0, out = 0, count = 0;
	int ret = 0;

	while (in < b->len) {
		struct gs_hdr *h = (struct gs_hdr *)(b->data + in);
		size_t size = h->size;

		ret = keep(ctx, h);
		if (ret < 0)
			break;
		if (ret) {
			memmove(b->data + out, h, size);
			out += size;
			count++;
		}
		in += size;
	}
	if (ret < 0) { /* the rest stays as it was */
		for (size_t at = in; at < b->len; at += ((struct gs_hdr *)(b->data + at))->size)
			count++;
		memmove(b->data + out, b->data + in, b->len - in);
		out += b->len - in;
	}
	b->len = out;
	b->count = count;
	/* a window's held events can reach hundreds of MiB once; give it back when they went */
	if (b->cap > MIN_CAP && b->len < b->cap / 4) {
		size_t cap = b->cap / 2;

		while (cap > MIN_CAP && b->len < cap / 4)
			cap /= 2;
		reserve(b, cap); /* a failure to shrink keeps the larger buffer */
	}
	return ret < 0 ? ret : 0;
}

void record_buf_free(struct record_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
