// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GPU activity from the CUPTI bridge (cupti_bridge/): the bridge packs its records into
 * batches of at most GS_GPU_BATCH_MAX bytes and fires its gpuspy:records USDT probe once per
 * batch; this program copies the batch into the ring buffer as it is, so the cost is one trap
 * per batch, never one per GPU record. Attaching the probe is also what turns the bridge on
 * (its USDT semaphore), and attaching gpuspy:flushed asks it to deliver everything.
 */
#include "common.bpf.h"
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

enum gpu_loss_kind {
	GPU_LOSS_BATCHES = 0,
	GPU_LOSS_RECORDS = 1,
	GPU_LOSS_NKINDS = 2,
};

/* Batches (and the records in them) that did not fit in the ring buffer or were malformed. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GPU_LOSS_NKINDS);
	__type(key, __u32);
	__type(value, __u64);
} gpu_losses SEC(".maps");

/* A batch is copied here first: the ring buffer's output helper takes a BPF-side buffer. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, unsigned char[GS_GPU_BATCH_MAX]);
} batch_scratch SEC(".maps");

static __always_inline void count_gpu_loss(__u32 kind, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&gpu_losses, &kind);

	if (v)
		*v += n;
}

static __always_inline int copy_batch(const void *batch, long len)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gs_gpu_batch *b;
	__u32 zero = 0;

	/* no traced-set check: the loader attaches this probe per traced process (every process
	 * with -a), and a bridge may open its session a moment before its process enters the set
	 * (its first batch, the ACTIVE status, tells the loader to await its flush), while its
	 * control thread is never one of the threads --no-follow traces */
	b = bpf_map_lookup_elem(&batch_scratch, &zero);
	if (!b || len < (long)sizeof(*b) || len > GS_GPU_BATCH_MAX ||
	    bpf_probe_read_user(b, len, batch)) {
		count_gpu_loss(GPU_LOSS_BATCHES, 1);
		return 0;
	}
	/* the bridge's getpid() is its pid namespace's: the loader needs the global one */
	b->hdr.pid = id >> 32;
	b->hdr.tid = (__u32)id;
	if (bpf_ringbuf_output(&events, b, len, 0)) {
		count_gpu_loss(GPU_LOSS_BATCHES, 1);
		count_gpu_loss(GPU_LOSS_RECORDS, b->hdr.flags);
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(bridge_records, const void *batch, long len)
{
	return copy_batch(batch, len);
}

/* The same probe as a plain uprobe, where the bridge's USDT note puts (batch, len) in the first
 * two argument registers (loader/bridge/cupti_link.c checks): attached per process, it detaches
 * without libbpf's USDT bookkeeping, so the probes of exited processes can be detached on a
 * thread of their own. */
SEC("uprobe")
int bridge_records_regs(struct pt_regs *ctx)
{
	return copy_batch((const void *)PT_REGS_PARM1(ctx), (long)PT_REGS_PARM2(ctx));
}

/* Attached only for its semaphore, as a uprobe_multi link at a site the loader reads from the
 * file's notes (flush requests, the observer's shapes): such links detach together, in one
 * grace period (loader/session/link_batch.h). */
SEC("uprobe")
int bridge_semaphore(struct pt_regs *ctx)
{
	return 0;
}

/* Attached only for its semaphore (the flush request); the bridge's answer is a
 * GS_BRIDGE_FLUSHED status record in its last batch. */
SEC("usdt")
int BPF_USDT(bridge_flushed, unsigned long generation)
{
	return 0;
}
