/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's native protobuf trace (`export --format perfetto`): the Chrome exporter's events,
 * each converted as it is written into TracePackets (docs/gpuspy_perfetto.proto
 * describes the subset), so the file is streamed in bounded memory and carries what the JSON
 * does: one track per thread and GPU stream, BEGIN/END slices, instants, counters, flows from a
 * launch to its GPU work, with names, categories and arg names interned.
 */
#ifndef GPUSPY_EXPORT_PERFETTO_H
#define GPUSPY_EXPORT_PERFETTO_H

#include <stddef.h>
#include <stdio.h>

struct export_opts;

/* A writer of the Chrome trace of `path` to `out` (export_chrome(), one layer up: it is passed
 * in, so this folder needs nothing of the exporters that use it): 0, or -1 with a message. */
typedef int (*perfetto_source)(const char *path, const struct export_opts *opts, FILE *out,
			       char *err, size_t errlen);

/* What source writes, as Perfetto's protobuf on out; timestamps are ns since the recording
 * start, as the Chrome trace's are. 0, or -1 with a message in err (a corrupt trace, or out of
 * memory). */
int export_perfetto(perfetto_source source, const char *path, const struct export_opts *opts,
		    FILE *out, char *err, size_t errlen);

#endif /* GPUSPY_EXPORT_PERFETTO_H */
