// SPDX-License-Identifier: MIT
#include <stdio.h>
#include "output/export/chrome_events.h"
#include "output/export/chrome_stream.h"
#include "output/export/export_chrome.h"
#include "output/model/trace_model.h"

int export_chrome(const char *path, const struct export_opts *opts, FILE *out, char *err,
		  size_t errlen)
{
	struct trace_model m;
	struct chrome_ctx c = {.out = out,
			       .first = true,
			       .python_depth = opts->python_depth,
			       .steps_by = opts->steps_by};
	int ret;

	/* pass 1: names, kernel names and the start time; pass 2: the spans, streamed */
	if (trace_model_load(path, &m, err, errlen))
		return -1;
	c.start_ts = m.start_ts;
	c.names = &m;
	fputs("{\"displayTimeUnit\": \"ms\", \"otherData\": {\"producer\": \"gpuspy\"}, "
	      "\"traceEvents\": [",
	      out);
	ret = chrome_write_events(&c, path, err, errlen);
	fputs("\n]}\n", out);
	trace_model_free(&m);
	return ret;
}
