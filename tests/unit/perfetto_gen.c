// SPDX-License-Identifier: MIT
/*
 * Drives output/export/perfetto/ with a Chrome trace of its own instead of a recording, to
 * stdout (tests/export_perfetto.bats decodes it with protoc): N slices with N distinct names, so
 * that past PF_INTERN_MAX the interned strings are cleared and sent again; names and args with
 * JSON escapes, braces and brackets inside strings, and a JSON array as the last arg; a flow
 * from a slice on one thread to a "kernel" on a GPU stream; a counter; an async pair; and the
 * names at the end, as the Chrome writer puts them. Usage: perfetto_gen N
 */
#include <stdio.h>
#include <stdlib.h>
#include "output/export/perfetto/export_perfetto.h"

static unsigned long n_names;

static int source(const char *path, const struct export_opts *opts, FILE *out, char *err,
		  size_t errlen)
{
	(void)path, (void)opts, (void)err, (void)errlen;
	/* the header's braces and strings are not events */
	fputs("{\"displayTimeUnit\": \"ms\", \"otherData\": {\"producer\": \"x{[\\\"}\"}, "
	      "\"traceEvents\": [",
	      out);
	for (unsigned long i = 0; i < n_names; i++)
		fprintf(out,
			"%s\n{\"ph\": \"X\", \"cat\": \"gen\", \"name\": \"f%lu\", \"pid\": 10, "
			"\"tid\": 11, \"ts\": %lu.%03lu, \"dur\": 0.500, \"args\": {\"i\": %lu}}",
			i ? "," : "", i, i, i % 1000, i);
	fputs(",\n{\"ph\": \"X\", \"cat\": \"gen\", \"name\": \"q\\\"uote \\\\ {br} [x] \\u00e9\", "
	      "\"pid\": 10, \"tid\": 11, \"ts\": 0.000, \"dur\": 1000000.000, \"args\": {\"s\": "
	      "\"a}b\", \"d\": 1.5, \"b\": true, \"neg\": -3, \"stack\": [\"m\", \"n\"]}}",
	      out);
	fputs(
	    ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, "
	    "\"ts\": 5.000, \"dur\": 2.000, \"args\": {\"stream\": 7}}"
	    ",\n{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 42, \"pid\": 10, "
	    "\"tid\": 11, \"ts\": 1.000}"
	    ",\n{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 42, "
	    "\"pid\": 0, \"tid\": 7, \"ts\": 5.000}"
	    ",\n{\"ph\": \"C\", \"name\": \"GPU memory\", \"pid\": 10, \"tid\": 11, \"ts\": 6.000, "
	    "\"args\": {\"device\": 4096, \"pinned\": 0}}"
	    ",\n{\"ph\": \"b\", \"cat\": \"user_annotation\", \"name\": \"range\", \"id\": 1, "
	    "\"pid\": 10, \"tid\": 11, \"ts\": 2.000, \"args\": {\"range id\": 9}}"
	    ",\n{\"ph\": \"e\", \"cat\": \"user_annotation\", \"name\": \"range\", \"id\": 1, "
	    "\"pid\": 10, \"tid\": 11, \"ts\": 9.000}"
	    ",\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 10, \"tid\": 0, \"ts\": 0, "
	    "\"args\": {\"name\": \"gen (10)\"}}"
	    ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 10, \"tid\": 11, \"ts\": 0, "
	    "\"args\": {\"name\": \"gen (11)\"}}"
	    ",\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"tid\": 0, \"ts\": 0, "
	    "\"args\": {\"name\": \"GPU 0\"}}"
	    ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 0, \"tid\": 7, \"ts\": 0, "
	    "\"args\": {\"name\": \"stream 7\"}}"
	    "\n]}\n",
	    out);
	return 0;
}

int main(int argc, char **argv)
{
	char err[256], *end;

	if (argc != 2 || (n_names = strtoul(argv[1], &end, 10), *end)) {
		fprintf(stderr, "usage: perfetto_gen N\n");
		return 2;
	}
	if (export_perfetto(source, "-", NULL, stdout, err, sizeof(err))) {
		fprintf(stderr, "perfetto_gen: %s\n", err);
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}
