// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What one Python stack costs where gpuspy captures it, against an empty program on the same
 * hook (bench/py_stack_cost.c attaches one pair, for one process):
 *  - entry uprobes on libc's getppid: empty_probe is the floor, the uprobe mechanism itself;
 *  - the sys_enter tracepoint, getppid of the target only (where gpuspy hooks syscalls):
 *    empty_sys filters, stack_sys filters the same way and then walks.
 * The stack programs walk and emit the thread's Python stack with gpuspy's own walker
 * (bpf/py_stack.bpf.h), as gpuspy does over a syscall span.
 */
#include "common.bpf.h"
#include "py_stack.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("uprobe")
int empty_probe(struct pt_regs *ctx)
{
	return 0;
}

SEC("uprobe")
int stack_probe(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();

	py_stack_emit(GS_PY_AT_SYSCALL, now, now);
	return 0;
}

const volatile __u32 target_tgid = 0;
__u64 sys_hits; /* both tracepoint programs count their hits: the same filter and work */

static __always_inline bool is_target_getppid(struct pt_regs *regs, long id)
{
	return id == 110 /* __NR_getppid, x86_64 */ &&
	       bpf_get_current_pid_tgid() >> 32 == target_tgid;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(empty_sys, struct pt_regs *regs, long id)
{
	if (!is_target_getppid(regs, id))
		return 0;
	sys_hits++;
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(stack_sys, struct pt_regs *regs, long id)
{
	__u64 now;

	if (!is_target_getppid(regs, id))
		return 0;
	sys_hits++;
	now = bpf_ktime_get_ns();
	py_stack_emit(GS_PY_AT_SYSCALL, now, now);
	return 0;
}
