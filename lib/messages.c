// SPDX-License-Identifier: MIT
/* gpuspy's messages on stderr (messages.h). */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "lib/exit_codes.h"
#include "lib/messages.h"

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

int gs_bad_value(const char *opt, const char *value, const char *expected)
{
	gs_error("invalid value '%s' for %s: expected %s", value, opt, expected);
	return GS_EXIT_USAGE;
}
