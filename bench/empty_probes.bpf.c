// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Benchmark floors: programs that do nothing, attached where gpuspy attaches its own. What a
 * run costs with these attached is the price of the hook itself (uprobe trap or emulation,
 * return trampoline, tracepoint dispatch through the BPF trampoline); gpuspy's own overhead is
 * reported as a ratio to it (bench/run.sh's table). bench/empty_probes.c picks the programs of
 * one mode and leaves the others unloaded.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* CUDA API functions: an entry and a return uprobe (uprobe_multi links) */
SEC("uprobe")
int empty_entry(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int empty_return(void *ctx)
{
	return 0;
}

/* PyTorch operators: one uprobe session program, run at entry and (entry returned 0) at return,
 * as gpuspy's op_call; "uprobe" because libbpf 1.1 has no "uprobe.session" */
SEC("uprobe")
int empty_session(void *ctx)
{
	return 0;
}

/* syscalls: gpuspy's osrt hooks */
SEC("tp_btf/sys_enter")
int empty_sys_enter(void *ctx)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int empty_sys_exit(void *ctx)
{
	return 0;
}

/* context switches: gpuspy's sched hook */
SEC("tp_btf/sched_switch")
int empty_sched_switch(void *ctx)
{
	return 0;
}
