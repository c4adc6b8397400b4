/* SPDX-License-Identifier: MIT */
/* JSON text for the writers that stream it (the report tables, the timeline exporters): a
 * string value, escaped by the rule of text_escape.h, so names from traced processes keep the
 * output valid JSON. Knows nothing of traces. */
#ifndef GPUSPY_JSON_WRITER_H
#define GPUSPY_JSON_WRITER_H

#include <stdio.h>

/* `s` as a JSON string, quotes included. */
void json_print_string(FILE *out, const char *s);

#endif /* GPUSPY_JSON_WRITER_H */
