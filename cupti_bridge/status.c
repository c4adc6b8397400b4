// SPDX-License-Identifier: MIT
/*
 * GS_REC_BRIDGE_STATUS records. Each carries the cumulative loss counters, so the last
 * status gpuspy received (the flush's, at the latest) tells it everything that went missing:
 * records CUPTI dropped (no buffer space) and records the bridge itself could not keep.
 */
#include <stdarg.h>
#include <stdio.h>

#include "bridge.h"

static _Atomic uint64_t g_dropped, g_lost;

void status_add_dropped(uint64_t n)
{
	g_dropped += n;
}

void status_add_lost(uint64_t n)
{
	g_lost += n;
}

static void fill(union bridge_rec *r, uint32_t state, int cupti_result, const char *fmt, va_list ap)
{
	struct gs_bridge_status *st = (struct gs_bridge_status *)r;
	char msg[256];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	st->state = state;
	st->cupti_result = cupti_result;
	st->dropped = g_dropped;
	st->lost = g_lost;
	bridge_rec_finish(r, GS_REC_BRIDGE_STATUS, sizeof(*st), bridge_gettid(), bridge_now_ns(),
			  msg);
}

void status_make(union bridge_rec *r, uint32_t state, int cupti_result, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fill(r, state, cupti_result, fmt, ap);
	va_end(ap);
}

void status_emit(uint32_t state, int cupti_result, const char *fmt, ...)
{
	union bridge_rec r;
	va_list ap;

	va_start(ap, fmt);
	fill(&r, state, cupti_result, fmt, ap);
	va_end(ap);
	batch_add(&r.hdr);
}
