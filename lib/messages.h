/* SPDX-License-Identifier: MIT */
/* gpuspy's messages on stderr, one line each: errors, warnings, and debug lines under -v. */
#ifndef GPUSPY_MESSAGES_H
#define GPUSPY_MESSAGES_H

#include <stdbool.h>

extern bool gs_verbose;

/* "gpuspy: <message>" on stderr; `fmt` is lowercase with no trailing period. */
void gs_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gs_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* getopt_long()'s '?' or ':' (with opterr = 0 and ':' leading the option string) as one line,
 * "gpuspy: unknown option '--frob' (see 'gpuspy CMD --help')"; returns GS_EXIT_USAGE. */
int gs_option_error(const char *cmd, int c, char *const argv[]);

/* "gpuspy: invalid value 'VALUE' for OPT: expected EXPECTED"; returns GS_EXIT_USAGE. */
int gs_bad_value(const char *opt, const char *value, const char *expected);

#endif /* GPUSPY_MESSAGES_H */
