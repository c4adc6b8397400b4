/* SPDX-License-Identifier: MIT */
/*
 * The CPython frame walker every component shares (included after common.bpf.h).
 *
 * The thread state comes from the thread's pthread TSD slot of CPython's autoTSSkey, never from
 * the "current thread state" globals: those are NULL whenever the thread has released the GIL,
 * which is exactly when it sits in a syscall, a CUDA call or an ATen operator
 * (../shared/docs/CPYTHON.md §2). From it, the top frame and the chain of previous frames; per
 * frame one read of the frame and one of the code object's co_filename/co_name pointers, which
 * make the stamp that tells a code object from a later one at the same address.
 *
 * The frame loop is a bpf_loop() callback, so the verifier checks one iteration, not 128, in
 * each program that inlines py_stack_emit(). The record is built in a per-CPU scratch area and
 * copied to the ring buffer at its used size only. Each BPF object has its own scratch area; a
 * sleepable program (cuda.bpf.c's naming returns) can be preempted mid-walk and another program
 * of its object run on that CPU, so such a walk may rarely come out mixed with another's: a
 * wrong stack, never an unsafe access.
 */
#ifndef GPUSPY_PY_STACK_BPF_H
#define GPUSPY_PY_STACK_BPF_H

#define PY_FRAME_BUF	   136 /* frame bytes read at once, plus slack for clamped field reads */
#define PY_FRAME_READ	   112 /* the largest fr_size the loader sets (3.8 f_lasti at 104) */
#define PY_TSD_KEYS	   32  /* glibc's first-level TSD block; higher keys are refused */
#define PY_OWNED_BY_CSTACK 3   /* 3.12+ entry frames (FRAME_OWNED_BY_CSTACK): not Python code */
/* chain links walked: the frames kept plus entry frames skipped on the way */
#define PY_WALK_MAX (GS_PY_MAX_FRAMES + GS_PY_MAX_FRAMES / 2)

/* struct gs_py_stack with room for its frames: the record as it is output */
struct py_stack_rec {
	struct gs_hdr hdr;
	__u64 end_ts;
	__u32 kind;
	__u32 nframes;
	struct gs_py_frame frames[GS_PY_MAX_FRAMES];
};

_Static_assert(__builtin_offsetof(struct py_stack_rec, frames) == sizeof(struct gs_py_stack),
	       "py_stack_rec must lay out as struct gs_py_stack");

struct py_scratch {
	struct gs_py_offsets off;
	__u64 frame; /* the next frame to visit; 0: the chain ended */
	__u64 shape; /* hash of the process and the frames so far */
	__u32 n;
	__u32 pad;
	__u8 buf[PY_FRAME_BUF];
	struct py_stack_rec rec;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_scratch);
} py_scratch SEC(".maps");

/* Stack shapes recently output. A new one wakes the reader at once: the loader must read the
 * code objects it names from the live process, which may free them (or exit) soon after;
 * repeated shapes wait for the reader's next batch like every other record. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u8);
} py_shapes SEC(".maps");

static __always_inline struct py_scratch *py_scratch_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&py_scratch, &zero);
}

static __always_inline __u64 py_read_ptr(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/* Fields of the frame in s->buf; the offsets are clamped so the verifier sees them in bounds
 * (the loader keeps every offset below fr_size <= PY_FRAME_READ). */
static __always_inline __u64 py_buf_u64(struct py_scratch *s, __s32 off)
{
	return *(__u64 *)(s->buf + ((__u32)off & 127));
}

static __always_inline __s32 py_buf_s32(struct py_scratch *s, __s32 off)
{
	return *(__s32 *)(s->buf + ((__u32)off & 127));
}

static __always_inline __u8 py_buf_u8(struct py_scratch *s, __s32 off)
{
	return s->buf[(__u32)off & 127];
}

/* The instruction index in code units, or -1 when it cannot be trusted (a frame being set up:
 * its instruction pointer is not yet inside its code). */
static __always_inline __s32 py_frame_lasti(struct py_scratch *s, __u64 code)
{
	__s64 lasti;

	if (s->off.instr_is_ptr) {
		__u64 first = code + s->off.co_code_adaptive, p = py_buf_u64(s, s->off.fr_instr);

		if (p < first || p - first >= (1ULL << 30))
			return -1;
		return (__s32)((p - first) / 2);
	}
	lasti = py_buf_s32(s, s->off.fr_instr);
	if (lasti < 0)
		return -1;
	return (__s32)(s->off.lasti_bytes ? lasti / 2 : lasti);
}

