/* SPDX-License-Identifier: MIT */
/* Streams records into a trace file in bounded memory: one block buffer, compressed (zstd) into
 * one output buffer and written whole (docs/FORMAT.md, format 2). */
#ifndef GPUSPY_TRACE_WRITER_H
#define GPUSPY_TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include "output/trace/trace_format.h"

struct trace_writer;

/* A writer into `fd` (a new file: out_file_create()), which it owns from here, closed on
 * failure too. Writes `header` with the magic, version and header size of the format written
 * here. 0 or -errno. */
int trace_writer_open(int fd, const struct gs_file_header *header, struct trace_writer **out);
/* A record as a sink takes it; nonzero stops like a failed write (-errno). */
typedef int (*trace_sink_fn)(void *ctx, const struct gs_hdr *rec);
/* A writer without a file: every record appended is handed to `fn` at once, checked as a
 * file's would be, so `gpuspy top` and `serve` consume exactly the records a trace holds.
 * Flush and finish write nothing. 0 or -ENOMEM. */
int trace_writer_open_sink(trace_sink_fn fn, void *ctx, struct trace_writer **out);
/* A gate sees each record appended before the writer takes it: 0 lets it in, 1 means the gate
 * took it (it keeps a copy to append later, or the record is not wanted), negative fails the
 * append (-errno). It must not append to the writer itself: to append what it kept, remove the
 * gate first. `record --steps` holds events back this way until it knows whether they fall in
 * its window. */
typedef int (*trace_gate_fn)(void *ctx, const struct gs_hdr *rec);
/* Puts `fn` before every later append; NULL removes the gate. */
void trace_writer_set_gate(struct trace_writer *w, trace_gate_fn fn, void *ctx);
/* Appends one record (its hdr.size bytes); full blocks are written out. 0 or -errno; after a
 * failed write every call returns that error (the file ends in a partial block). */
int trace_writer_append(struct trace_writer *w, const struct gs_hdr *rec);
/* Appends a record made of `fixed_size` bytes at `fixed` (its hdr.size is set here) followed by
 * the string `tail`, cut to `max` bytes with its NUL, padded with zeros to 8 bytes: the shape
 * of every record with a name or path at its end. 0 or -errno. */
int trace_writer_append_tail(struct trace_writer *w, const struct gs_hdr *fixed, size_t fixed_size,
			     const char *tail, size_t max);
/* Writes the pending block, if any, so a crash after this loses nothing before it. */
int trace_writer_flush(struct trace_writer *w);
/* Appends the trailer, flushes, syncs and closes; frees `w` whatever happens. 0 or -errno. */
int trace_writer_finish(struct trace_writer *w, uint64_t end_ts);
/* Closes without a trailer (the file then reads as truncated). */
void trace_writer_abandon(struct trace_writer *w);

/* Bytes in the file so far (header and compressed blocks) plus the raw size of the pending
 * block, which is 0 right after trace_writer_flush(). */
uint64_t trace_writer_bytes(const struct trace_writer *w);
uint64_t trace_writer_records(const struct trace_writer *w);

#endif /* GPUSPY_TRACE_WRITER_H */
