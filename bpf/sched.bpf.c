// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Scheduler capture for traced threads: off-CPU intervals with their reason (exact per-thread
 * totals in a map, spans above a threshold in the ring buffer) and the process lifecycle (fork,
 * exec, exit, thread renames). Following children happens here: a fork of a traced process
 * marks the child traced (traced_pids) before the child can run a single syscall.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u64 offcpu_threshold_ns = 1000;

#define TASK_RUNNING_STATE	 0x0000
#define TASK_UNINTERRUPTIBLE_BIT 0x0002
#define TASK_NOLOAD_BIT		 0x0400

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct gs_offcpu_inflight);
} offcpu_by_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* resized by the loader */
	__type(key, struct gs_offcpu_stats_key);
	__type(value, struct gs_offcpu_stats_val);
} offcpu_stats SEC(".maps");

static __always_inline __u32 offcpu_reason(bool preempt, unsigned int prev_state)
{
	if (preempt || prev_state == TASK_RUNNING_STATE)
		return GS_OFFCPU_PREEMPTED;
	/* TASK_IDLE (uninterruptible + noload) is how idle kernel workers wait: not I/O */
	if ((prev_state & TASK_UNINTERRUPTIBLE_BIT) && !(prev_state & TASK_NOLOAD_BIT))
		return GS_OFFCPU_BLOCKED;
	return GS_OFFCPU_SLEEPING;
}

static __always_inline void account_offcpu(__u32 tgid, __u32 tid, __u32 reason, __u64 dur)
{
	struct gs_offcpu_stats_key key = {.pid = tgid, .tid = tid};
	struct gs_offcpu_stats_val *v, zero = {};

	if (reason >= GS_OFFCPU_NREASONS)
		return;
	v = bpf_map_lookup_elem(&offcpu_stats, &key);
	if (!v) {
		if (bpf_map_update_elem(&offcpu_stats, &key, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&offcpu_stats, &key)) {
			count_loss(GS_LOSS_STATS_MAP_FULL);
			return;
		}
		v = bpf_map_lookup_elem(&offcpu_stats, &key);
		if (!v)
			return;
	}
	v->ns[reason] += dur;
	v->count[reason]++;
}

static __always_inline void switched_out(struct task_struct *prev, __u64 now, bool preempt,
					 unsigned int prev_state)
{
	struct gs_offcpu_inflight *s;

	if (!is_traced(prev->tgid, prev->pid))
		return;
	s = bpf_task_storage_get(&offcpu_by_task, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s)
		return;
	s->ts = now;
	s->reason = offcpu_reason(preempt, prev_state);
	s->valid = 1;
}

static __always_inline void switched_in(struct task_struct *next, __u64 now)
{
	struct gs_offcpu_inflight *s;
	struct gs_offcpu *rec;
	__u64 dur;

	/* most switches are to untraced tasks: a bit test spares them the storage lookup (the
	 * bit of a process is only cleared once none of its threads can be switched in) */
	if (follow && !trace_all && !tgid_traced(next->tgid))
		return;
	s = bpf_task_storage_get(&offcpu_by_task, next, 0, 0);
	if (!s || !s->valid)
		return;
	s->valid = 0;
	dur = now - s->ts;
	account_offcpu(next->tgid, next->pid, s->reason, dur);
	if (dur < offcpu_threshold_ns)
		return;
	rec = reserve_record(sizeof(*rec), GS_LOSS_RINGBUF_OFFCPU);
	if (!rec)
		return;
	fill_hdr(&rec->hdr, GS_REC_OFFCPU, sizeof(*rec), next->tgid, next->pid, s->ts);
	rec->dur_ns = dur;
	rec->reason = s->reason;
	rec->pad = 0;
	submit_record(rec);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();

	switched_out(prev, now, preempt, prev_state);
	switched_in(next, now);
	return 0;
}

/* A forked child runs its parent's interpreter at the same addresses: its stacks are walked
 * from its first instruction, not once the loader has read the fork record. */
