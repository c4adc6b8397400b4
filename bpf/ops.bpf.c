// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * PyTorch operator calls: one uprobe session program (Linux 6.13+: the same program runs at a
 * function's entry and, if the entry asks for it, at its return) on every
 * at::_ops::<op>::call of a libtorch-like library, attached with one link per library file for
 * every process that maps it (loader/probes/op_probes.c). The cookie is the operator's global index
 * (named by GS_REC_OP_NAME records the loader writes).
 *
 * A session rather than a plain return probe because a return probe replaces the return
 * address on the stack with the kernel's trampoline for every process that runs the function:
 * the session's entry declines the return for threads that are not traced, so the processes
 * gpuspy does not trace are never touched. In traced ones, see op_unwind for C++ exceptions.
 *
 * The entry pushes (time, index, stack pointer) on a per-thread stack and keeps the frame's
 * position in the session cookie; the return pops it and emits one GS_REC_OP_CALL. Readers get
 * self time by subtracting the direct children on the same thread.
 */
#include "common.bpf.h"
#include "py_stack.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define SIGSTOP_VALUE 19

extern bool bpf_session_is_return(void) __ksym;
extern __u64 *bpf_session_cookie(void) __ksym;

struct op_frame {
	__u64 ts;
	__u64 sp; /* the stack pointer at entry: a frame below the current one was unwound */
	__u32 op;
	__u32 pad;
};

struct op_thread {
	__u32 depth; /* open operator calls with a frame here */
	__u32 pad;
	struct op_frame frames[GS_OP_MAX_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct op_thread);
} op_threads SEC(".maps");

/* A zeroed GS_REC_OP_UNWIND to fill: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gs_op_unwind);
} unwind_buf SEC(".maps");

/*
 * An operator that throws (a C++ exception unwinding through it) never returns, and its frame
 * would stay on our stack. Stacks grow down, so an enclosing call's frame has a higher entry
 * stack pointer than anything running inside it: frames at or below `sp` belong to calls that
 * were unwound (at::_ops wrappers never tail-call one another, which would share a slot). They
 * are dropped at the thread's next entry and counted as lost (their end is unknown).
 */
static __always_inline __u32 drop_unwound(struct op_thread *t, __u64 sp)
{
	__u32 d = t->depth;

	for (int i = 0; i < GS_OP_MAX_DEPTH && d && d <= GS_OP_MAX_DEPTH; i++) {
		if (t->frames[(d - 1) & (GS_OP_MAX_DEPTH - 1)].sp > sp)
			break;
		d--;
		count_loss(GS_LOSS_OP_CALL);
	}
	t->depth = d;
	return d;
}

