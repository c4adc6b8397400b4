// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * CPU samples of Python processes: a software cpu-clock perf event per CPU at --sample-hz runs
 * this program on whatever task that CPU is running; for a traced thread of a process whose
 * interpreter the loader checked, it records the thread's Python stack as a GS_PY_SAMPLE
 * (ts: now, end_ts: now + the period the sample stands for).
 */
#include "common.bpf.h"
#include "py_stack.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u64 sample_period_ns = 0;

SEC("perf_event")
int py_sample(struct bpf_perf_event_data *ctx)
{
	__u64 now;

	if (!current_is_traced())
		return 0;
	now = bpf_ktime_get_ns();
	py_stack_emit(GS_PY_SAMPLE, now, now + sample_period_ns);
	return 0;
}
