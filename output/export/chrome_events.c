// SPDX-License-Identifier: MIT
#include <inttypes.h>
#include "lib/json_writer.h"
#include "output/export/chrome_events.h"

void chrome_begin_event(struct chrome_ctx *c)
{
	fputs(c->first ? "\n" : ",\n", c->out);
	c->first = false;
}

/* Microseconds with ns precision. */
void chrome_print_us(FILE *out, const char *key, uint64_t ns)
{
	fprintf(out, "\"%s\": %" PRIu64 ".%03" PRIu64, key, ns / 1000, ns % 1000);
}

uint64_t chrome_rel(const struct chrome_ctx *c, uint64_t ts)
{
	return ts > c->start_ts ? ts - c->start_ts : 0;
}

void chrome_metadata(struct chrome_ctx *c, const char *what, uint64_t pid, uint64_t tid,
		     const char *name)
{
	chrome_begin_event(c);
	fprintf(c->out,
		"{\"ph\": \"M\", \"name\": \"%s\", \"pid\": %" PRIu64 ", \"tid\": %" PRIu64
		", \"ts\": 0, ",
		what, pid, tid);
	/* HTA wants these on every event; it drops metadata by its category */
	if (c->kineto)
		fputs("\"dur\": 0, \"cat\": \"__metadata\", ", c->out);
	fputs("\"args\": {\"name\": ", c->out);
	json_print_string(c->out, name);
	fputs("}}", c->out);
}