/* Returns 0 to have the return run, 1 to decline it (nothing kept for this call). */
static __always_inline int on_entry(struct pt_regs *ctx)
{
	__u64 sp = PT_REGS_SP(ctx), *cookie;
	struct op_thread *t;
	struct op_frame *f;
	__u32 d;

	if (!current_is_traced())
		return 1;
	t = bpf_task_storage_get(&op_threads, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	cookie = bpf_session_cookie();
	if (!t || !cookie) {
		count_loss(GS_LOSS_OP_CALL);
		return 1;
	}
	d = drop_unwound(t, sp);
	if (d >= GS_OP_MAX_DEPTH) {
		count_loss(GS_LOSS_OP_CALL);
		return 1;
	}
	t->depth = d + 1;
	*cookie = d;
	f = &t->frames[d];
	f->op = (__u32)bpf_get_attach_cookie(ctx);
	f->sp = sp;
	f->ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline void emit_call(const struct op_frame *f, __u32 d, __u64 now)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gs_op_call *c = reserve_record(sizeof(*c), GS_LOSS_OP_CALL);

	if (!c)
		return;
	fill_hdr(&c->hdr, GS_REC_OP_CALL, sizeof(*c), id >> 32, (__u32)id, f->ts);
	c->hdr.flags = d ? GS_CUDA_NESTED : 0;
	c->dur_ns = now - f->ts;
	c->op = f->op;
	c->depth = (__u16)d;
	c->pad = 0;
	submit_record(c);
}

static __always_inline int on_return(void)
{
	__u64 now = bpf_ktime_get_ns(), *cookie = bpf_session_cookie();
	struct op_thread *t;
	struct op_frame *f;
	__u32 d;

	t = bpf_task_storage_get(&op_threads, bpf_get_current_task_btf(), 0, 0);
	if (!t || !cookie)
		return 0;
	d = (__u32)*cookie;
	/* the frames above this call's were calls an exception unwound inside it */
	if (d >= t->depth || d >= GS_OP_MAX_DEPTH)
		return 0;
	for (int i = 0; i < GS_OP_MAX_DEPTH && t->depth > d + 1; i++) {
		t->depth--;
		count_loss(GS_LOSS_OP_CALL);
	}
	t->depth = d;
	f = &t->frames[d];
	emit_call(f, d, now);
	if (!d) /* everything nested in the outermost operator ran under the same Python stack */
		py_stack_emit(GS_PY_AT_OP, f->ts, now);
	return 0;
}

/* "uprobe", which libbpf 1.1 knows (it has no "uprobe.session"): bpf_session.c loads it with
 * the session attach type */
SEC("uprobe")
int op_call(struct pt_regs *ctx)
{
	return bpf_session_is_return() ? on_return() : on_entry(ctx);
}

/* Every open call of the thread loses its return once its return address is put back: they are
 * dropped now, so the calls made after the exception nest as they really do. */
static __always_inline void forget_calls(struct task_struct *task)
{
	struct op_thread *t = bpf_task_storage_get(&op_threads, task, 0, 0);

	for (int i = 0; t && i < GS_OP_MAX_DEPTH && t->depth; i++) {
		t->depth--;
		count_loss(GS_LOSS_OP_CALL);
	}
}

/*
 * A C++ exception is about to unwind this thread's stack (attached to libgcc's
 * _Unwind_RaiseException, _Unwind_Resume_or_Rethrow and _Unwind_ForcedUnwind wherever operators
 * are probed). A pending return replaced a return address on the stack with the kernel's
 * trampoline, which has no unwind information: the unwinder would stop there and
 * std::terminate() the process. BPF may not write user memory (and under kernel lockdown
 * cannot), so the replaced addresses, from the kernel's own record of them, go to the loader,
 * which puts them back through /proc/PID/mem while the process is held stopped. The calls
 * whose address is put back return without their return probe: counted as lost (operators
 * that were running on the thread, whether the exception unwinds them or is caught inside
 * them). Only traced threads have pending operator returns (untraced ones decline them).
 */
SEC("uprobe")
int op_unwind(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct return_instance *ri;
	struct gs_op_unwind *u, *rec;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0, n = 0;
	bool pending = false;

	if (!current_is_traced())
		return 0;
	ri = BPF_CORE_READ(task, utask, return_instances);
	u = bpf_map_lookup_elem(&unwind_buf, &zero);
	if (!ri || !u)
		return 0;
	u->trampoline = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	for (int i = 0; i < GS_OP_UNWIND_MAX && ri; i++) {
		__u64 slot = BPF_CORE_READ(ri, stack), now = 0;

		u->slots[i].slot = slot;
		u->slots[i].orig = BPF_CORE_READ(ri, orig_ret_vaddr);
		/* the kernel keeps the record of a call an earlier exception unwound until it
		 * notices: only a slot that still holds the trampoline needs the loader */
		if (!bpf_probe_read_user(&now, sizeof(now), (const void *)slot) &&
		    now == u->trampoline)
			pending = true;
		ri = BPF_CORE_READ(ri, next);
		n = i + 1;
	}
	if (!pending || !u->trampoline)
		return 0;
	forget_calls(task);
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		/* nobody would resume a stopped process: it unwinds as it is */
		count_loss(GS_LOSS_OP_CALL);
		return 0;
	}
	fill_hdr(&u->hdr, GS_REC_OP_UNWIND, sizeof(*rec), id >> 32, (__u32)id, bpf_ktime_get_ns());
	u->n = n;
	u->pad = 0;
	if (hold_note(u)) {
		/* no watchdog would know of the hold: it unwinds as it is */
		bpf_ringbuf_discard(rec, 0);
		count_loss(GS_LOSS_OP_CALL);
		return 0;
	}
	__builtin_memcpy(rec->slots, u->slots, sizeof(rec->slots));
	rec->hdr = u->hdr;
	rec->trampoline = u->trampoline;
	rec->n = n;
	rec->pad = 0;
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
	/* the stop takes effect on the way back to user space, before the unwinder runs */
	bpf_send_signal_thread(SIGSTOP_VALUE);
	return 0;
}
