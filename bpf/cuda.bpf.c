// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * CUDA API capture: entry and return uprobes on the functions of output/trace/cuda_probe_list.h in
 * libcudart and libcuda (attached once per library file, for every process that maps it, and
 * filtered here by the traced set). The cookie of each attachment carries the function's
 * index and what to capture for it, so one program pair serves every function.
 *
 * The entry pushes a frame (time, argument registers, stack arguments or the launch config)
 * on a per-thread stack; the return pops it and emits one GS_REC_CUDA_CALL, marked nested
 * when another probed call is still open on the thread (the driver call a runtime call
 * makes), plus a GS_REC_CUDA_NAME for the calls that bind a kernel handle to its name.
 *
 * The live views (top, serve) attach a smaller set (loader/probes/cuda_probes.c): the
 * driver's launch functions get only cuda_launch_count, an entry probe that counts per
 * process in a map, and the naming calls are not probed.
 *
 * A third program watches ld.so: when it has mapped new objects and before it runs their
 * constructors (which register kernel names), it stops a process that opened a CUDA-looking
 * file meanwhile (osrt.bpf.c notes those), so the loader can probe a newly loaded CUDA
 * library before any of its code runs.
 */
#include "common.bpf.h"
#include "py_stack.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define SIGSTOP_VALUE	     19
#define RT_CONSISTENT	     0	/* enum r_state in <link.h>: the link map is complete */
#define R_DEBUG_STATE_OFFSET 24 /* struct r_debug: r_version, r_map, r_brk, r_state */

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct gs_cuda_thread);
} cuda_threads SEC(".maps");

/* Threads whose dlopen gpuspy itself makes (loader/bridge/bridge_inject.c loads the CUPTI bridge
 * through one): not held at ld.so, the loader probes the process itself afterwards. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u8);
} ldso_exempt SEC(".maps");

static __always_inline __u32 cookie_capture(__u64 cookie)
{
	return (__u32)(cookie >> GS_CUDA_COOKIE_SHIFT);
}

static __always_inline void capture_args(struct pt_regs *ctx, struct gs_cuda_frame *f)
{
	__u32 cap = cookie_capture(f->cookie);

	f->args[0] = PT_REGS_PARM1(ctx);
	f->args[1] = PT_REGS_PARM2(ctx);
	f->args[2] = PT_REGS_PARM3(ctx);
	f->args[3] = PT_REGS_PARM4(ctx);
	f->args[4] = PT_REGS_PARM5(ctx);
	f->args[5] = ctx->r9 /* libbpf 1.1 has no PT_REGS_PARM6 */;
	f->args[6] = f->args[7] = f->args[8] = 0;
	/* the seventh argument on is on the stack, above the return address */
	if (cap & GS_CUDA_CAP_STACK)
		bpf_probe_read_user(&f->args[6], 3 * sizeof(__u64),
				    (const void *)(PT_REGS_SP(ctx) + sizeof(__u64)));
	else if (cap & GS_CUDA_CAP_CONFIG)
		bpf_probe_read_user(&f->args[4], 5 * sizeof(__u64), (const void *)f->args[0]);
}

SEC("uprobe")
int cuda_entry(struct pt_regs *ctx)
{
	struct gs_cuda_thread *t;
	struct gs_cuda_frame *f;
	__u32 d;

	if (!current_is_traced())
		return 0;
	t = bpf_task_storage_get(&cuda_threads, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		count_loss(GS_LOSS_CUDA_CALL);
		return 0;
	}
	d = t->depth++;
	if (d >= GS_CUDA_MAX_DEPTH) {
		count_loss(GS_LOSS_CUDA_CALL);
		return 0;
	}
	f = &t->frames[d];
	f->cookie = bpf_get_attach_cookie(ctx);
	capture_args(ctx, f);
	f->ts = bpf_ktime_get_ns(); /* last: our own capture is not the call's time */
	return 0;
}

