// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * OS-runtime capture: every syscall of a traced thread is counted with its duration in a
 * statistics map (exact counts, totals, min/max, sum of squares and a histogram for the median),
 * and calls longer than `span_threshold_ns` also go to the ring buffer as timeline spans.
 * `gpuspy serve` loads osrt_sys_count instead (bpf_session.c): counts, no durations.
 *
 * tp_btf (BTF-typed raw tracepoints) is used instead of the raw_syscalls tracepoints because it
 * needs no tracefs mount and skips the perf-event argument copy.
 */
#include "common.bpf.h"
#include "py_stack.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u64 span_threshold_ns = 1000;
/* syscalls this long get the Python stack they ran under: min(span, off-CPU thresholds) */
const volatile __u64 py_stack_min_ns = 1000;

#define __NR_execve_x86_64  59
#define __NR_open_x86_64    2
#define __NR_creat_x86_64   85
#define __NR_openat_x86_64  257
#define __NR_openat2_x86_64 437
/* Since Linux 6.11 a uretprobe's trampoline returns through this syscall: gpuspy's own CUDA
 * return probes, not the program's doing, so it is neither counted nor spanned. */
#define __NR_uretprobe_x86_64 335
#define AT_FDCWD_VALUE	      -100

/* Syscall numbers below this have an entry in gs_syscall_inflight.stat_slot (x86_64 has ~460). */
#define NR_TRACKED GS_SYSCALL_NR_TRACKED

/* Task-local storage: freed with the task, so exit/execve paths that never return leave no
 * stale entries, and the lookup is a pointer chase rather than a hash. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct gs_syscall_inflight);
} inflight_by_task SEC(".maps");

/*
 * Statistics live in one of two places, chosen at a thread's first call of each syscall:
 *
 * - a syscall_slots entry, found through the thread's stat_slot table in the task storage the
 *   exit program looks up anyway. An array lookup is an inlined bounds check and multiply; the
 *   hash lookup it replaces (jhash of the key, bucket walk, key compare) was most of what exact
 *   statistics cost per call: 50-60 ns of osrt_sys_exit's 145-180 ns on the 2-vCPU VM measured
 *   (docs/BENCHMARKS.md). Free entries wait in free_slots, filled by the loader.
 * - syscall_stats, the hash, when no slot is free (the loader sizes the slots: 0 for the counts
 *   of `serve` and for step windows, whose takes delete keys), or for numbers >= NR_TRACKED.
 *
 * The loader reads both (loader/session/stat_slots.c, stats_dump.c). Either way only the
 * thread itself updates its statistics, so plain arithmetic is safe.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384); /* resized by the loader (--max-stat-keys) */
	__type(key, struct gs_syscall_stats_key);
	__type(value, struct gs_syscall_stats_val);
} syscall_stats SEC(".maps");

/* mmapable: the loader reads the slots in place at each checkpoint (a live view's is every
 * second), not with a bpf() call per slot */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* resized by the loader */
	__type(key, __u32);
	__type(value, struct gs_syscall_slot);
} syscall_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1); /* resized by the loader, which pushes the free indexes */
	__type(value, __u32);
} free_slots SEC(".maps");

/* A zeroed value to insert from; too large for the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gs_syscall_stats_val);
} zero_stats SEC(".maps");

static __always_inline __u32 msb64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r;
}

/* Log-linear bucket; the same mapping is documented in docs/FORMAT.md and inverted by the
 * reports (output/model/histogram.c). */
static __always_inline __u32 hist_bucket(__u64 d)
{
	__u32 msb, octave, sub;

	if (d < (1ULL << GS_HIST_MIN_SHIFT))
		return d >> (GS_HIST_MIN_SHIFT - GS_HIST_SUB_SHIFT);
	msb = msb64(d);
	octave = msb - GS_HIST_MIN_SHIFT + 1;
	if (octave >= GS_HIST_OCTAVES)
		return GS_HIST_BUCKETS - 1;
	sub = (d >> (msb - GS_HIST_SUB_SHIFT)) & (GS_HIST_SUB - 1);
	return octave * GS_HIST_SUB + sub;
}

/* sumsq += d*d in 128 bits: d*d overflows 64 bits beyond ~4.3 s. Keys are per thread, so only
 * one CPU updates a value at a time and plain arithmetic is safe. */
