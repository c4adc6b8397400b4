// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The benchmark floor for CUDA API tracing: programs that do nothing, attached as an entry
 * uprobe and a return uprobe to the same functions gpuspy probes. What a run costs with these
 * attached is the price of the uprobe mechanism itself (trap or emulation, return trampoline,
 * BPF dispatch); gpuspy's own overhead is reported as a ratio to it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

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
