/* SPDX-License-Identifier: MIT */
/*
 * What the bench tools' main()s share (one tool per translation unit): a stop flag that
 * SIGINT/SIGTERM set, libbpf's own log only with -v, and messages on stderr prefixed with the
 * tool's name, which the bench scripts wait for ("TOOL: attached ...").
 */
#ifndef GPUSPY_BENCH_TOOL_H
#define GPUSPY_BENCH_TOOL_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <bpf/libbpf.h>

static bool verbose;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return verbose ? vfprintf(stderr, fmt, ap) : 0;
}

/* BENCH_TOOL_NAME: the tool's name, defined before this header is included */
static void error(const char *fmt, ...)
{
	va_list ap;

	fputs(BENCH_TOOL_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#endif /* GPUSPY_BENCH_TOOL_H */
