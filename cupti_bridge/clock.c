// SPDX-License-Identifier: MIT
/*
 * CUPTI's clock -> CLOCK_MONOTONIC. CUPTI's timestamps are on a clock of its own (a GPU
 * global timer, or a host clock CUPTI chose), not on the CLOCK_MONOTONIC that BPF stamps
 * with; cuptiActivityRegisterTimestampCallback would make CUPTI use ours, but CUPTI 12.6u2 to
 * 13.0 produce zero kernel timestamps with it registered. So the offset is measured: of many
 * (monotonic, cuptiGetTimestamp, monotonic) triples the one with the tightest window is kept,
 * its midpoint taken as the moment CUPTI read its clock, and half the window is the error.
 * Re-measured every second while recording, to follow drift; each measurement is written as
 * a GS_REC_GPU_CLOCK record so a reader can check or redo the conversion.
 */
#include <cupti.h>

#include "bridge.h"

#define CLOCK_SAMPLES 64

static _Atomic int64_t g_offset;

int clock_calibrate(void)
{
	uint64_t best_win = UINT64_MAX, best_mid = 0, best_cupti = 0;
	struct gs_gpu_clock *c;
	union bridge_rec r;

	for (int i = 0; i < CLOCK_SAMPLES; i++) {
		uint64_t before, after, cupti = 0;
		CUptiResult res;

		before = bridge_now_ns();
		res = cuptiGetTimestamp(&cupti);
		after = bridge_now_ns();
		if (res != CUPTI_SUCCESS)
			return (int)res;
		if (after - before < best_win) {
			best_win = after - before;
			best_mid = before + best_win / 2;
			best_cupti = cupti;
		}
	}
	g_offset = (int64_t)(best_mid - best_cupti);
	c = (struct gs_gpu_clock *)&r;
	c->offset_ns = (int64_t)(best_mid - best_cupti);
	c->error_ns = (best_win + 1) / 2;
	c->samples = CLOCK_SAMPLES;
	c->pad = 0;
	bridge_rec_finish(&r, GS_REC_GPU_CLOCK, sizeof(*c), bridge_gettid(), best_mid, NULL);
	batch_add(&r.hdr);
	return 0;
}

uint64_t clock_to_mono(uint64_t cupti_ts)
{
	return cupti_ts + (uint64_t)g_offset;
}