/* Copies the name string at `src`. A name in .rodata that nothing has read yet is not paged
 * in, and bpf_probe_read_user() cannot fault it in: the sleepable program can, with
 * bpf_copy_from_user(), which needs the whole buffer readable, so it only pages the string's
 * first byte in before the usual string copy. */
static __always_inline void copy_name(char *dst, const void *src, bool may_fault)
{
	char first;

	if (may_fault)
		bpf_copy_from_user(&first, 1, src);
	if (bpf_probe_read_user_str(dst, GS_KERNEL_NAME_MAX, src) < 0)
		dst[0] = '\0';
}

static __always_inline void emit_name(const struct gs_cuda_frame *f, __u64 handle, __u64 now,
				      bool may_fault)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gs_cuda_name *n;
	__u32 size = sizeof(*n) + GS_KERNEL_NAME_MAX;

	n = reserve_record(size, GS_LOSS_CUDA_CALL);
	if (!n)
		return;
	fill_hdr(&n->hdr, GS_REC_CUDA_NAME, size, id >> 32, (__u32)id, now);
	n->handle = handle;
	n->probe = (__u16)f->cookie;
	n->pad = 0;
	copy_name(n->name, (const void *)f->args[2], may_fault);
	submit_record(n);
}

static __always_inline void emit_call(struct pt_regs *ctx, const struct gs_cuda_frame *f, __u32 d,
				      __u64 now, bool may_fault)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 cap = cookie_capture(f->cookie);
	struct gs_cuda_call *c;
	__s64 ret = (__s32)PT_REGS_RC(ctx); /* cudaError_t and CUresult are 32-bit enums */
	__u64 out = 0;

	if ((cap & GS_CUDA_CAP_OUT) && ret == 0)
		bpf_probe_read_user(&out, sizeof(out), (const void *)f->args[0]);
	c = reserve_record(sizeof(*c), GS_LOSS_CUDA_CALL);
	if (c) {
		fill_hdr(&c->hdr, GS_REC_CUDA_CALL, sizeof(*c), id >> 32, (__u32)id, f->ts);
		c->hdr.flags = d ? GS_CUDA_NESTED : 0;
		c->dur_ns = now - f->ts;
		c->ret = ret;
		__builtin_memcpy(c->args, f->args, sizeof(c->args));
		c->out = out;
		c->probe = (__u16)f->cookie;
		c->depth = (__u16)d;
		c->pad = 0;
		submit_record(c);
	}
	if (!(cap & GS_CUDA_CAP_NAME))
		return;
	if (cap & GS_CUDA_CAP_NAME_ARG1) /* __cudaRegisterFunction returns nothing */
		emit_name(f, f->args[1], now, may_fault);
	else if (ret == 0 && out)
		emit_name(f, out, now, may_fault);
}

static __always_inline int on_return(struct pt_regs *ctx, bool may_fault)
{
	__u64 now = bpf_ktime_get_ns();
	struct gs_cuda_thread *t;
	__u32 d;

	t = bpf_task_storage_get(&cuda_threads, bpf_get_current_task_btf(), 0, 0);
	if (!t || !t->depth)
		return 0;
	d = --t->depth;
	if (d >= GS_CUDA_MAX_DEPTH)
		return 0;
	emit_call(ctx, &t->frames[d], d, now, may_fault);
	if (!d) /* the calls nested in it ran under the same Python stack */
		py_stack_emit(GS_PY_AT_CUDA, t->frames[0].ts, now);
	return 0;
}

SEC("uretprobe")
int cuda_return(struct pt_regs *ctx)
{
	return on_return(ctx, false);
}

/* For the functions that name kernels (GS_CUDA_CAP_NAME): rare, and their strings may not be
 * paged in yet, so these returns run sleepable. */
SEC("uretprobe.s")
int cuda_return_naming(struct pt_regs *ctx)
{
	return on_return(ctx, true);
}