static __always_inline void add_square(struct gs_syscall_stats_val *v, __u64 d)
{
	__u64 hi = d >> 32, lo = d & 0xffffffffULL, cross = hi * lo;
	__u64 sq_lo = lo * lo + (cross << 33);
	__u64 sq_hi = hi * hi + (cross >> 31) + (sq_lo < lo * lo);
	__u64 old_lo = v->sums.sumsq_lo;

	v->sums.sumsq_lo = old_lo + sq_lo;
	v->sums.sumsq_hi += sq_hi + (v->sums.sumsq_lo < old_lo);
}

/* The stat_slot entry of syscall `nr`, NULL beyond NR_TRACKED. */
static __always_inline __u16 *stat_slot_of(struct gs_syscall_inflight *in, __u32 nr)
{
	if (nr >= NR_TRACKED)
		return NULL;
	return &in->stat_slot[nr];
}

/* The thread's first call of `nr` with no free slot: its hash key is created, and remembered
 * for the flush at exit. */
static __noinline struct gs_syscall_stats_val *new_stats_key(struct gs_syscall_stats_key *key,
							     struct gs_syscall_inflight *in)
{
	struct gs_syscall_stats_val *init, *v;
	__u32 zero = 0;
	__u16 *where;

	if (!key || !in)
		return NULL;
	init = bpf_map_lookup_elem(&zero_stats, &zero);
	if (!init)
		return NULL;
	init->sums.min_ns = ~0ULL;
	if (bpf_map_update_elem(&syscall_stats, key, init, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&syscall_stats, key)) {
		count_loss(GS_LOSS_STATS_MAP_FULL);
		return NULL;
	}
	v = bpf_map_lookup_elem(&syscall_stats, key);
	where = stat_slot_of(in, key->nr);
	if (v && where)
		*where = GS_STAT_IN_HASH;
	return v;
}

/* The thread's first call of `nr`: a free slot if there is one, else a hash key. */
static __noinline struct gs_syscall_stats_val *new_stats(struct gs_syscall_stats_key *key,
							 struct gs_syscall_inflight *in)
{
	struct gs_syscall_slot *slot;
	__u16 *where;
	__u32 idx;

	if (!key || !in)
		return NULL;
	where = stat_slot_of(in, key->nr);
	if (!where || bpf_map_pop_elem(&free_slots, &idx))
		return new_stats_key(key, in);
	slot = bpf_map_lookup_elem(&syscall_slots, &idx);
	if (!slot || idx >= GS_STAT_SLOTS_MAX)
		return new_stats_key(key, in); /* never: the loader pushes valid indexes */
	/* a free slot is zeroed (by flush_slot, or by the loader for a thread gone before its
	 * flush), and min_ns starts as "no minimum yet" */
	slot->val.sums.min_ns = ~0ULL;
	slot->key = *key;
	*where = (__u16)(idx + 1);
	return &slot->val;
}

/* This thread's statistics of `key->nr`, created at its first call; NULL when full. */
static __always_inline struct gs_syscall_stats_val *stats_of(struct gs_syscall_inflight *in,
							     struct gs_syscall_stats_key *key)
{
	struct gs_syscall_stats_val *v;
	__u16 *where = stat_slot_of(in, key->nr);
	__u32 idx;

	if (where && *where != GS_STAT_NONE && *where != GS_STAT_IN_HASH) {
		struct gs_syscall_slot *slot;

		idx = *where - 1;
		slot = bpf_map_lookup_elem(&syscall_slots, &idx);
		return slot ? &slot->val : NULL;
	}
	if (where && *where == GS_STAT_NONE)
		return new_stats(key, in);
	v = bpf_map_lookup_elem(&syscall_stats, key);
	return v ?: new_stats_key(key, in);
}

static __always_inline void account_syscall(struct gs_syscall_inflight *in, __u32 tgid, __u32 tid,
					    __u32 nr, __u64 dur)
{
	struct gs_syscall_stats_key key = {.pid = tgid, .tid = tid, .nr = nr};
	struct gs_syscall_stats_val *v = stats_of(in, &key);
	__u32 b;

	if (!v)
		return;
	/* only this thread updates its statistics, so no CPU updates them at the same time */
	v->sums.count++;
	v->sums.total_ns += dur;
	if (dur < v->sums.min_ns)
		v->sums.min_ns = dur;
	if (dur > v->sums.max_ns)
		v->sums.max_ns = dur;
	add_square(v, dur);
	b = hist_bucket(dur);
	if (b < GS_HIST_BUCKETS)
		v->hist[b]++;
}

/* Inode of the file behind `fd` in the current task, 0 when there is none. Cheap enough for
 * spans only: it lets the loader name the file without racing a close() and reopen. */
