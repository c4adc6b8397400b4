// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include "output/trace/pid_filter.h"
#include "output/trace/trace_reader.h"

/* The most a format 2 block may store: what zstd may need for the largest payload (a block
 * may store up to ZSTD_COMPRESSBOUND(its raw_len)). */
#define STORED_MAX ZSTD_COMPRESSBOUND(GS_BLOCK_MAX_PAYLOAD)

struct trace_reader {
	FILE *f;
	struct gs_file_header header;
	unsigned char *payload; /* the current block's records, decoded */
	unsigned char *stored;	/* format 2: the current block as stored */
	ZSTD_DCtx *zd;		/* format 2 */
	uint32_t len, pos;
	uint64_t offset; /* file offset of the next block */
	uint64_t blocks;
	bool trailer_seen;
	bool at_end;
	const struct pid_filter *filter;
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
	if (h->version_major < GS_TRACE_OLDEST_MAJOR || h->version_major > GS_TRACE_VERSION_MAJOR) {
		set_error(err, errlen,
			  "unsupported trace format version %u.%u (this gpuspy reads %u.x to %u.x)",
			  h->version_major, h->version_minor, GS_TRACE_OLDEST_MAJOR,
			  GS_TRACE_VERSION_MAJOR);
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
	if (r->header.version_major >= 2 &&
	    (!(r->stored = malloc(STORED_MAX)) || !(r->zd = ZSTD_createDCtx()))) {
		set_error(err, errlen, "out of memory");
		goto fail;
	}
	r->header.hostname[sizeof(r->header.hostname) - 1] = '\0';
	r->header.kernel_release[sizeof(r->header.kernel_release) - 1] = '\0';
	r->offset = sizeof(r->header);
	*out = r;
	return 0;
fail:
	if (r)
		r->f = NULL;
	trace_reader_close(r);
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

/* Also frees a reader trace_reader_open_file() is giving up on (its `f` not yet set). */
void trace_reader_close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	ZSTD_freeDCtx(r->zd);
	free(r->stored);
	free(r->payload);
	free(r);
}

const struct gs_file_header *trace_reader_header(const struct trace_reader *r)
{
	return &r->header;
}

static int corrupt(struct trace_reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->error, sizeof(r->error), "corrupt trace: ");

