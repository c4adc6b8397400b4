/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus text exposition format, version 0.0.4, written into a growable buffer: what a
 * /metrics endpoint serves. Out of memory is sticky (`oom`), so a scrape is built with plain
 * calls and checked once at the end instead of after each line.
 */
#ifndef GPUSPY_PROM_TEXT_H
#define GPUSPY_PROM_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Zero-initialise. data[len] is '\0' whenever data is not NULL. */
struct prom_buf {
	char *data;
	size_t len, cap;
	bool oom; /* an allocation failed: the text is incomplete and later calls do nothing */
};

/* len = 0 and oom cleared for the next scrape; keeps the memory. */
void prom_buf_reset(struct prom_buf *b);
void prom_buf_free(struct prom_buf *b);

/*
 * "# HELP name help\n# TYPE name type\n"; type is "counter" or "gauge"; help escaped as label
 * values are, the double quote aside; no HELP line when help is NULL. Names are the caller's
 * constants and are not checked: see prom_valid_name().
 */
void prom_family(struct prom_buf *b, const char *name, const char *type, const char *help);

struct prom_label {
	const char *name, *value; /* value NULL: "" */
};

/*
 * name{l1="v1",...} value\n; label values escaped (\\, \", \n), other control characters and
 * invalid UTF-8 bytes as the text \xNN (so "\\xNN" in the exposition); NaN/Inf printed as
 * NaN/+Inf/-Inf; integral values below 2^63 in magnitude printed in full without exponent
 * (12345678901, not 1.2345678901e+10); other values with the fewest digits that read back
 * exactly. No timestamp.
 */
void prom_sample(struct prom_buf *b, const char *name, const struct prom_label *labels,
		 size_t nlabels, double value);

/* `l1="v1",...` as prom_sample writes them, appended to b: the labels of a series that has many
 * samples, escaped once rather than at each (serve's processes: pid, comm, container, user). */
void prom_labels_render(struct prom_buf *b, const struct prom_label *labels, size_t nlabels);
/* prom_sample's line with labels from prom_labels_render (`len` bytes, not NUL-terminated),
 * then `extra` (NULL: none); for a series with no labels at all, prom_sample. */
void prom_sample_rendered(struct prom_buf *b, const char *name, const char *rendered, size_t len,
			  const struct prom_label *extra, double value);

/* [a-zA-Z_:][a-zA-Z0-9_:]* */
bool prom_valid_name(const char *name);

#endif /* GPUSPY_PROM_TEXT_H */
