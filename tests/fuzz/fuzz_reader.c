// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the trace reader: any bytes must give records that pass validation
 * or a clean error, never a crash, leak or undefined behaviour. Every record the reader
 * returns is also fed to the statistics code the reports use, and written again by the trace
 * writer: reading that file back must give the same records, byte for byte (the writer's
 * encoding is lossless). The Makefile builds the reader without its checksum checks here
 * (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION), so mutated blocks reach the decoder.
 *
 * Run on a trace file (`fuzz_reader FILE`), it checks that file's round trip once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "output/model/histogram.h"
#include "output/trace/trace_reader.h"
#include "output/trace/trace_writer.h"

static void consume(const struct gs_hdr *h, struct duration_stats *all)
{
	if (h->type == GS_REC_SYSCALL_STATS) {
		duration_stats_add_record(all, (const void *)h);
		(void)duration_stats_median(all);
		(void)duration_stats_stddev(all);
	}
}

static void fail(const char *what, unsigned long long n)
{
	fprintf(stderr, "fuzz_reader: round trip: %s (%llu)\n", what, n);
	abort();
}

/* Every record read (`n` of them, back to back in `recs`) written to a fresh file, read back. */
static void round_trip(const struct gs_file_header *header, const unsigned char *recs, size_t len,
		       unsigned long long n)
{
	struct trace_writer *w;
	struct trace_reader *r;
	const struct gs_hdr *h;
	unsigned long long got = 0;
	char path[64], err[256];
	size_t pos = 0;
	int fd = memfd_create("fuzz_reader", MFD_CLOEXEC), ret;

	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* the writer owns (and closes) what it is given; the reader opens the memfd by path */
	if (trace_writer_open(dup(fd), header, &w))
		fail("cannot open the writer", 0);
	for (; pos < len; pos += ((const struct gs_hdr *)(recs + pos))->size)
		if (trace_writer_append(w, (const void *)(recs + pos)))
			fail("the writer refused a record the reader gave", pos);
	if (trace_writer_flush(w))
		fail("cannot flush", 0);
	trace_writer_abandon(w);
	if (trace_reader_open(path, &r, err, sizeof(err)))
		fail(err, 0);
	for (pos = 0; (ret = trace_reader_next(r, &h)) > 0; pos += h->size, got++)
		if (pos + h->size > len || memcmp(recs + pos, h, h->size))
			fail("a record differs", got);
	if (ret < 0)
		fail(trace_reader_error(r), got);
	if (got != n || pos != len)
		fail("records missing", got);
	trace_reader_close(r);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct duration_stats all;
	struct gs_file_header header;
	struct trace_reader *r;
	const struct gs_hdr *h;
	unsigned char *recs = NULL, *grown;
	size_t len = 0, cap = 0;
	unsigned long long n = 0;
	char err[256];
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "rb");
	if (!f)
		return 0;
	if (trace_reader_open_file(f, &r, err, sizeof(err)))
		return 0;
	header = *trace_reader_header(r);
	duration_stats_init(&all);
	while (trace_reader_next(r, &h) > 0) {
		consume(h, &all);
		if (len + h->size > cap) {
			cap = (len + h->size) * 2;
			if (!(grown = realloc(recs, cap)))
				abort();
			recs = grown;
		}
		memcpy(recs + len, h, h->size);
		len += h->size;
		n++;
	}
	trace_reader_close(r);
	round_trip(&header, recs, len, n);
	free(recs);
	return 0;
}
