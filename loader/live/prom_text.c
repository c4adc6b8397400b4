// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/text_escape.h"
#include "loader/live/prom_text.h"

#define INITIAL_CAP 4096

/* Room for n more bytes and the NUL; false, with oom set, when there is none. */
static bool reserve(struct prom_buf *b, size_t n)
{
	size_t cap;
	char *grown;

	if (b->oom)
		return false;
	if (b->cap - b->len > n)
		return true;
	if (n > SIZE_MAX / 4 - b->len) {
		b->oom = true;
		return false;
	}
	for (cap = b->cap ? b->cap : INITIAL_CAP; cap - b->len <= n;)
		cap *= 2;
	grown = realloc(b->data, cap);
	if (!grown) {
		b->oom = true;
		return false;
	}
	b->data = grown;
	b->cap = cap;
	return true;
}

static void append(struct prom_buf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void append_str(struct prom_buf *b, const char *s)
{
	append(b, s, strlen(s));
}

/* The length of s's leading run of printable ASCII that needs no escape: the whole of almost
 * every label value and help text, copied in one piece (the exposition is rebuilt at every
 * interval, hundreds of kilobytes on a busy host). */
static size_t plain_run(const char *s, bool quoted)
{
	size_t n = 0;

	for (unsigned char c; (c = (unsigned char)s[n]); n++)
		if (c < 0x20 || c > 0x7e || c == '\\' || (quoted && c == '"'))
			break;
	return n;
}

/* HELP text escapes backslash and newline; label values also the double quote: the format's
 * three escapes. A control character other than newline and a byte of invalid UTF-8, which a
 * process name can hold (prctl, or the kernel's cut at 15 bytes) and which would make
 * Prometheus reject the whole scrape, become the text \xNN (text_escape.h), written with an
 * escaped backslash. Other UTF-8 goes out as it is. */
static void append_escaped(struct prom_buf *b, const char *s, bool quoted)
{
	char hex[8];

	while (*s) {
		size_t n = plain_run(s, quoted);
		const char *esc;

		append(b, s, n);
		s += n;
		if (!*s)
			break;
		n = text_char_len(s, NULL);
		esc = *s == '\\' ? "\\\\" : *s == '\n' ? "\\n" : NULL;
		if (quoted && *s == '"')
			esc = "\\\"";
		if (esc) {
			append_str(b, esc);
			s++;
		} else if (n) {
			append(b, s, n);
			s += n;
		} else {
			snprintf(hex, sizeof(hex), "\\\\x%02x", (unsigned char)*s++);
			append_str(b, hex);
		}
	}
}

/* What snprintf's "%lld" writes, without its format parsing: most samples are integers. */
static void format_integer(long long v, char *buf, size_t len)
{
	char digits[24];
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	size_t n = 0, i = 0;

	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0 && i + 1 < len)
		buf[i++] = '-';
	while (n && i + 1 < len)
		buf[i++] = digits[--n];
	buf[i] = '\0';
}

/*
 * Integers are spelled out in full: a counter read as text (curl, promtool, a test) must show
 * its last digits, and %g would write 12345678901 as 1.2345678901e+10. Below 2^63 an integral
 * double converts to long long exactly. Other values take the fewest of 15..17 significant
 * digits that read back as the same double. gpuspy never calls setlocale, so the decimal point
 * is '.', as Prometheus's parser (Go's strconv.ParseFloat) requires.
 */
static void format_value(double v, char *buf, size_t len)
{
	if (isnan(v)) {
		snprintf(buf, len, "NaN");
	} else if (isinf(v)) {
		snprintf(buf, len, "%s", v > 0 ? "+Inf" : "-Inf");
	} else if (v == trunc(v) && fabs(v) < 0x1p63) {
		format_integer((long long)v, buf, len);
	} else {
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, len, "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
}

void prom_buf_reset(struct prom_buf *b)
{
	b->len = 0;
	b->oom = false;
	if (b->data)
		b->data[0] = '\0';
}

void prom_buf_free(struct prom_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void prom_family(struct prom_buf *b, const char *name, const char *type, const char *help)
{
	if (help) {
		append_str(b, "# HELP ");
		append_str(b, name);
		append_str(b, " ");
		append_escaped(b, help, false);
		append_str(b, "\n");
	}
	append_str(b, "# TYPE ");
	append_str(b, name);
	append_str(b, " ");
	append_str(b, type);
	append_str(b, "\n");
}

static void append_labels(struct prom_buf *b, const struct prom_label *labels, size_t nlabels)
{
	for (size_t i = 0; i < nlabels; i++) {
		if (i)
			append_str(b, ",");
		append_str(b, labels[i].name);
		append_str(b, "=\"");
		append_escaped(b, labels[i].value ? labels[i].value : "", true);
		append_str(b, "\"");
	}
}

static void append_value(struct prom_buf *b, double value)
{
	char num[32];

	format_value(value, num, sizeof(num));
	append_str(b, " ");
	append_str(b, num);
	append_str(b, "\n");
}

void prom_sample(struct prom_buf *b, const char *name, const struct prom_label *labels,
		 size_t nlabels, double value)
{
	append_str(b, name);
	if (nlabels) {
		append_str(b, "{");
		append_labels(b, labels, nlabels);
		append_str(b, "}");
	}
	append_value(b, value);
}

void prom_labels_render(struct prom_buf *b, const struct prom_label *labels, size_t nlabels)
{
	append_labels(b, labels, nlabels);
}

void prom_sample_rendered(struct prom_buf *b, const char *name, const char *rendered, size_t len,
			  const struct prom_label *extra, double value)
{
	append_str(b, name);
	append_str(b, "{");
	append(b, rendered, len);
	if (extra) {
		append_str(b, len ? "," : "");
		append_labels(b, extra, 1);
	}
	append_str(b, "}");
	append_value(b, value);
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

bool prom_valid_name(const char *name)
{
	if (!name || !*name)
		return false;
	for (const char *p = name; *p; p++)
		if (!name_char(*p, p == name))
			return false;
	return true;
}
