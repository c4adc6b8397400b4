/* SPDX-License-Identifier: MIT */
/*
 * Chrome Trace Event JSON (Perfetto UI, chrome://tracing): streamed record by record, so
 * memory does not grow with the trace. Spans are written as they are read; process and
 * thread names, known only once all records are seen, are appended as metadata at the end
 * (the format does not care about order).
 */
#ifndef GPUSPY_EXPORT_CHROME_H
#define GPUSPY_EXPORT_CHROME_H

#include <stdio.h>

/* 0, or -1 with a message in err (a corrupt trace); names come from a second pass. */
int export_chrome(const char *path, FILE *out, char *err, size_t errlen);

#endif /* GPUSPY_EXPORT_CHROME_H */
