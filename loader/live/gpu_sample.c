// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include "lib/value_parse.h"
#include "loader/live/gpu_sample.h"

int gpu_sample_parse(const char *arg, struct gpu_sample *s)
{
	const char *slash = strchr(arg, '/');
	char on[32];

	memset(s, 0, sizeof(*s));
	snprintf(s->label, sizeof(s->label), "%s", arg);
	if (!strcmp(arg, "always"))
		return 0;
	if (!strcmp(arg, "off")) {
		s->mode = GPU_SAMPLE_OFF;
		return 0;
	}
	if (!slash || (size_t)(slash - arg) >= sizeof(on) || strlen(arg) >= sizeof(s->label))
		return -1;
	memcpy(on, arg, (size_t)(slash - arg));
	on[slash - arg] = '\0';
	if (gs_parse_duration_ns(on, &s->on_ns) || gs_parse_duration_ns(slash + 1, &s->period_ns) ||
	    !s->on_ns || s->on_ns > s->period_ns)
		return -1;
	if (s->on_ns == s->period_ns) /* a window that never closes */
		return gpu_sample_parse("always", s);
	s->mode = GPU_SAMPLE_DUTY;
	return 0;
}

int gpu_sample_fit(struct gpu_sample *s, uint64_t interval_ns)
{
	if (s->mode != GPU_SAMPLE_DUTY)
		return 0;
	/* the bridge is switched at refreshes: a window that is not a whole number of them
	 * would be measured as one that is, and the estimate scaled wrong */
	if (!interval_ns || s->on_ns % interval_ns || s->period_ns % interval_ns)
		return -1;
	s->interval_ns = interval_ns;
	s->on_ticks = s->on_ns / interval_ns;
	s->period_ticks = s->period_ns / interval_ns;
	return 0;
}

bool gpu_sample_is_sampled(const struct gpu_sample *s)
{
	return s->mode == GPU_SAMPLE_DUTY;
}

double gpu_sample_scale(const struct gpu_sample *s)
{
	return gpu_sample_is_sampled(s) ? (double)s->period_ticks / (double)s->on_ticks : 1.0;
}

/* Refresh 0 (the baseline) opens the first window: intervals 1..ON are windows, then ON+1
 * .. PERIOD are not, and refresh PERIOD opens the next one. */
bool gpu_sample_step(struct gpu_sample *s, bool *new_cycle)
{
	uint64_t at;

	*new_cycle = false;
	if (!gpu_sample_is_sampled(s))
		return s->mode == GPU_SAMPLE_ALWAYS;
	at = s->ticks % s->period_ticks;
	if (s->ticks && !at) {
		s->cycles++;
		*new_cycle = true;
	}
	s->ticks++;
	return at < s->on_ticks;
}

uint64_t gpu_sample_window_ns(const struct gpu_sample *s)
{
	uint64_t done;

	if (!gpu_sample_is_sampled(s))
		return 0;
	if (s->cycles)
		return s->on_ticks * s->interval_ns;
	done = s->ticks ? (s->ticks - 1) % s->period_ticks : 0;
	return (done < s->on_ticks ? done : s->on_ticks) * s->interval_ns;
}

/* A group's sums drop when a process moves to another cgroup: such a period counts 0. */
static uint64_t since(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : 0;
}

void gpu_sample_roll(struct gpu_sample_cycle *cy, uint64_t kernels, uint64_t busy_ns)
{
	cy->last_kernels = since(kernels, cy->start_kernels);
	cy->last_busy_ns = since(busy_ns, cy->start_busy_ns);
	cy->start_kernels = kernels;
	cy->start_busy_ns = busy_ns;
}

bool gpu_sample_estimate(const struct gpu_sample *s, const struct gpu_sample_cycle *cy,
			 uint64_t kernels, uint64_t busy_ns, double *busy_share,
			 double *kernels_per_s)
{
	uint64_t window = gpu_sample_window_ns(s);
	bool done = s->cycles > 0;
	uint64_t busy = done ? cy->last_busy_ns : since(busy_ns, cy->start_busy_ns);
	uint64_t seen = done ? cy->last_kernels : since(kernels, cy->start_kernels);

	if (!gpu_sample_is_sampled(s))
		return false;
	*busy_share = window ? (double)busy / (double)window : 0.0;
	*kernels_per_s = window ? (double)seen * 1e9 / (double)window : 0.0;
	return true;
}
