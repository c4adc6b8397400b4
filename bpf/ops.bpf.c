// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * PyTorch operator calls: entry and return uprobes (uprobe_multi) on at::_ops::<op>::call.
 * PLACEHOLDER.
 */
#include "common.bpf.h"
#include "py_stack.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("uprobe")
int op_entry(struct pt_regs *ctx)
{
	(void)ctx;
	return 0;
}

SEC("uretprobe")
int op_return(struct pt_regs *ctx)
{
	(void)ctx;
	return 0;
}