static __always_inline __u64 fd_inode(__u64 fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct file **fds;
	struct file *f;
	unsigned int max_fds;

	if (fd > 1 << 20)
		return 0;
	max_fds = BPF_CORE_READ(task, files, fdt, max_fds);
	if (fd >= max_fds)
		return 0;
	fds = BPF_CORE_READ(task, files, fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return 0;
	return BPF_CORE_READ(f, f_inode, i_ino);
}

static __always_inline bool first_arg_is_fd(__u32 nr)
{
	switch (nr) {
	case 0:	  /* read */
	case 1:	  /* write */
	case 3:	  /* close */
	case 5:	  /* fstat */
	case 8:	  /* lseek */
	case 16:  /* ioctl */
	case 17:  /* pread64 */
	case 18:  /* pwrite64 */
	case 19:  /* readv */
	case 20:  /* writev */
	case 42:  /* connect */
	case 43:  /* accept */
	case 44:  /* sendto */
	case 45:  /* recvfrom */
	case 46:  /* sendmsg */
	case 47:  /* recvmsg */
	case 72:  /* fcntl */
	case 74:  /* fsync */
	case 75:  /* fdatasync */
	case 77:  /* ftruncate */
	case 217: /* getdents64 */
	case 232: /* epoll_wait */
	case 281: /* epoll_pwait */
	case 288: /* accept4 */
	case 295: /* preadv */
	case 296: /* pwritev */
	case 299: /* recvmmsg */
	case 307: /* sendmmsg */
	case 327: /* preadv2 */
	case 328: /* pwritev2 */
		return true;
	}
	return false;
}

static __always_inline void emit_span(__u32 tgid, __u32 tid, struct gs_syscall_inflight *in,
				      __u64 dur, long ret)
{
	struct gs_syscall *rec;

	rec = reserve_record(sizeof(*rec), GS_LOSS_RINGBUF_SYSCALL);
	if (!rec)
		return;
	fill_hdr(&rec->hdr, GS_REC_SYSCALL, sizeof(*rec), tgid, tid, in->start_ns);
	rec->dur_ns = dur;
	rec->ret = ret;
	rec->args[0] = in->args[0];
	rec->args[1] = in->args[1];
	rec->args[2] = in->args[2];
	rec->nr = (__u32)in->nr;
	rec->pad = 0;
	/* close() already dropped the fd; its inode is gone from the table */
	rec->fd_ino = first_arg_is_fd(rec->nr) && rec->nr != 3 ? fd_inode(in->args[0]) : 0;
	submit_record(rec);
}

/* The user path pointer and dirfd of an open-family call, or false. */
static __always_inline bool open_path_arg(const struct gs_syscall_inflight *in, const char **path,
					  int *dirfd)
{
	switch (in->nr) {
	case __NR_open_x86_64:
	case __NR_creat_x86_64:
		*path = (const char *)in->args[0];
		*dirfd = AT_FDCWD_VALUE;
		return true;
	case __NR_openat_x86_64:
	case __NR_openat2_x86_64:
		*path = (const char *)in->args[1];
		*dirfd = (int)in->args[0];
		return true;
	}
	return false;
}

/* "cuda" (libcudart, libcuda, libtorch_cuda, ...), "cupti" (CUPTI, gpuspy's bridge) or
 * "torch" (libtorch_cpu and the like, whose operators op_probes.c probes). */
static __always_inline bool mentions_cuda(const char *s)
{
	for (int i = 0; i + 4 < GS_PATH_MAX; i++) {
		if (!s[i])
			return false;
		if (s[i] == 't' && s[i + 1] == 'o' && s[i + 2] == 'r' && s[i + 3] == 'c' &&
		    s[i + 4] == 'h')
			return true;
		if (s[i] != 'c' || s[i + 1] != 'u')
			continue;
		if (s[i + 2] == 'd' && s[i + 3] == 'a')
			return true;
		if (s[i + 2] == 'p' && s[i + 3] == 't' && s[i + 4] == 'i')
			return true;
	}
	return false;
}

/* A CUDA library (or one linking CUDA statically, which has "cuda" in its name in practice)
 * or a PyTorch one may be about to be mapped: ask cuda.bpf.c to hold the process for probing
 * once ld.so is done mapping. Without the path (ring buffer full) assume it might be. */
static __always_inline void note_cuda_open(__u32 tgid, const char *name)
{
	__u8 one = 1;

	/* a full map: the library's dlopen will run on before it is probed, as with a full ring */
	if ((!name || mentions_cuda(name)) &&
	    bpf_map_update_elem(&cuda_opened, &tgid, &one, BPF_ANY))
		count_loss(GS_LOSS_LIBS_NOT_HELD);
}

/* Every successful open names its fd at once: a file opened, read and closed between two
 * ring-buffer polls could not be named from /proc afterwards. */
static __always_inline void emit_open_name(__u32 tgid, __u32 tid, struct gs_syscall_inflight *in,
					   long ret)
{
	struct gs_fd_name *rec;
	const char *path;
	int dirfd;

	if (ret < 0 || !open_path_arg(in, &path, &dirfd))
		return;
	rec = reserve_record(sizeof(*rec) + GS_PATH_MAX, GS_LOSS_RINGBUF_FD_NAME);
	if (!rec) {
		note_cuda_open(tgid, NULL);
		return;
	}
	fill_hdr(&rec->hdr, GS_REC_FD_NAME, sizeof(*rec) + GS_PATH_MAX, tgid, tid, in->start_ns);
	rec->fd = (__u32)ret;
	rec->dirfd = dirfd;
	rec->ino = fd_inode((__u64)ret);
	if (bpf_probe_read_user_str(rec->name, GS_PATH_MAX, path) < 0)
		rec->name[0] = '\0';
	note_cuda_open(tgid, rec->name);
	submit_record(rec);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(osrt_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct task_struct *task;
	struct gs_syscall_inflight *in;

	if (id == __NR_uretprobe_x86_64)
		return 0;
	if (!is_traced(tgid, tid)) {
		if (!launch_tgid || tid != launch_tgid || id != __NR_execve_x86_64)
			return 0;
		start_tracing(tgid, tid);
	}
	task = bpf_get_current_task_btf();
	in = bpf_task_storage_get(&inflight_by_task, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!in)
		return 0;
	in->nr = id;
	/* a tp_btf argument is a trusted pointer: plain loads, no probe_read helper calls */
	in->args[0] = regs->di;
	in->args[1] = regs->si;
	in->args[2] = regs->dx;
	in->start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(osrt_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 id = bpf_get_current_pid_tgid(), now, dur;
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct gs_syscall_inflight *in;

	/* Untraced processes leave here, at the cost of a bit test. A process's bit is cleared
	 * only once its last thread has exited, so no traced call is still in flight then. */
	if (follow && !trace_all && !tgid_traced(tgid))
		return 0;
	/* the uretprobe trampoline's syscall: one per probed CUDA call, skipped before any lookup
	 */
	if (regs->orig_ax == __NR_uretprobe_x86_64)
		return 0;
	in = bpf_task_storage_get(&inflight_by_task, bpf_get_current_task_btf(), 0, 0);
	if (!in || in->nr < 0)
		return 0;
	now = bpf_ktime_get_ns();
	dur = now - in->start_ns;
	account_syscall(in, tgid, tid, (__u32)in->nr, dur);
	if (dur >= span_threshold_ns)
		emit_span(tgid, tid, in, dur, ret);
	if (dur >= py_stack_min_ns)
		py_stack_emit(GS_PY_AT_SYSCALL, in->start_ns, now);
	emit_open_name(tgid, tid, in, ret);
	in->nr = -1;
	return 0;
}

/* A path to look at, from the open call's arguments: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[GS_PATH_MAX]);
} path_scratch SEC(".maps");

/*
 * Counts without time, for `gpuspy serve` (its default): attached instead of osrt_sys_enter and
 * osrt_sys_exit, this program alone adds one to the call's statistics and never reads the
 * clock, so a syscall costs one tracepoint dispatch, the task storage lookup and, in a slot,
 * an array index (a hash lookup where no slot was free). Exact per-call time
 * needs a clock read at both ends, which alone costs more than the empty enter and exit
 * programs together on the VMs measured (docs/BENCHMARKS.md). The key's total time stays 0.
 * An open whose path mentions CUDA is noted at entry, whether it succeeds or not, so a library
 * loaded later is still held for probing (cuda.bpf.c).
 */
SEC("tp_btf/sys_enter")
int BPF_PROG(osrt_sys_count, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0;
	struct gs_syscall_stats_key key = {.pid = tgid, .tid = tid, .nr = (__u32)id};
	struct gs_syscall_stats_val *v;
	struct gs_syscall_inflight *in;
	const char *path = NULL;
	char *name;

	if (id == __NR_uretprobe_x86_64)
		return 0;
	if (!is_traced(tgid, tid)) {
		if (!launch_tgid || tid != launch_tgid || id != __NR_execve_x86_64)
			return 0;
		start_tracing(tgid, tid);
	}
	/* the thread's table says where its count of `id` is (stats_of), and remembers it for
	 * the flush at exit */
	in = bpf_task_storage_get(&inflight_by_task, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!in)
		return 0;
	in->nr = -1; /* no call is timed */
	v = stats_of(in, &key);
	if (v)
		v->sums.count++; /* keys are per thread: one CPU at a time */
	if (id == __NR_open_x86_64 || id == __NR_creat_x86_64)
		path = (const char *)regs->di;
	else if (id == __NR_openat_x86_64 || id == __NR_openat2_x86_64)
		path = (const char *)regs->si;
	if (!path)
		return 0;
	name = bpf_map_lookup_elem(&path_scratch, &zero);
	if (name && bpf_probe_read_user_str(name, GS_PATH_MAX, path) < 0)
		name = NULL;
	note_cuda_open(tgid, name);
	return 0;
}

/* The exiting thread: its stat_slot table and its ids. */
struct exit_flush {
	struct gs_syscall_inflight *in;
	__u32 tgid, tid;
	__u64 ts;
};

/* A statistics value to the loader as the thread's final totals; false with the ring full. */
static __always_inline bool send_final(const struct exit_flush *f, __u32 nr,
				       const struct gs_syscall_stats_val *v)
{
	struct gs_syscall_final *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);

	if (!rec)
		return false;
	fill_hdr(&rec->hdr, GS_REC_SYSCALL_FINAL, sizeof(*rec), f->tgid, f->tid, f->ts);
	rec->hdr.flags = GS_STATS_FINAL;
	rec->nr = nr;
	rec->pad = 0;
	__builtin_memcpy(&rec->val, v, sizeof(rec->val));
	submit_record(rec);
	return true;
}

/* A slot's statistics out, the slot zeroed and free again. */
static __always_inline void flush_slot(const struct exit_flush *f, __u32 nr, __u32 idx)
{
	struct gs_syscall_slot *slot = bpf_map_lookup_elem(&syscall_slots, &idx);

	if (!slot || !send_final(f, nr, &slot->val))
		return;
	slot->key.pid = 0;
	__builtin_memset(&slot->val, 0, sizeof(slot->val));
	bpf_map_push_elem(&free_slots, &idx, 0);
}

/* One syscall's statistics of the exiting thread to the loader, out of its slot or key. With
 * the ring buffer full they stay, and the next checkpoint finds the thread gone and carries
 * them: nothing is lost. Either way the thread's table forgets them (see osrt_thread_exec). */
static long flush_syscall_stats(__u32 nr, void *data)
{
	struct exit_flush *f = data;
	struct gs_syscall_stats_key key = {.pid = f->tgid, .tid = f->tid, .nr = nr};
	struct gs_syscall_stats_val *v;
	__u16 *where = stat_slot_of(f->in, nr), at;

	if (!where)
		return 1;
	at = *where;
	if (at == GS_STAT_NONE)
		return 0;
	*where = GS_STAT_NONE;
	if (at != GS_STAT_IN_HASH) {
		flush_slot(f, nr, at - 1);
		return 0;
	}
	v = bpf_map_lookup_elem(&syscall_stats, &key);
	if (v && send_final(f, nr, v))
		bpf_map_delete_elem(&syscall_stats, &key);
	return 0;
}

static __always_inline void flush_thread(struct gs_syscall_inflight *in, __u32 tgid, __u32 tid)
{
	struct exit_flush f = {.in = in, .tgid = tgid, .tid = tid, .ts = bpf_ktime_get_ns()};

	bpf_loop(NR_TRACKED, flush_syscall_stats, &f, 0);
}

/* A thread's statistics leave the maps when it exits, so process churn (shell loops, respawned
 * workers, hours of -a) never fills them: the loader writes them as final totals. Only the
 * exiting thread ever updated them, so they are complete here. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(osrt_thread_exit, struct task_struct *p, bool group_dead)
{
	struct gs_syscall_inflight *in = bpf_task_storage_get(&inflight_by_task, p, 0, 0);

	if (in)
		flush_thread(in, p->tgid, p->pid);
	return 0;
}

/* A thread other than the leader that calls execve takes the leader's tid. Its statistics so
 * far are keyed by its old tid: they end here, as at an exit, and it starts anew under the new
 * one. Its table must not keep pointing at slots the loader frees once the old tid is gone. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(osrt_thread_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct gs_syscall_inflight *in;

	if (old_pid == p->pid)
		return 0;
	in = bpf_task_storage_get(&inflight_by_task, p, 0, 0);
	if (in)
		flush_thread(in, p->tgid, (__u32)old_pid);
	return 0;
}
