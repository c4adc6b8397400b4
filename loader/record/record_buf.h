/* SPDX-License-Identifier: MIT */
/* Whole records kept in memory in the order they came: the events a step window holds until it
 * knows whether they fall inside it, and the records the live step finder reads again. */
#ifndef GPUSPY_RECORD_BUF_H
#define GPUSPY_RECORD_BUF_H

#include <stddef.h>
#include <stdint.h>
#include "output/trace/trace_format.h"

struct record_buf {
	unsigned char *data;
	size_t len, cap;
	size_t count;
};

/* Appends a copy of `rec` (its hdr.size bytes, checked by the trace writer). 0 or -ENOMEM. */
int record_buf_add(struct record_buf *b, const struct gs_hdr *rec);

/* The first record, or NULL when empty; the one after `h`, or NULL. */
const struct gs_hdr *record_buf_first(const struct record_buf *b);
const struct gs_hdr *record_buf_next(const struct record_buf *b, const struct gs_hdr *h);

/* 1 keeps the record, 0 lets it go, negative stops the walk with that error. */
typedef int (*record_buf_keep_fn)(void *ctx, const struct gs_hdr *rec);
/* Walks the records in order and keeps those `keep` wants, in order; memory shrinks when most
 * went. On an error the records not walked yet are kept. 0 or the error. */
int record_buf_filter(struct record_buf *b, record_buf_keep_fn keep, void *ctx);

void record_buf_free(struct record_buf *b);

#endif /* GPUSPY_RECORD_BUF_H */
