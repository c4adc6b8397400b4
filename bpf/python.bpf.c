// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * CPU samples of Python processes: a perf_event program per CPU at --sample-hz.
 * PLACEHOLDER.
 */
#include "common.bpf.h"
#include "py_stack.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u64 sample_period_ns = 0;

SEC("perf_event")
int py_sample(struct bpf_perf_event_data *ctx)
{
	(void)ctx;
	return 0;
}
