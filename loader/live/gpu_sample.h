/* SPDX-License-Identifier: MIT */
/*
 * `--gpu-sample ON/PERIOD` of the live views: the CUPTI bridges' kernel records are taken in
 * the first ON of every PERIOD only, since they cost per kernel (docs/LIVE.md). Windows begin
 * and end at the views' refreshes, so ON and PERIOD are whole numbers of --interval; GPU busy
 * time and kernel counts seen in the windows are scaled by PERIOD/ON into estimates, and the
 * views say so. Launches and API calls come from uprobes and stay exact.
 */
#ifndef GPUSPY_GPU_SAMPLE_H
#define GPUSPY_GPU_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

enum gpu_sample_mode {
	GPU_SAMPLE_ALWAYS, /* kernel records all the time: exact (the default) */
	GPU_SAMPLE_DUTY,   /* ON out of every PERIOD */
	GPU_SAMPLE_OFF,	   /* none: the bridges are not turned on (--no-cupti) */
};

struct gpu_sample {
	enum gpu_sample_mode mode;
	uint64_t on_ns, period_ns;	 /* as given */
	uint64_t on_ticks, period_ticks; /* in refreshes, once fitted to the interval */
	uint64_t interval_ns;		 /* a refresh's */
	uint64_t ticks;			 /* refreshes since the baseline one */
	uint64_t cycles;		 /* complete periods */
	char label[48];			 /* "1s/10s", or "always" */
};

/* Kernels and GPU busy time of one row (a process, a group) over the periods: its totals at
 * the start of the period under way, and what the last complete period's window saw. */
struct gpu_sample_cycle {
	uint64_t start_kernels, start_busy_ns;
	uint64_t last_kernels, last_busy_ns;
};

/* "always", "off" or "ON/PERIOD" (durations, 0 < ON <= PERIOD): 0, or -1 (nothing printed). */
int gpu_sample_parse(const char *arg, struct gpu_sample *s);
/* Windows in refreshes of `interval_ns`: 0, or -1 when ON or PERIOD is not a multiple of it. */
int gpu_sample_fit(struct gpu_sample *s, uint64_t interval_ns);
/* Whether the figures are estimates from windows (ON < PERIOD). */
bool gpu_sample_is_sampled(const struct gpu_sample *s);
/* PERIOD/ON: what the kernels and busy time seen are multiplied by; 1 unless sampled. */
double gpu_sample_scale(const struct gpu_sample *s);
/* At a refresh (the baseline one first): whether the interval that begins is a window, and in
 * *new_cycle whether a period just ended, so the last one's figures are complete. */
bool gpu_sample_step(struct gpu_sample *s, bool *new_cycle);
/* The window time in the period under way, up to the last refresh (ns; once a period is
 * complete, a whole window: what the last period's figures cover). */
uint64_t gpu_sample_window_ns(const struct gpu_sample *s);
/* A period ended: what the row's totals grew by in it becomes the last period's figures. */
void gpu_sample_roll(struct gpu_sample_cycle *cy, uint64_t kernels, uint64_t busy_ns);
/* GPU busy share (of one device-second per second) and kernels per second of a row with
 * totals `kernels` and `busy_ns`: what the last complete period's window saw (in the first
 * period, the window so far) over the window's length. False when not sampled (the interval's
 * rates apply). */
bool gpu_sample_estimate(const struct gpu_sample *s, const struct gpu_sample_cycle *cy,
			 uint64_t kernels, uint64_t busy_ns, double *busy_share,
			 double *kernels_per_s);

#endif /* GPUSPY_GPU_SAMPLE_H */
