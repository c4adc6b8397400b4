// SPDX-License-Identifier: MIT
#include <stdbool.h>
#include "lib/text_escape.h"

static bool cont(unsigned char c)
{
	return c >= 0x80 && c <= 0xbf;
}

/* Length of the valid UTF-8 sequence at `p`, or 0 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF: what Prometheus's and JSON parsers accept). */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return cont(p[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return p[1] >= lo && p[1] <= hi && cont(p[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return p[1] >= lo && p[1] <= hi && cont(p[2]) && cont(p[3]) ? 4 : 0;
	}
	return 0;
}

size_t text_char_len(const char *s, size_t *ctrl_len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = utf8_len(p);
	/* C0 and DEL; C1 (U+0080..U+009F) is 0xc2 0x80..0x9f, which some terminals obey too */
	bool ctrl =
	    (n == 1 && (p[0] < 0x20 || p[0] == 0x7f)) || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0);

	if (ctrl_len)
		*ctrl_len = ctrl ? n : 0;
	return ctrl ? 0 : n;
}

void text_print(FILE *out, const char *s)
{
	while (*s) {
		size_t n = text_char_len(s, NULL);

		if (n) {
			fwrite(s, 1, n, out);
			s += n;
		} else {
			fprintf(out, "\\x%02x", (unsigned char)*s++);
		}
	}
}

size_t text_printed_len(const char *s)
{
	size_t len = 0;

	while (*s) {
		size_t n = text_char_len(s, NULL);

		len += n ? n : 4;
		s += n ? n : 1;
	}
	return len;
}
