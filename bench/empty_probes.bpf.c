// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Benchmark floors: programs that do nothing, attached where gpuspy attaches its own. What a
 * run costs with these attached is the price of the hook itself (uprobe trap or emulation,
 * return trampoline, tracepoint dispatch through the BPF trampoline); gpuspy's own overhead is
 * reported as a ratio to it (bench/run.sh's table). bench/empty_probes.c picks the programs of
 * one mode and leaves the others unloaded.
 *
 * With `read_clock` set (empty_probes --clock) each program reads the clock once and stores
 * it: the least any tracer that times each call pays on top of the hook (a duration needs a
 * clock read at both ends). Unset, the verifier removes the read as dead code.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile bool read_clock = false;

/* One cache line per CPU, so two CPUs storing their reads never share one. */
#define SINK_STRIDE 8
__u64 clock_sink[64 * SINK_STRIDE];

static __always_inline int hook(void)
{
	if (read_clock)
		clock_sink[(bpf_get_smp_processor_id() & 63) * SINK_STRIDE] = bpf_ktime_get_ns();
	return 0;
}

/* CUDA API functions: an entry and a return uprobe (uprobe_multi links) */
SEC("uprobe")
int empty_entry(void *ctx)
{
	return hook();
}

SEC("uretprobe")
int empty_return(void *ctx)
{
	return hook();
}

/* PyTorch operators: one uprobe session program, run at entry and (entry returned 0) at return,
 * as gpuspy's op_call; "uprobe" because libbpf 1.1 has no "uprobe.session" */
SEC("uprobe")
int empty_session(void *ctx)
{
	return hook();
}

/* syscalls: gpuspy's osrt hooks */
SEC("tp_btf/sys_enter")
int empty_sys_enter(void *ctx)
{
	return hook();
}

SEC("tp_btf/sys_exit")
int empty_sys_exit(void *ctx)
{
	return hook();
}

/* context switches: gpuspy's sched hook */
SEC("tp_btf/sched_switch")
int empty_sched_switch(void *ctx)
{
	return hook();
}
