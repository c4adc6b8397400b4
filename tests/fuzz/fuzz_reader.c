// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the trace reader: any bytes must give records that pass validation
 * or a clean error, never a crash, leak or undefined behaviour. Every record the reader
 * returns is also fed to the statistics code the reports use.
 */
#include <stdint.h>
#include <stdio.h>
#include "histogram.h"
#include "trace_reader.h"

static void consume(const struct gs_hdr *h, struct duration_stats *all)
{
	if (h->type == GS_REC_SYSCALL_STATS) {
		duration_stats_add_record(all, (const void *)h);
		(void)duration_stats_median(all);
		(void)duration_stats_stddev(all);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct duration_stats all;
	struct trace_reader *r;
	const struct gs_hdr *h;
	char err[256];
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "rb");
	if (!f)
		return 0;
	if (trace_reader_open_file(f, &r, err, sizeof(err)))
		return 0;
	duration_stats_init(&all);
	while (trace_reader_next(r, &h) > 0)
		consume(h, &all);
	trace_reader_close(r);
	return 0;
}
