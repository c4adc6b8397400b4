// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"

bool gs_verbose;

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "gpuspy: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void gs_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
}

void gs_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warning: ", fmt, ap);
	va_end(ap);
}

void gs_debug(const char *fmt, ...)
{
	va_list ap;

	if (!gs_verbose)
		return;
	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
}

int gs_option_error(const char *cmd, int c, char *const argv[])
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	char name[3] = {'-', (char)optopt, '\0'};

	/* a short option names itself (argv may hold a cluster such as -qZ); a long one is the
	 * argument getopt stepped over */
	if (optopt > 0 && optopt < 128 && strncmp(arg, "--", 2))
		arg = name;
	if (c == ':')
		gs_error("option '%s' needs a value (see 'gpuspy %s --help')", arg, cmd);
	else
		gs_error("unknown option '%s' (see 'gpuspy %s --help')", arg, cmd);
	return GS_EXIT_USAGE;
}

int gs_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int gs_parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {
	    {"ns", 1},
	    {"us", 1000},
	    {"ms", 1000000},
	    {"s", 1000000000ULL},
	    {"m", 60000000000ULL},
	    {"h", 3600000000000ULL},
	    {"", 1000000000ULL},
	};
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v > UINT64_MAX / units[i].ns)
			return -1;
		*out = v * units[i].ns;
		return 0;
	}
	return -1;
}

int gs_parse_pid_list(const char *s, pid_t **pids, size_t *npids)
{
	char *copy = strdup(s), *save = NULL, *tok;
	pid_t *list = NULL;
	size_t n = 0;
	uint64_t v;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		pid_t *grown;

		if (gs_parse_u64(tok, 1, 4194304, &v))
			goto fail;
		grown = realloc(list, (n + 1) * sizeof(*list));
		if (!grown)
			goto fail;
		list = grown;
		list[n++] = (pid_t)v;
	}
	if (!n)
		goto fail;
	free(copy);
	*pids = list;
	*npids = n;
	return 0;
fail:
	free(copy);
	free(list);
	return -1;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t gs_monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t gs_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}
