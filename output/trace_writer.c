// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "trace_writer.h"

/* A block is flushed at this size; small enough to keep memory bounded and crash loss small. */
#define BLOCK_TARGET (256u << 10)
_Static_assert(BLOCK_TARGET + GS_RECORD_MAX_SIZE <= GS_BLOCK_MAX_PAYLOAD, "block bound");

struct trace_writer {
	int fd;
	unsigned char *payload;
	size_t len;
	uint32_t count;
	uint64_t bytes;
	uint64_t records;
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

int trace_writer_open(const char *path, bool overwrite, const struct gs_file_header *header,
		      struct trace_writer **out)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
	struct trace_writer *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->payload = malloc(BLOCK_TARGET + GS_RECORD_MAX_SIZE);
	if (!w->payload) {
		err = -ENOMEM;
		goto fail;
	}
	w->fd = open(path, flags, 0600);
	if (w->fd < 0) {
		err = -errno;
		goto fail;
	}
	/* O_TRUNC keeps an existing file's mode: the trace holds command lines and paths */
	if (fchmod(w->fd, 0600) < 0) {
		err = -errno;
		goto fail;
	}
	err = write_all(w->fd, header, sizeof(*header));
	if (err)
		goto fail;
	w->bytes = sizeof(*header);
	*out = w;
	return 0;
fail:
	trace_writer_abandon(w);
	return err;
}

int trace_writer_flush(struct trace_writer *w)
{
	struct gs_block_header bh = {
	    .magic = GS_BLOCK_MAGIC,
	    .payload_len = (uint32_t)w->len,
	    .record_count = w->count,
	    .crc32 = (uint32_t)crc32(0L, w->payload, (uInt)w->len),
	};
	int err;

	if (!w->len)
		return 0;
	/* header and payload in one buffer would need a copy; two writes are fine because a
	 * reader treats a block cut anywhere as the truncated end */
	err = write_all(w->fd, &bh, sizeof(bh));
	if (!err)
		err = write_all(w->fd, w->payload, w->len);
	if (err)
		return err;
	w->bytes += sizeof(bh) + w->len;
	w->len = 0;
	w->count = 0;
	return 0;
}

/* The record of `size` bytes now at the payload's end is complete: count it, and write the
 * block out once it is full. The payload always has room for one more record. */
static int commit_record(struct trace_writer *w, size_t size)
{
	w->len += size;
	w->count++;
	w->records++;
	return w->len >= BLOCK_TARGET ? trace_writer_flush(w) : 0;
}

int trace_writer_append(struct trace_writer *w, const struct gs_hdr *rec)
{
	size_t size = rec->size;

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
	if (!err && fsync(w->fd) < 0)
		err = -errno;
	if (close(w->fd) < 0 && !err)
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
