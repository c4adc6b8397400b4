// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "output/trace/trace_writer.h"

/* A block is flushed at this size; small enough to keep memory bounded and crash loss small. */
#define BLOCK_TARGET (256u << 10)
#define PAYLOAD_CAP  (BLOCK_TARGET + GS_RECORD_MAX_SIZE)
_Static_assert(PAYLOAD_CAP <= GS_BLOCK_MAX_PAYLOAD, "block bound");
/* zstd level 1: on gpuspy's records levels 2-3 are no smaller, and the negative levels are at
 * most 1.4 times faster for output 1.5 to 3 times larger (docs/FORMAT.md) */
#define ZSTD_LEVEL 1

struct trace_writer {
	int fd;
	unsigned char *payload; /* records of the pending block */
	size_t len;
	uint32_t count;
	unsigned char *out; /* a block header, then its compressed payload */
	size_t out_cap;
	ZSTD_CCtx *zc;
	int err; /* a failed write: the file ends in a partial block, nothing more is written */
	uint64_t bytes; /* written to the file */
	uint64_t records;
	trace_sink_fn sink; /* no file: records go here as they come */
	void *sink_ctx;
	trace_gate_fn gate; /* before the records are counted: the caller's filter */
	void *gate_ctx;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int trace_writer_open(int fd, const struct gs_file_header *header, struct trace_writer **out)
{
	struct trace_writer *w = calloc(1, sizeof(*w));
	struct gs_file_header h;
	int err;

	if (!w) {
		close(fd);
		return -ENOMEM;
	}
	w->fd = fd;
	w->payload = malloc(PAYLOAD_CAP);
	w->out_cap = sizeof(struct gs_zblock_header) + ZSTD_COMPRESSBOUND(PAYLOAD_CAP);
	w->out = malloc(w->out_cap);
	w->zc = ZSTD_createCCtx();
	if (!w->payload || !w->out || !w->zc ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, ZSTD_LEVEL))) {
		err = -ENOMEM;
		goto fail;
	}
	/* the blocks below are this writer's format, whatever the caller filled in */
	h = *header;
	memcpy(h.magic, GS_TRACE_MAGIC, sizeof(h.magic));
	h.version_major = GS_TRACE_VERSION_MAJOR;
	h.version_minor = GS_TRACE_VERSION_MINOR;
	h.header_size = sizeof(h);
	err = write_all(w->fd, &h, sizeof(h));
	if (err)
		goto fail;
	w->bytes = sizeof(*header);
	*out = w;
	return 0;
fail:
	trace_writer_abandon(w);
	return err;
}

