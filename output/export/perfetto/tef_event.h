/* SPDX-License-Identifier: MIT */
/*
 * One event object of a Chrome trace, as gpuspy's Chrome writer prints it, read back: the
 * Perfetto exporter converts that stream instead of keeping a second set of emitters, so both
 * formats carry the same events. Only the fields the Chrome writer uses are kept; args stay as
 * text, walked with tef_next_arg().
 */
#ifndef GPUSPY_TEF_EVENT_H
#define GPUSPY_TEF_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tef_event {
	char ph;
	const char *name, *cat; /* "" when absent */
	uint64_t pid, tid, id;
	uint64_t ts_ns, dur_ns; /* µs as written (three decimals) back in ns */
	bool has_dur, has_id;
	const char *args, *args_end; /* the args object's members' text; NULL: no args */
};

enum tef_arg_kind { TEF_ARG_INT, TEF_ARG_DOUBLE, TEF_ARG_STRING, TEF_ARG_BOOL, TEF_ARG_JSON };

struct tef_arg {
	const char *key;
	enum tef_arg_kind kind;
	int64_t i;
	double d;
	const char *s; /* string value, or the JSON text of an array or object */
	bool b;
};

/* Parses the object in text[0..len) in place (strings are unescaped into it): 0, or -1 when
 * it is not an object. The event's strings point into text. */
int tef_parse(char *text, size_t len, struct tef_event *e);
/* The next member of args (*pos starts at e->args): 1, 0 at the end, -1 when malformed. The
 * arg's strings point into the event's text, which is changed as it is read. */
int tef_next_arg(const struct tef_event *e, char **pos, struct tef_arg *a);

#endif /* GPUSPY_TEF_EVENT_H */
