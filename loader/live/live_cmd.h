/* SPDX-License-Identifier: MIT */
/*
 * What `gpuspy top` and `gpuspy serve` share: their common options, and a recording set up
 * to feed a live_model instead of a file (system-wide unless -p; statistics checkpointed each
 * interval; no span records, since only counts and totals are shown).
 */
#ifndef GPUSPY_LIVE_CMD_H
#define GPUSPY_LIVE_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct live_model;
struct recorder;

struct live_opts {
	pid_t *pids; /* -p; none: the whole host */
	size_t npids;
	uint64_t duration_ns; /* -d; 0: until a signal */
	uint64_t interval_ns; /* --interval */
	uint64_t grace_ns;    /* how long an exited process stays */
	bool cupti, inject;
	uint32_t ringbuf_bytes;
};

/* getopt codes of the shared long options (beyond single letters -p, -d, -v) */
enum {
	LIVE_OPT_INTERVAL = 300,
	LIVE_OPT_NO_CUPTI,
	LIVE_OPT_NO_INJECT,
	LIVE_OPT_BUFFER_SIZE,
	LIVE_OPT_GRACE,
	LIVE_OPT_FIRST_OWN, /* the commands' own options start here */
};

void live_opts_defaults(struct live_opts *o, uint64_t interval_ns, uint64_t grace_ns);
/* A shared option: -1 when taken, GS_EXIT_USAGE on a bad value, -2 when not a shared one. */
int live_opts_parse_one(int c, const char *arg, struct live_opts *o);
/* -p pids that exist and are processes: 0, or an exit code (message printed). */
int live_opts_check(const struct live_opts *o);
void live_opts_free(struct live_opts *o);
/* The recorder for a live view: records go to `lm`; the caller sets r->on_tick and runs
 * recorder_run_live(). Takes the -p pids over (o->pids is NULL after). 0 or an exit code. */
int live_recorder_init(struct recorder *r, struct live_opts *o, struct live_model *lm);

#endif /* GPUSPY_LIVE_CMD_H */