int trace_writer_open_sink(trace_sink_fn fn, void *ctx, struct trace_writer **out)
{
	struct trace_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->sink = fn;
	w->sink_ctx = ctx;
	w->payload = malloc(GS_RECORD_MAX_SIZE);
	if (!w->payload) {
		free(w);
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

/* Each record's ts minus the previous one's (the first's minus 0), in place: time stamps then
 * differ in a few low bytes only, which compress better. Sizes were checked when appended. */
static void delta_ts(unsigned char *p, size_t len)
{
	uint64_t prev = 0;

	for (size_t pos = 0; pos < len;) {
		struct gs_hdr *h = (struct gs_hdr *)(p + pos);
		uint64_t ts = h->ts;

		h->ts = ts - prev;
		prev = ts;
		pos += h->size;
	}
}

int trace_writer_flush(struct trace_writer *w)
{
	struct gs_zblock_header bh = {
	    .magic = GS_ZBLOCK_MAGIC,
	    .raw_len = (uint32_t)w->len,
	    .record_count = w->count,
	    .codec = GS_CODEC_ZSTD,
	    .transform = GS_XFORM_TS_DELTA,
	};
	size_t hsize = sizeof(bh), crc_len = offsetof(struct gs_zblock_header, crc32), n;
	const unsigned char *data = w->out + hsize;
	int err;

	if (w->err || !w->len || w->sink)
		return w->err;
	delta_ts(w->payload, w->len);
	n = ZSTD_compress2(w->zc, w->out + hsize, w->out_cap - hsize, w->payload, w->len);
	if (ZSTD_isError(n) || n >= w->len) { /* incompressible (or a zstd failure): as is */
		bh.codec = GS_CODEC_NONE;
		n = w->len;
		data = w->payload;
	}
	bh.stored_len = (uint32_t)n;
	bh.crc32 = (uint32_t)crc32(crc32(0L, (const Bytef *)&bh, (uInt)crc_len), data, (uInt)n);
	/* a raw block takes two writes; a reader treats a block cut anywhere as the end */
	if (data == w->payload)
		err = write_all(w->fd, &bh, hsize) ?: write_all(w->fd, data, n);
	else
		err = write_all(w->fd, memcpy(w->out, &bh, hsize), hsize + n);
	if (err)
		return w->err = err;
	w->bytes += hsize + n;
	w->len = 0;
	w->count = 0;
	return 0;
}

/* The record of `size` bytes now at the payload's end is complete: count it, and write the
 * block out once it is full. The payload always has room for one more record. */
static int commit_record(struct trace_writer *w, size_t size)
{
	int taken =
	    w->gate ? w->gate(w->gate_ctx, (const struct gs_hdr *)(w->payload + w->len)) : 0;

	if (taken)
		return taken < 0 ? taken : 0; /* a gate's failure is the append's, not the file's */
	if (w->sink) {
		w->records++;
		w->bytes += size;
		w->err = w->sink(w->sink_ctx, (const struct gs_hdr *)w->payload);
		return w->err;
	}
	w->len += size;
	w->count++;
	w->records++;
	return w->len >= BLOCK_TARGET ? trace_writer_flush(w) : 0;
}

void trace_writer_set_gate(struct trace_writer *w, trace_gate_fn fn, void *ctx)
{
	w->gate = fn;
	w->gate_ctx = ctx;
}

int trace_writer_append(struct trace_writer *w, const struct gs_hdr *rec)
{
	size_t size = rec->size;

	if (w->err)
		return w->err;
	if (size < sizeof(*rec) || size > GS_RECORD_MAX_SIZE || size % 8)
		return -EINVAL;
	memcpy(w->payload + w->len, rec, size);
	return commit_record(w, size);
}

int trace_writer_append_tail(struct trace_writer *w, const struct gs_hdr *fixed, size_t fixed_size,
			     const char *tail, size_t max)
{
	size_t len = max ? strnlen(tail, max - 1) : 0;
	size_t size = gs_align8(fixed_size + len + 1);
	unsigned char *at = w->payload + w->len;

	if (w->err)
		return w->err;
	if (fixed_size < sizeof(*fixed) || size > GS_RECORD_MAX_SIZE)
		return -EINVAL;
	/* built in place: the string and the zeroed padding up to the 8-byte size */
	memcpy(at, fixed, fixed_size);
	memcpy(at + fixed_size, tail, len);
	memset(at + fixed_size + len, 0, size - fixed_size - len);
	((struct gs_hdr *)at)->size = (__u16)size;
	return commit_record(w, size);
}

int trace_writer_finish(struct trace_writer *w, uint64_t end_ts)
{
	struct gs_trailer t = {
	    .hdr = {.type = GS_REC_TRAILER, .size = sizeof(t), .ts = end_ts},
	    .records = w->records,
	};
	int err = trace_writer_append(w, &t.hdr);

	if (!err)
		err = trace_writer_flush(w);
	if (!err && w->fd >= 0 && fsync(w->fd) < 0)
		err = -errno;
	if (w->fd >= 0 && close(w->fd) < 0 && !err)
		err = -errno;
	w->fd = -1;
	trace_writer_abandon(w);
	return err;
}

void trace_writer_abandon(struct trace_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->zc);
	free(w->out);
	free(w->payload);
	free(w);
}

uint64_t trace_writer_bytes(const struct trace_writer *w)
{
	return w->bytes + w->len;
}

uint64_t trace_writer_records(const struct trace_writer *w)
{
	return w->records;
}
