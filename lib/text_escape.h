/* SPDX-License-Identifier: MIT */
/*
 * Text that comes from traced processes (thread and process names, command lines, paths) on
 * its way to a reader. Any local user can name a process with prctl(PR_SET_NAME), and the
 * kernel cuts a name at 15 bytes, often inside a UTF-8 character: such a name must neither
 * send escape sequences to the terminal of whoever reads a report, nor make an exposition
 * that Prometheus rejects whole. The rule, the same for every output (README, "Names from
 * traced processes"): a byte that is not part of valid UTF-8, or that belongs to a control
 * character (C0, DEL, C1), is shown as the four characters \xNN (lowercase hex); everything
 * else, non-ASCII text included, is shown as it is. JSON, which has its own escapes, writes
 * control characters as \u00NN and only invalid bytes as \xNN.
 */
#ifndef GPUSPY_TEXT_ESCAPE_H
#define GPUSPY_TEXT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Bytes of the character at `s` (*s != 0) when it is valid UTF-8 and printable: 1 to 4; 0
 * when the byte at `s` must be escaped. A control character is 1 (C0, DEL) or 2 (C1) bytes:
 * *ctrl_len, when not NULL, gets that length, or 0 for an invalid byte. */
size_t text_char_len(const char *s, size_t *ctrl_len);
/* `s` as the rule says. */
void text_print(FILE *out, const char *s);
/* strlen() of what text_print() writes. */
size_t text_printed_len(const char *s);

#endif /* GPUSPY_TEXT_ESCAPE_H */
