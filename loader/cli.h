/* SPDX-License-Identifier: MIT */
/* Command-line conventions shared by every subcommand: messages, exit codes, value parsing. */
#ifndef GPUSPY_CLI_H
#define GPUSPY_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Documented in README ("Exit codes"). A launched command's own status passes through. */
enum gs_exit_code {
	GS_EXIT_OK = 0,
	GS_EXIT_FAILURE = 1,	 /* a runtime failure: attach, write, ... */
	GS_EXIT_USAGE = 2,	 /* bad option or option value */
	GS_EXIT_BAD_TRACE = 3,	 /* unreadable, corrupt or foreign trace file */
	GS_EXIT_PERMISSION = 4,	 /* not root and no CAP_BPF + CAP_PERFMON */
	GS_EXIT_UNSUPPORTED = 5, /* kernel lacks BTF or a needed BPF feature */
	GS_EXIT_NO_TARGET = 6,	 /* a -p pid does not exist */
	GS_EXIT_EXEC_FAILED = 127,
};

extern bool gs_verbose;

/* "gpuspy: <message>" on stderr; `fmt` is lowercase with no trailing period. */
void gs_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gs_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* getopt_long()'s '?' or ':' (with opterr = 0 and ':' leading the option string) as one line,
 * "gpuspy: unknown option '--frob' (see 'gpuspy CMD --help')"; returns GS_EXIT_USAGE. */
int gs_option_error(const char *cmd, int c, char *const argv[]);

/* 0 on success, -1 when `s` is not a number in [min, max] (nothing printed). */
int gs_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* "10s", "500ms", "2m", "1h", "250us", "100ns"; a bare number means seconds. */
int gs_parse_duration_ns(const char *s, uint64_t *out);
/* "1234,5678": a newly allocated array of pids. */
int gs_parse_pid_list(const char *s, pid_t **pids, size_t *npids);

uint64_t gs_monotonic_ns(void);
uint64_t gs_realtime_ns(void);

#endif /* GPUSPY_CLI_H */