/* One link of the frame chain: keeps the frame when it is Python code. 1 stops the loop. */
static long py_walk_step(__u32 i, void *ctx)
{
	struct py_scratch *s = py_scratch_get();
	__u64 frame, code, names[2];
	struct gs_py_frame *f;
	__u32 size, n;

	if (!s || !s->frame)
		return 1;
	frame = s->frame;
	size = s->off.fr_size;
	if (size > PY_FRAME_READ)
		size = PY_FRAME_READ;
	if (bpf_probe_read_user(s->buf, size, (const void *)frame))
		return 1; /* a chain cut mid-update (a CPU sample) ends here */
	s->frame = py_buf_u64(s, s->off.fr_back);
	if (s->off.fr_owner >= 0 && py_buf_u8(s, s->off.fr_owner) >= PY_OWNED_BY_CSTACK)
		return 0;
	code = py_buf_u64(s, s->off.fr_code);
	if (!code || code == s->off.none)
		return 0;
	n = s->n;
	if (n >= GS_PY_MAX_FRAMES) {
		s->rec.hdr.flags |= GS_PY_TRUNCATED;
		return 1;
	}
	f = &s->rec.frames[n];
	f->code = code;
	f->lasti = py_frame_lasti(s, code);
	if (bpf_probe_read_user(names, sizeof(names), (const void *)(code + s->off.co_filename)))
		names[0] = names[1] = 0;
	f->stamp = gs_py_code_stamp(names[0], names[1]);
	s->shape = (s->shape ^ code ^ (__u64)f->stamp << 32) * 0x100000001b3ULL;
	s->n = n + 1;
	return 0;
}

/* The thread state bound to the current thread through CPython's TSD key, or 0. */
static __always_inline __u64 py_thread_state(struct py_scratch *s)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 fsbase = task->thread.fsbase;
	__u32 key = 0;

	if (!fsbase ||
	    bpf_probe_read_user(&key, sizeof(key), (const void *)(s->off.runtime + s->off.tsd_key)))
		return 0;
	if (key >= PY_TSD_KEYS)
		return 0;
	/* glibc x86_64: struct pthread.specific_1stblock[key] = {seq, data} */
	return py_read_ptr(fsbase + s->off.tsd_block + (__u64)key * 16 + 8);
}

static __always_inline __u64 py_top_frame(struct py_scratch *s, __u64 tstate)
{
	if (s->off.ts_cframe >= 0) { /* 3.11, 3.12: through the _PyCFrame */
		__u64 cframe = py_read_ptr(tstate + s->off.ts_cframe);

		return cframe ? py_read_ptr(cframe + s->off.cframe_cur) : 0;
	}
	return py_read_ptr(tstate + s->off.ts_frame);
}

static __always_inline void py_output(struct py_scratch *s, __u32 loss_kind)
{
	__u32 n = s->n;
	__u64 size, pending;
	bool wake;
	__u8 one = 1;

	if (n > GS_PY_MAX_FRAMES)
		n = GS_PY_MAX_FRAMES;
	size = sizeof(struct gs_py_stack) + (__u64)n * sizeof(struct gs_py_frame);
	s->rec.hdr.size = (__u16)size;
	s->rec.nframes = n;
	pending = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	wake = pending >= wakeup_bytes;
	if (n && !bpf_map_lookup_elem(&py_shapes, &s->shape)) {
		bpf_map_update_elem(&py_shapes, &s->shape, &one, BPF_ANY);
		wake = true;
	}
	if (bpf_ringbuf_output(&events, &s->rec, size,
			       wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP))
		count_loss(loss_kind);
}

/* Not inlined: one copy of the walk per program, whatever the number of call sites. Returns
 * 0 (a subprogram's return value must be set for the verifier). */
static __noinline int py_walk_emit(__u32 kind, __u64 start_ns, __u64 end_ns)
{
	__u64 id = bpf_get_current_pid_tgid(), tstate;
	__u32 tgid = id >> 32;
	struct gs_py_offsets *off;
	struct py_scratch *s;

	off = bpf_map_lookup_elem(&py_procs, &tgid);
	s = py_scratch_get();
	if (!off || !s)
		return 0;
	s->off = *off;
	s->n = 0;
	s->shape = tgid;
	fill_hdr(&s->rec.hdr, GS_REC_PY_STACK, 0, tgid, (__u32)id, start_ns);
	s->rec.end_ts = end_ns;
	s->rec.kind = kind;
	tstate = py_thread_state(s);
	if (!tstate) {
		/* a native thread: worth saying for a CPU sample, nothing to say for a call */
		if (kind == GS_PY_SAMPLE) {
			s->rec.hdr.flags = GS_PY_NO_THREAD;
			py_output(s, GS_LOSS_PY_SAMPLE);
		}
		return 0;
	}
	s->frame = py_top_frame(s, tstate);
	bpf_loop(PY_WALK_MAX, py_walk_step, NULL, 0);
	if (s->n || kind == GS_PY_SAMPLE)
		py_output(s, kind == GS_PY_SAMPLE ? GS_LOSS_PY_SAMPLE : GS_LOSS_PY_STACK);
	return 0;
}

/* Emits the current thread's Python stack as a GS_REC_PY_STACK record valid over
 * [start_ns, end_ns], if py_stacks is on and its process is in py_procs. */
static __always_inline void py_stack_emit(__u32 kind, __u64 start_ns, __u64 end_ns)
{
	if (py_stacks)
		py_walk_emit(kind, start_ns, end_ns);
}

#endif /* GPUSPY_PY_STACK_BPF_H */
