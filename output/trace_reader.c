// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "trace_reader.h"

struct trace_reader {
	FILE *f;
	struct gs_file_header header;
	unsigned char *payload;
	uint32_t len, pos;
	uint64_t offset; /* file offset of the next block */
	uint64_t blocks;
	bool trailer_seen;
	bool at_end;
	char error[160];
};

static void set_error(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static int check_header(const struct gs_file_header *h, size_t got, char *err, size_t errlen)
{
	if (got < sizeof(h->magic) || memcmp(h->magic, GS_TRACE_MAGIC, sizeof(h->magic))) {
		set_error(err, errlen, "not a gpuspy trace file");
		return -1;
	}
	if (got < sizeof(*h)) {
		set_error(err, errlen, "truncated trace file header");
		return -1;
	}
	if (h->version_major != GS_TRACE_VERSION_MAJOR) {
		set_error(err, errlen,
			  "unsupported trace format version %u.%u (this gpuspy reads %u.x)",
			  h->version_major, h->version_minor, GS_TRACE_VERSION_MAJOR);
		return -1;
	}
	if (h->header_size != sizeof(*h)) {
		set_error(err, errlen, "bad trace header size %u", h->header_size);
		return -1;
	}
	return 0;
}

int trace_reader_open_file(FILE *f, struct trace_reader **out, char *err, size_t errlen)
{
	struct trace_reader *r = calloc(1, sizeof(*r));
	size_t got;

	if (!r || !(r->payload = malloc(GS_BLOCK_MAX_PAYLOAD))) {
		set_error(err, errlen, "out of memory");
		goto fail;
	}
	r->f = f;
	got = fread(&r->header, 1, sizeof(r->header), f);
	if (check_header(&r->header, got, err, errlen))
		goto fail;
	r->header.hostname[sizeof(r->header.hostname) - 1] = '\0';
	r->header.kernel_release[sizeof(r->header.kernel_release) - 1] = '\0';
	r->offset = sizeof(r->header);
	*out = r;
	return 0;
fail:
	if (r)
		free(r->payload);
	free(r);
	fclose(f);
	return -1;
}

int trace_reader_open(const char *path, struct trace_reader **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");

	if (!f) {
		set_error(err, errlen, "%s", strerror(errno));
		return -1;
	}
	return trace_reader_open_file(f, out, err, errlen);
}

void trace_reader_close(struct trace_reader *r)
{
	if (!r)
		return;
	fclose(r->f);
	free(r->payload);
	free(r);
}

const struct gs_file_header *trace_reader_header(const struct trace_reader *r)
{
	return &r->header;
}

/* 1: a block was loaded, 0: clean or truncated end, -1: corruption. */
static int load_block(struct trace_reader *r)
{
	struct gs_block_header bh;
	size_t got = fread(&bh, 1, sizeof(bh), r->f);

	if (got < sizeof(bh))
		return 0; /* EOF, or a block header cut short by a crash */
	if (bh.magic != GS_BLOCK_MAGIC) {
		set_error(r->error, sizeof(r->error),
			  "corrupt trace: bad block marker at offset %llu",
			  (unsigned long long)r->offset);
		return -1;
	}
	if (bh.payload_len > GS_BLOCK_MAX_PAYLOAD || bh.payload_len < sizeof(struct gs_hdr)) {
		set_error(r->error, sizeof(r->error),
			  "corrupt trace: bad block length %u at offset %llu", bh.payload_len,
			  (unsigned long long)r->offset);
		return -1;
	}
	if (fread(r->payload, 1, bh.payload_len, r->f) < bh.payload_len)
		return 0; /* the last block was being written when the recording stopped */
	if ((uint32_t)crc32(0L, r->payload, bh.payload_len) != bh.crc32) {
		set_error(r->error, sizeof(r->error),
			  "corrupt trace: checksum mismatch in block at offset %llu",
			  (unsigned long long)r->offset);
		return -1;
	}
	r->offset += sizeof(bh) + bh.payload_len;
	r->len = bh.payload_len;
	r->pos = 0;
	r->blocks++;
	return 1;
}

static int next_in_block(struct trace_reader *r, const struct gs_hdr **rec)
{
	const struct gs_hdr *h;
	uint32_t left = r->len - r->pos;

	if (left < sizeof(*h)) {
		set_error(r->error, sizeof(r->error),
			  "corrupt trace: partial record in block ending at offset %llu",
			  (unsigned long long)r->offset);
		return -1;
	}
	h = (const void *)(r->payload + r->pos);
	if (h->size > left || !gs_record_valid(h)) {
		set_error(
		    r->error, sizeof(r->error),
		    "corrupt trace: bad record (type %u, size %u) in block ending at offset %llu",
		    h->type, h->size, (unsigned long long)r->offset);
		return -1;
	}
	r->pos += h->size;
	if (h->type == GS_REC_TRAILER)
		r->trailer_seen = true;
	*rec = h;
	return 1;
}

int trace_reader_next(struct trace_reader *r, const struct gs_hdr **rec)
{
	int ret;

	if (r->error[0])
		return -1;
	while (r->pos >= r->len) {
		if (r->at_end)
			return 0;
		ret = load_block(r);
		if (ret <= 0) {
			r->at_end = true;
			return ret;
		}
	}
	return next_in_block(r, rec);
}

bool trace_reader_complete(const struct trace_reader *r)
{
	return r->trailer_seen;
}

const char *trace_reader_error(const struct trace_reader *r)
{
	return r->error;
}

uint64_t trace_reader_blocks(const struct trace_reader *r)
{
	return r->blocks;
}
