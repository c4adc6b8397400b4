/* SPDX-License-Identifier: MIT */
/* The once-a-second progress line on stderr while recording. */
#ifndef GPUSPY_STATUS_LINE_H
#define GPUSPY_STATUS_LINE_H

#include <stdbool.h>
#include <stdint.h>

struct status_line {
	bool tty;
	bool printed;
	uint64_t start_ns;
	uint64_t last_ns;
	uint64_t last_events;
};

void status_line_init(struct status_line *s, uint64_t now_ns);
/* Prints when a second has passed since the last line; `note` (NULL: none) ends it. */
void status_line_tick(struct status_line *s, uint64_t now_ns, uint64_t events, uint64_t bytes,
		      uint64_t lost, const char *note);
/* Ends a tty line so later messages start on a clean line. */
void status_line_end(struct status_line *s);

#endif /* GPUSPY_STATUS_LINE_H */
