/* SPDX-License-Identifier: MIT */
/*
 * Chrome Trace Event JSON (Perfetto UI, chrome://tracing): streamed record by record, so
 * memory does not grow with the trace. Spans are written as they are read; process and
 * thread names, known only once all records are seen, are appended as metadata at the end
 * (the format does not care about order).
 */
#ifndef GPUSPY_EXPORT_CHROME_H
#define GPUSPY_EXPORT_CHROME_H

#include <stddef.h>
#include <stdio.h>

struct pid_filter;

struct export_opts {
	size_t python_depth;  /* Python frames kept per event's python_stack (leafmost); 0: none */
	const char *steps_by; /* how steps are marked (--steps-by); NULL: gpuspy finds them */
	/* the processes exported (kineto: one rank's), as if they were the whole trace; NULL: all
	 */
	const struct pid_filter *pids;
};

#define EXPORT_PYTHON_DEPTH 32 /* the default: deep enough for a model's nested modules */

/* 0, or -1 with a message in err (a corrupt trace); names come from a second pass. */
int export_chrome(const char *path, const struct export_opts *opts, FILE *out, char *err,
		  size_t errlen);

#endif /* GPUSPY_EXPORT_CHROME_H */
