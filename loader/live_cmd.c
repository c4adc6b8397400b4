// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "exit_codes.h"
#include "live_cmd.h"
#include "live_model.h"
#include "messages.h"
#include "recorder.h"
#include "trace_writer.h"
#include "value_parse.h"

void live_opts_defaults(struct live_opts *o, uint64_t interval_ns, uint64_t grace_ns)
{
	memset(o, 0, sizeof(*o));
	o->interval_ns = interval_ns;
	o->grace_ns = grace_ns;
	o->cupti = true;
	o->inject = true;
	o->ringbuf_bytes = 16u << 20;
}

static int bad_value(const char *opt, const char *value, const char *expected)
{
	gs_error("invalid value '%s' for %s: expected %s", value, opt, expected);
	return GS_EXIT_USAGE;
}

int live_opts_parse_one(int c, const char *arg, struct live_opts *o)
{
	uint64_t v;

	switch (c) {
	case 'p':
		free(o->pids);
		o->pids = NULL;
		if (gs_parse_pid_list(arg, &o->pids, &o->npids))
			return bad_value("--pid", arg, "a comma-separated list of process ids");
		return -1;
	case 'd':
		if (gs_parse_duration_ns(arg, &o->duration_ns) || !o->duration_ns)
			return bad_value("--duration", arg, "a duration such as 10s, 500ms or 2m");
		return -1;
	case 'v':
		gs_verbose = true;
		return -1;
	case LIVE_OPT_INTERVAL:
		if (gs_parse_duration_ns(arg, &o->interval_ns) || o->interval_ns < 100000000ULL ||
		    o->interval_ns > 3600000000000ULL)
			return bad_value("--interval", arg, "a duration from 100ms to 1h");
		return -1;
	case LIVE_OPT_GRACE:
		if (gs_parse_duration_ns(arg, &o->grace_ns) || o->grace_ns > 86400000000000ULL)
			return bad_value("--grace", arg, "a duration such as 60s or 5m");
		return -1;
	case LIVE_OPT_NO_CUPTI:
		o->cupti = false;
		return -1;
	case LIVE_OPT_NO_INJECT:
		o->inject = false;
		return -1;
	case LIVE_OPT_BUFFER_SIZE:
		if (gs_parse_u64(arg, 1, 1024, &v) || (v & (v - 1)))
			return bad_value("--buffer-size", arg,
					 "a power of two from 1 to 1024 (MiB)");
		o->ringbuf_bytes = (uint32_t)(v << 20);
		return -1;
	default:
		return -2;
	}
}

int live_opts_check(const struct live_opts *o)
{
	return recorder_check_environment(o->pids, o->npids, "watch");
}

void live_opts_free(struct live_opts *o)
{
	free(o->pids);
	o->pids = NULL;
}

int live_recorder_init(struct recorder *r, struct live_opts *o, struct live_model *lm)
{
	struct record_opts *ro = &r->opts;

	memset(ro, 0, sizeof(*ro));
	ro->output = "(live view)";
	ro->quiet = !gs_verbose; /* the view is the output: no status line, no summary */
	ro->trace_all = !o->npids;
	ro->follow = true;
	ro->cuda = true;
	ro->cupti = o->cupti;
	ro->inject = o->inject;
	/* counts and totals only: statistics are exact without spans, which would cost a ring
	 * buffer record each */
	ro->osrt_threshold_ns = UINT64_MAX;
	ro->offcpu_threshold_ns = UINT64_MAX;
	ro->stats_interval_ns = o->interval_ns;
	ro->duration_ns = o->duration_ns;
	ro->ringbuf_bytes = o->ringbuf_bytes;
	ro->max_stat_keys = 16384;
	/* the recorder owns the pids from here (recorder_cleanup frees them) */
	ro->pids = o->pids;
	ro->npids = o->npids;
	o->pids = NULL;
	if (trace_writer_open_sink(live_model_take, lm, &r->writer)) {
		gs_error("cannot set up the live view: out of memory");
		return GS_EXIT_FAILURE;
	}
	return 0;
}
