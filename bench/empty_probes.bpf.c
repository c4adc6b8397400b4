// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Benchmark floors: programs that do nothing, attached where gpuspy attaches its own. What a
 * run costs with these attached is the price of the hook itself (uprobe trap or emulation,
 * return trampoline, tracepoint dispatch through the BPF trampoline); gpuspy's own overhead is
 * reported as a ratio to it (bench/run.sh's table). bench/empty_probes.c picks the programs of
 * one mode and leaves the others unloaded.
 *
 * The timer_* programs, on the same hooks (empty_probes --timer), do the least an exact
 * per-call timer must: read the clock at both ends, keep the start in the thread's own storage
 * (a call may block and resume on another CPU) and add the duration to a per-thread total.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

extern bool bpf_session_is_return(void) __ksym __weak;

struct thread_timer {
	__u64 start_ns; /* 0: no call open */
	__u64 total_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_timer);
} timers SEC(".maps");

static __always_inline void timer_start(struct task_struct *task, __u64 now)
{
	struct thread_timer *t =
	    bpf_task_storage_get(&timers, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (t)
		t->start_ns = now;
}

static __always_inline void timer_stop(struct task_struct *task, __u64 now)
{
	struct thread_timer *t = bpf_task_storage_get(&timers, task, 0, 0);

	if (t && t->start_ns) {
		t->total_ns += now - t->start_ns;
		t->start_ns = 0;
	}
}

static __always_inline int on_entry(void)
{
	timer_start(bpf_get_current_task_btf(), bpf_ktime_get_ns());
	return 0;
}

static __always_inline int on_return(void)
{
	timer_stop(bpf_get_current_task_btf(), bpf_ktime_get_ns());
	return 0;
}

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

SEC("uprobe")
int timer_entry(void *ctx)
{
	return on_entry();
}

SEC("uretprobe")
int timer_return(void *ctx)
{
	return on_return();
}

/* PyTorch operators: one uprobe session program, run at entry and (entry returned 0) at return,
 * as gpuspy's op_call; "uprobe" because libbpf 1.1 has no "uprobe.session" */
SEC("uprobe")
int empty_session(void *ctx)
{
	return 0;
}

SEC("uprobe")
int timer_session(void *ctx)
{
	return bpf_session_is_return() ? on_return() : on_entry();
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

/* A filter floor (empty_probes --filter --syscalls): each program asks which process it runs
 * in, the least any tracer that traces some processes and not others does on every syscall of
 * every process. No process is the one asked for (tgid 0 never makes syscalls). */
const volatile __u32 filter_tgid = 0;

SEC("tp_btf/sys_enter")
int filter_sys_enter(void *ctx)
{
	return (bpf_get_current_pid_tgid() >> 32) == filter_tgid;
}

SEC("tp_btf/sys_exit")
int filter_sys_exit(void *ctx)
{
	return (bpf_get_current_pid_tgid() >> 32) == filter_tgid;
}

SEC("tp_btf/sys_enter")
int timer_sys_enter(void *ctx)
{
	return on_entry();
}

SEC("tp_btf/sys_exit")
int timer_sys_exit(void *ctx)
{
	return on_return();
}

/* A count-only prototype (empty_probes --count --syscalls): sys_enter alone, no sys_exit, adding
 * one to a per-(process, thread, syscall) count in a hash map keyed as gpuspy's statistics are.
 * What exact syscall counts without durations would cost: the least a view that counts every
 * syscall and times none could pay. */
struct count_key {
	__u32 pid, tid, nr, pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct count_key);
	__type(value, __u64);
} counts SEC(".maps");

SEC("tp_btf/sys_enter")
int BPF_PROG(count_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), one = 1, *n;
	struct count_key key = {.pid = pid_tgid >> 32, .tid = (__u32)pid_tgid, .nr = (__u32)id};

	n = bpf_map_lookup_elem(&counts, &key);
	if (n)
		*n += 1; /* keys are per thread: one CPU at a time */
	else
		bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
	return 0;
}

/* context switches: gpuspy's sched hook. The timer times off-CPU intervals, from the switch
 * that takes a thread off to the one that brings it back. */
SEC("tp_btf/sched_switch")
int empty_sched_switch(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(timer_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();

	timer_start(prev, now);
	timer_stop(next, now);
	return 0;
}
