/* SPDX-License-Identifier: MIT */
/*
 * Maps and helpers every gpuspy BPF component shares. Each component is its own object and
 * skeleton; the loader creates these maps once (with the first skeleton) and hands the same fds
 * to the others through bpf_map__reuse_fd(), so all components feed one ring buffer and agree
 * on one set of traced processes.
 */
#ifndef GPUSPY_COMMON_BPF_H
#define GPUSPY_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "records.h"

/* Set by the loader before load. */
const volatile bool trace_all = false; /* -a: every process but gpuspy itself */
const volatile bool follow = true;     /* filter by process (all threads, children added) */
const volatile __u32 self_tgid = 0;
/* `record -- CMD`: the forked child, traced from its first execve on, so the launcher's own
 * pre-exec syscalls are not attributed to the command */
const volatile __u32 launch_tgid = 0;
/* wake the reader only once this much is pending: a wakeup per record costs more than the
 * record itself, and the loader polls with a short timeout anyway */
const volatile __u64 wakeup_bytes = 1 << 20;
/* capture Python stacks in the processes of py_procs (off with --no-python) */
const volatile bool py_stacks = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by the loader */
} events SEC(".maps");

/* Processes traced with `follow`: every thread of these tgids, one bit per pid (word
 * tgid / 64, bit tgid % 64). A bit test is a few instructions where a hash lookup costs
 * ~20 ns, and every syscall and context switch on the host asks; it can never fill up. The
 * loader sets bits through mmap, BPF with atomic or/and, so neither loses the other's. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, GS_PID_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} traced_pids SEC(".maps");

/* Threads traced without `follow` (--no-follow): exactly the threads that existed at start. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} traced_tids SEC(".maps");

/* Processes that opened a file with "cuda" in its path since ld.so last finished mapping
 * objects: only their next RT_CONSISTENT stop is worth holding them for probing (cuda.bpf.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} cuda_opened SEC(".maps");

/* Processes whose Python stacks are captured, with their interpreter's layout (the loader
 * fills it once it has checked the layout: bpf/py_stack.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct gs_py_offsets);
} py_procs SEC(".maps");

/* Processes held stopped for the loader (records.h: struct gs_hold_key). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GS_HELD_MAX);
	__type(key, struct gs_hold_key);
	__type(value, struct gs_op_unwind);
} held_procs SEC(".maps");

/* Notes a hold before the SIGSTOP is sent: 0, or nonzero when the map is full (then the
 * process must not be held, since no watchdog would know of it). */
static __always_inline int hold_note(const struct gs_op_unwind *what)
{
	struct gs_hold_key key = {.tgid = what->hdr.pid, .tid = what->hdr.tid, .ts = what->hdr.ts};

	return bpf_map_update_elem(&held_procs, &key, what, BPF_NOEXIST);
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GS_LOSS_NKINDS);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps");

static __always_inline void count_loss(__u32 kind)
{
	__u64 *n = bpf_map_lookup_elem(&losses, &kind);

	if (n)
		*n += 1;
}

/* The traced_pids word holding `tgid`'s bit, NULL beyond the kernel's pid limit. */
static __always_inline __u64 *traced_word(__u32 tgid)
{
	__u32 word = tgid / 64;

	return bpf_map_lookup_elem(&traced_pids, &word);
}

static __always_inline bool tgid_traced(__u32 tgid)
{
	__u64 *bits = traced_word(tgid);

	return bits && (*bits >> (tgid % 64)) & 1;
}

/* 0, or -1 when the pid is beyond the map (never, with the kernel's PID_MAX_LIMIT). */
static __always_inline int set_tgid_traced(__u32 tgid, bool traced)
{
	__u64 *bits = traced_word(tgid), bit = 1ULL << (tgid % 64);

	if (!bits)
		return -1;
	if (traced)
		__sync_fetch_and_or(bits, bit);
	else
		__sync_fetch_and_and(bits, ~bit);
	return 0;
}

static __always_inline bool is_traced(__u32 tgid, __u32 tid)
{
	if (tgid == self_tgid)
		return false;
	if (trace_all)
		return tgid != 0; /* never the idle tasks */
	if (follow)
		return tgid_traced(tgid);
	return bpf_map_lookup_elem(&traced_tids, &tid) != NULL;
}

static __always_inline void start_tracing(__u32 tgid, __u32 tid)
{
	__u8 one = 1;

	if (follow)
		set_tgid_traced(tgid, true);
	else
		bpf_map_update_elem(&traced_tids, &tid, &one, BPF_ANY);
}

static __always_inline bool current_is_traced(void)
{
	__u64 id = bpf_get_current_pid_tgid();

	return is_traced(id >> 32, (__u32)id);
}

static __always_inline void fill_hdr(struct gs_hdr *h, __u16 type, __u16 size, __u32 tgid,
				     __u32 tid, __u64 ts)
{
	h->type = type;
	h->size = size;
	h->pid = tgid;
	h->tid = tid;
	h->flags = 0;
	h->ts = ts;
}

/* Reserve a record of `size` bytes, counting the loss under `loss_kind` when the ring is full. */
static __always_inline void *reserve_record(__u64 size, __u32 loss_kind)
{
	void *rec = bpf_ringbuf_reserve(&events, size, 0);

	if (!rec)
		count_loss(loss_kind);
	return rec;
}

static __always_inline void submit_record(void *rec)
{
	__u64 pending = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	bpf_ringbuf_submit(rec, pending >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

#endif /* GPUSPY_COMMON_BPF_H */