	va_start(ap, fmt);
	vsnprintf(r->error + n, sizeof(r->error) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static bool checksum_ok(uLong crc, uint32_t stored)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	/* the fuzz target (Makefile) gets past checksums to the decoder and the record checks */
	(void)crc;
	(void)stored;
	return true;
#else
	return (uint32_t)crc == stored;
#endif
}

static int corrupt_length(struct trace_reader *r, uint32_t len)
{
	return corrupt(r, "bad block length %u at offset %llu", len, (unsigned long long)r->offset);
}

/* Format 1: the payload is the records. 1 loaded, 0 end of the data, -1 corrupt. */
static int load_raw_block(struct trace_reader *r, uint32_t *count)
{
	struct gs_block_header bh;

	if (fread(&bh, 1, sizeof(bh), r->f) < sizeof(bh))
		return 0; /* EOF, or a block header cut short by a crash */
	if (bh.magic != GS_BLOCK_MAGIC)
		return corrupt(r, "bad block marker at offset %llu", (unsigned long long)r->offset);
	if (bh.payload_len > GS_BLOCK_MAX_PAYLOAD || bh.payload_len < sizeof(struct gs_hdr))
		return corrupt_length(r, bh.payload_len);
	if (fread(r->payload, 1, bh.payload_len, r->f) < bh.payload_len)
		return 0; /* the last block was being written when the recording stopped */
	if (!checksum_ok(crc32(0L, r->payload, bh.payload_len), bh.crc32))
		return corrupt(r, "checksum mismatch in block at offset %llu",
			       (unsigned long long)r->offset);
	r->offset += sizeof(bh) + bh.payload_len;
	r->len = bh.payload_len;
	*count = bh.record_count;
	return 1;
}

/* Format 2: the header and every length are checked before anything is read or decoded into
 * the fixed buffers; the checksum before decoding. 1 loaded, 0 end of the data, -1 corrupt. */
static int load_zblock(struct trace_reader *r, uint32_t *count, uint16_t *transform)
{
	struct gs_zblock_header bh;
	unsigned char *data = r->stored;
	uLong crc;
	size_t n;

	if (fread(&bh, 1, sizeof(bh), r->f) < sizeof(bh))
		return 0;
	if (bh.magic != GS_ZBLOCK_MAGIC)
		return corrupt(r, "bad block marker at offset %llu", (unsigned long long)r->offset);
	if (bh.codec > GS_CODEC_ZSTD || (bh.transform & ~GS_XFORM_KNOWN))
		return corrupt(r, "unknown block encoding %u/%#x at offset %llu", bh.codec,
			       bh.transform, (unsigned long long)r->offset);
	if (bh.raw_len > GS_BLOCK_MAX_PAYLOAD || bh.raw_len < sizeof(struct gs_hdr))
		return corrupt_length(r, bh.raw_len);
	if (bh.codec == GS_CODEC_NONE
		? bh.stored_len != bh.raw_len
		: !bh.stored_len || bh.stored_len > ZSTD_COMPRESSBOUND(bh.raw_len))
		return corrupt_length(r, bh.stored_len);
	if (bh.codec == GS_CODEC_NONE)
		data = r->payload; /* read in place, no decoding */
	if (fread(data, 1, bh.stored_len, r->f) < bh.stored_len)
		return 0;
	crc = crc32(crc32(0L, (const Bytef *)&bh, offsetof(struct gs_zblock_header, crc32)), data,
		    bh.stored_len);
	if (!checksum_ok(crc, bh.crc32))
		return corrupt(r, "checksum mismatch in block at offset %llu",
			       (unsigned long long)r->offset);
	if (bh.codec == GS_CODEC_ZSTD) {
		n = ZSTD_decompressDCtx(r->zd, r->payload, bh.raw_len, data, bh.stored_len);
		if (ZSTD_isError(n))
			return corrupt(r, "cannot decode block at offset %llu (%s)",
				       (unsigned long long)r->offset, ZSTD_getErrorName(n));
		if (n != bh.raw_len)
			return corrupt(r, "block at offset %llu decodes to %zu bytes, not %u",
				       (unsigned long long)r->offset, n, bh.raw_len);
	}
	r->offset += sizeof(bh) + bh.stored_len;
	r->len = bh.raw_len;
	*count = bh.record_count;
	*transform = bh.transform;
	return 1;
}

/* Every record of the loaded block is checked (and its transform undone) before the first is
 * handed out: sizes that tile the block exactly, `count` of them, each valid for its type. */
static int check_block(struct trace_reader *r, uint32_t count, uint16_t transform)
{
	uint64_t ts = 0;
	uint32_t pos = 0, n = 0;

	while (pos < r->len) {
		struct gs_hdr *h = (struct gs_hdr *)(r->payload + pos);

		if (r->len - pos < sizeof(*h))
			return corrupt(r, "partial record in block ending at offset %llu",
				       (unsigned long long)r->offset);
		if (transform & GS_XFORM_TS_DELTA)
			h->ts = ts += h->ts;
		if (h->size > r->len - pos || !gs_record_valid(h))
			return corrupt(
			    r, "bad record (type %u, size %u) in block ending at offset %llu",
			    h->type, h->size, (unsigned long long)r->offset);
		pos += h->size;
		n++;
	}
	if (n != count)
		return corrupt(r, "block ending at offset %llu holds %u records, not %u",
			       (unsigned long long)r->offset, n, count);
	return 0;
}

/* 1: a block was loaded, 0: clean or truncated end, -1: corruption. */
static int load_block(struct trace_reader *r)
{
	uint32_t count = 0;
	uint16_t transform = 0;
	int ret = r->header.version_major >= 2 ? load_zblock(r, &count, &transform)
					       : load_raw_block(r, &count);

	if (ret <= 0)
		return ret;
	if (check_block(r, count, transform))
		return -1;
	r->pos = 0;
	r->blocks++;
	return 1;
}

/* The next record of the file, filtered or not. */
static int next_record(struct trace_reader *r, const struct gs_hdr **rec)
{
	const struct gs_hdr *h;
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
	h = (const void *)(r->payload + r->pos);
	r->pos += h->size; /* checked by check_block() */
	if (h->type == GS_REC_TRAILER)
		r->trailer_seen = true;
	*rec = h;
	return 1;
}

int trace_reader_next(struct trace_reader *r, const struct gs_hdr **rec)
{
	int ret;

	while ((ret = next_record(r, rec)) > 0 && !pid_filter_keeps(r->filter, *rec))
		;
	return ret;
}

void trace_reader_set_filter(struct trace_reader *r, const struct pid_filter *f)
{
	r->filter = f;
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
