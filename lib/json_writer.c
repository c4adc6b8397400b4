// SPDX-License-Identifier: MIT
#include <stddef.h>
#include "lib/json_writer.h"
#include "lib/text_escape.h"

/* Control characters as JSON's \u00NN; an invalid byte, which JSON (UTF-8 only) cannot hold,
 * as the text \xNN, so a cut name keeps the output valid for strict parsers. */
void json_print_string(FILE *out, const char *s)
{
	fputc('"', out);
	while (*s) {
		const unsigned char *p = (const unsigned char *)s;
		size_t ctrl, n = text_char_len(s, &ctrl);

		if (*p == '"' || *p == '\\') {
			fprintf(out, "\\%c", *p);
			s++;
		} else if (n) {
			fwrite(s, 1, n, out);
			s += n;
		} else if (ctrl) {
			fprintf(out, "\\u%04x", ctrl == 1 ? p[0] : p[1]);
			s += ctrl;
		} else {
			fprintf(out, "\\\\x%02x", *p);
			s++;
		}
	}
	fputc('"', out);
}
