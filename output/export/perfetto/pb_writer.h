/* SPDX-License-Identifier: MIT */
/*
 * The protobuf wire format, by hand (REFERENCE.md §3: varints, length-delimited fields, fixed64
 * are all Perfetto's TracePacket needs): a message is built in a growable buffer, a nested one in
 * its own buffer and then copied in as a length-delimited field, since its length comes first.
 * Knows nothing of Perfetto; a failed allocation is remembered and reported once at the end.
 */
#ifndef GPUSPY_PB_WRITER_H
#define GPUSPY_PB_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pb_buf {
	uint8_t *p;
	size_t len, cap;
	bool oom; /* an append failed: the message is incomplete */
};

void pb_reset(struct pb_buf *b);
void pb_free(struct pb_buf *b);
/* varint field (wire type 0) */
void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v);
/* int64 field: negative values as their two's complement, ten bytes, as protobuf does */
void pb_int(struct pb_buf *b, uint32_t field, int64_t v);
/* fixed64 field (wire type 1); doubles as their bits */
void pb_fixed64(struct pb_buf *b, uint32_t field, uint64_t v);
void pb_double(struct pb_buf *b, uint32_t field, double v);
/* length-delimited field (wire type 2): a string, bytes, or a nested message's buffer */
void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
void pb_string(struct pb_buf *b, uint32_t field, const char *s);
void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg);

#endif /* GPUSPY_PB_WRITER_H */