static __always_inline void py_inherit(__u32 ptgid, __u32 ctgid)
{
	struct gs_py_offsets *o = bpf_map_lookup_elem(&py_procs, &ptgid);

	/* a full map: the child's stacks are not captured, counted as stacks lost */
	if (o && bpf_map_update_elem(&py_procs, &ctgid, o, BPF_ANY))
		count_loss(GS_LOSS_PY_STACK);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	bool is_thread = ptgid == ctgid;
	struct gs_fork *rec;

	if (!is_traced(ptgid, parent->pid))
		return 0;
	if (!is_thread && follow && !trace_all && set_tgid_traced(ctgid, true))
		count_loss(GS_LOSS_TRACED_MAP_FULL);
	if (!is_thread)
		py_inherit(ptgid, ctgid);
	/* without --follow a new thread or process is reported but not traced */
	rec = reserve_record(sizeof(*rec), GS_LOSS_RINGBUF_PROC);
	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GS_REC_FORK, sizeof(*rec), ptgid, parent->pid, bpf_ktime_get_ns());
	rec->hdr.flags = is_thread ? GS_FORK_THREAD : 0;
	rec->child_pid = ctgid;
	rec->child_tid = child->pid;
	bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), child->comm);
	submit_record(rec);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct gs_exec *rec;
	__u32 tgid = p->tgid;

	if (!is_traced(p->tgid, p->pid))
		return 0;
	/* a new program: the loader looks for its interpreter again */
	bpf_map_delete_elem(&py_procs, &tgid);
	rec = reserve_record(sizeof(*rec), GS_LOSS_RINGBUF_PROC);
	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GS_REC_EXEC, sizeof(*rec), p->tgid, p->pid, bpf_ktime_get_ns());
	bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), p->comm);
	bpf_probe_read_kernel_str(rec->filename, sizeof(rec->filename), bprm->filename);
	submit_record(rec);
	return 0;
}

/* A thread's off-CPU totals leave the map when it exits (see osrt_thread_exit): with the ring
 * buffer full they stay for the next checkpoint instead. */
static __always_inline void flush_offcpu_stats(__u32 tgid, __u32 tid)
{
	struct gs_offcpu_stats_key key = {.pid = tgid, .tid = tid};
	struct gs_offcpu_stats_val *v = bpf_map_lookup_elem(&offcpu_stats, &key);
	struct gs_offcpu_final *rec;

	if (!v)
		return;
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec)
		return;
	fill_hdr(&rec->hdr, GS_REC_OFFCPU_STATS, sizeof(*rec), tgid, tid, bpf_ktime_get_ns());
	rec->hdr.flags = GS_STATS_FINAL;
	rec->val = *v;
	submit_record(rec);
	bpf_map_delete_elem(&offcpu_stats, &key);
}

/* The last thread of a process is gone: nothing keyed by its pid may outlive it, or process
 * churn fills the maps and a recycled pid inherits its state. */
static __always_inline void forget_process(__u32 tgid)
{
	if (follow && !trace_all)
		set_tgid_traced(tgid, false);
	bpf_map_delete_elem(&py_procs, &tgid);
	bpf_map_delete_elem(&cuda_opened, &tgid);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid = p->tgid, tid = p->pid;
	struct gs_exit *rec;

	if (!is_traced(tgid, tid))
		return 0;
	rec = reserve_record(sizeof(*rec), GS_LOSS_RINGBUF_PROC);
	if (rec) {
		fill_hdr(&rec->hdr, GS_REC_EXIT, sizeof(*rec), tgid, tid, bpf_ktime_get_ns());
		rec->hdr.flags = group_dead ? GS_EXIT_GROUP : 0;
		/* the wait status is only final for the last thread; a group exit stores it in
		 * signal->group_exit_code */
		rec->exit_code = group_dead ? BPF_CORE_READ(p, signal, group_exit_code) : 0;
		if (group_dead && !rec->exit_code)
			rec->exit_code = p->exit_code;
		rec->pad = 0;
		bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), p->comm);
		submit_record(rec);
	}
	flush_offcpu_stats(tgid, tid);
	/* a recycled tid or pid must not inherit tracing */
	if (!follow && !trace_all)
		bpf_map_delete_elem(&traced_tids, &tid);
	if (group_dead)
		forget_process(tgid);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(task_rename, struct task_struct *task, const char *comm)
{
	struct gs_comm *rec;

	if (!is_traced(task->tgid, task->pid))
		return 0;
	rec = reserve_record(sizeof(*rec), GS_LOSS_RINGBUF_PROC);
	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GS_REC_COMM, sizeof(*rec), task->tgid, task->pid, bpf_ktime_get_ns());
	bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), comm);
	submit_record(rec);
	return 0;
}

/* CPU time of every traced thread for the live views, in one read of an iterator where they read
 * /proc/PID/stat per process at each interval (an open, a read and a close each, and the kernel
 * formatting 52 fields). The loader sums a process's threads; signal->sum_sched_runtime holds
 * what its exited threads ran, as /proc/PID/stat counts it. */
SEC("iter/task")
int task_cputime(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct gs_task_cputime rec;

	if (!task || !is_traced(task->tgid, task->pid))
		return 0;
	rec.tgid = task->tgid;
	rec.tid = task->pid;
	rec.run_ns = task->se.sum_exec_runtime;
	rec.exited_threads_ns = BPF_CORE_READ(task, signal, sum_sched_runtime);
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}
