// SPDX-License-Identifier: MIT
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
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

/* HTA rounds an event's start up and its end down to whole µs, and drops what it then finds
 * empty or negative: a Kineto span never has dur 0, as CUPTI's records never do, so one the
 * clock saw as instantaneous (a ns-resolution stamp pair) is written as the 1 ns it took at
 * least. The Chrome dialect writes what was measured. */
void chrome_print_dur(const struct chrome_ctx *c, uint64_t ns)
{
	chrome_print_us(c->out, "dur", c->kineto && !ns ? 1 : ns);
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
	/* HTA drops metadata by its category; Kineto writes no dur on it, which HTA would round
	 * to -1 */
	if (c->kineto)
		fputs("\"cat\": \"__metadata\", ", c->out);
	fputs("\"args\": {\"name\": ", c->out);
	json_print_string(c->out, name);
	fputs("}}", c->out);
}

/* HTA and TensorBoard find launches by name: exactly cudaLaunchKernel, cudaLaunchKernelExC,
 * cuLaunchKernel or cuLaunchKernelEx, CUPTI's API names, and for HTA's kernel launch category
 * any name matching "cuda.*LaunchKernel|cuLaunchKernel" at its start. nvcc 13's <<<>>>
 * stub symbol __cudaLaunchKernel is CUPTI's cudaLaunchKernel. A launch nested in another call
 * (the driver's cuLaunchKernel under cudaLaunchKernel) is not the launch of its GPU work, whose
 * correlation the outer call carries; under a launch name, HTA would take it for one with no
 * kernel. It keeps its span (the runtime call's time breakdown) under a name no pattern
 * matches. */
const char *chrome_kineto_api_name(const char *fn, bool nested, char *buf, size_t len)
{
	bool launch = !strncmp(fn, "cuLaunchKernel", 14) ||
		      (!strncmp(fn, "cuda", 4) && strstr(fn, "LaunchKernel"));

	if (!strncmp(fn, "__cudaLaunchKernel", 18))
		return fn + 2;
	if (!nested || !launch)
		return fn;
	snprintf(buf, len, "nested %s", fn);
	return buf;
}
