/* SPDX-License-Identifier: MIT */
/*
 * Reads a trace file block by block, checking every length, offset and checksum. A file cut
 * short (a crash mid-recording) reads up to its last complete block and is flagged truncated;
 * anything else malformed is an error with a one-line message.
 */
#ifndef GPUSPY_TRACE_READER_H
#define GPUSPY_TRACE_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "output/trace/trace_format.h"

struct trace_reader;

/* Takes ownership of `f` (also on failure). 0, or -1 with a message in `err`. */
int trace_reader_open_file(FILE *f, struct trace_reader **out, char *err, size_t errlen);
int trace_reader_open(const char *path, struct trace_reader **out, char *err, size_t errlen);
void trace_reader_close(struct trace_reader *r);
struct pid_filter;
/* From now on, next() skips the records `f` does not keep (pid_filter.h); NULL: none. `f` must
 * outlive the reader. */
void trace_reader_set_filter(struct trace_reader *r, const struct pid_filter *f);

const struct gs_file_header *trace_reader_header(const struct trace_reader *r);

/* 1 with *rec set (valid until the next call), 0 at the end, -1 on a corrupt file
 * (trace_reader_error() says why). */
int trace_reader_next(struct trace_reader *r, const struct gs_hdr **rec);

/* After the end: true when the trailer was read, i.e. the recording finished. */
bool trace_reader_complete(const struct trace_reader *r);
const char *trace_reader_error(const struct trace_reader *r);
uint64_t trace_reader_blocks(const struct trace_reader *r);

#endif /* GPUSPY_TRACE_READER_H */