/* Launches per process for the live views (loader/live: top, serve), which show counts and
 * rates, never a launch's arguments or time: one entry probe on the driver's launch functions
 * adds a count here, with no return probe (on this VM a uretprobe nearly doubles a call's trap
 * cost, REFERENCE.md §6) and no ring-buffer record. The loader reads the map at every tick and
 * removes the processes that have exited. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} live_launches SEC(".maps");

SEC("uprobe")
int cuda_launch_count(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), one = 1, *n;
	struct gs_cuda_thread *t;
	__u32 tgid = id >> 32;

	if (!is_traced(tgid, (__u32)id))
		return 0;
	/* a launch made inside another probed call is part of that call, as in a recording */
	t = bpf_task_storage_get(&cuda_threads, bpf_get_current_task_btf(), 0, 0);
	if (t && t->depth)
		return 0;
	n = bpf_map_lookup_elem(&live_launches, &tgid);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return 0;
	}
	/* the first launch of the process; another thread may have inserted it meanwhile */
	if (bpf_map_update_elem(&live_launches, &tgid, &one, BPF_NOEXIST)) {
		n = bpf_map_lookup_elem(&live_launches, &tgid);
		if (n)
			__sync_fetch_and_add(n, 1);
		else
			count_loss(GS_LOSS_CUDA_CALL);
	}
	return 0;
}

/* The held_procs value of an ld.so hold, built here (a map value may not come from the ring). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gs_op_unwind);
} hold_scratch SEC(".maps");

/* _dl_debug_state() is ld.so's debugger hook, called once the link map is being changed
 * (RT_ADD) and again once it is consistent (RT_CONSISTENT): new objects mapped and not yet
 * initialised, at start-up and at every dlopen. The cookie is the distance from it to
 * _r_debug in the same ld.so, whose r_state tells the two calls apart. */
SEC("uprobe")
int ldso_debug_state(struct pt_regs *ctx)
{
	__u64 r_debug = PT_REGS_IP(ctx) + bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	struct gs_op_unwind *held;
	struct gs_hdr *h;
	__u32 zero = 0;
	int state;

	__u32 tgid = id >> 32;

	__u32 tid = (__u32)id;

	if (!current_is_traced() || !bpf_map_lookup_elem(&cuda_opened, &tgid))
		return 0;
	if (bpf_map_lookup_elem(&ldso_exempt, &tid)) {
		bpf_map_delete_elem(&cuda_opened, &tgid);
		return 0;
	}
	if (bpf_probe_read_user(&state, sizeof(state),
				(const void *)(r_debug + R_DEBUG_STATE_OFFSET)))
		return 0;
	if (state != RT_CONSISTENT)
		return 0;
	bpf_map_delete_elem(&cuda_opened, &tgid);
	held = bpf_map_lookup_elem(&hold_scratch, &zero);
	if (!held)
		return 0;
	h = bpf_ringbuf_reserve(&events, sizeof(*h), 0);
	if (!h) {
		/* without the record nobody would resume the process: let it run unprobed */
		count_loss(GS_LOSS_LIBS_NOT_HELD);
		return 0;
	}
	fill_hdr(h, GS_REC_LIBS_CHANGED, sizeof(*h), id >> 32, (__u32)id, bpf_ktime_get_ns());
	held->hdr = *h;
	held->n = 0;
	if (hold_note(held)) {
		/* no watchdog would know of the hold: let it run unprobed */
		bpf_ringbuf_discard(h, 0);
		count_loss(GS_LOSS_LIBS_NOT_HELD);
		return 0;
	}
	/* the stop takes effect on the way back to user space, before ld.so goes on; the loader
	 * attaches to what was mapped, then sends SIGCONT. The stop is queued before the record
	 * is published: this program may be preempted between the two, and a SIGCONT that came
	 * first would leave the process stopped for good. */
	bpf_send_signal_thread(SIGSTOP_VALUE);
	bpf_ringbuf_submit(h, BPF_RB_FORCE_WAKEUP);
	return 0;
}
