// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <unistd.h>
#include "loader/record/status_line.h"

void status_line_init(struct status_line *s, uint64_t now_ns)
{
	s->tty = isatty(STDERR_FILENO);
	s->printed = false;
	s->start_ns = s->last_ns = now_ns;
	s->last_events = 0;
}

void status_line_tick(struct status_line *s, uint64_t now_ns, uint64_t events, uint64_t bytes,
		      uint64_t lost, const char *note)
{
	double secs = (double)(now_ns - s->last_ns) / 1e9;

	if (secs < 1.0)
		return;
	/* a tty gets one line rewritten in place; a log file gets one line per second */
	fprintf(stderr,
		"%sgpuspy: recording %.0fs  %.0f events/s  %.1f MiB written  %llu lost%s%s%s",
		s->tty ? "\r\033[K" : "", (double)(now_ns - s->start_ns) / 1e9,
		(double)(events - s->last_events) / secs, (double)bytes / (1 << 20),
		(unsigned long long)lost, note ? "  " : "", note ? note : "", s->tty ? "" : "\n");
	fflush(stderr);
	s->printed = true;
	s->last_ns = now_ns;
	s->last_events = events;
}

void status_line_end(struct status_line *s)
{
	if (s->tty && s->printed)
		fputc('\n', stderr);
}
