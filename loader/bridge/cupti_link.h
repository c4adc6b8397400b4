/* SPDX-License-Identifier: MIT */
/*
 * The link to CUPTI bridges (cupti_bridge/) in traced processes: attaching the bridge's
 * gpuspy:records USDT probe turns it on (its semaphore), the batches it sends are unpacked
 * into the trace, and at the end gpuspy:flushed is attached so every bridge delivers what it
 * still holds before the probes go.
 */
#ifndef GPUSPY_CUPTI_LINK_H
#define GPUSPY_CUPTI_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/records.h"

struct cupti_bpf;
struct link_batch;
struct cupti_link;
struct pid_list;
struct trace_writer;

/* Polls the ring buffer for up to `timeout_ms`; what cupti_link_flush() waits with. */
typedef int (*cupti_poll_fn)(void *ctx, int timeout_ms);

int cupti_link_new(struct cupti_bpf *skel, struct trace_writer *w, bool quiet,
		   struct cupti_link **out);
/* Whether a mapped file is a gpuspy CUPTI bridge (by name, then by its USDT semaphore); the
 * PyTorch observer is not (torch_observer.h). */
bool cupti_link_is_bridge(const char *host_path);
/* Attaches to a bridge file (`host_path` under /proc/PID/root; `file_key` tells files apart)
 * in process `pid` only, so other processes that map the same bridge stay untouched, or in
 * every process (-1, for -a). Once per (file, pid). 0 or -errno. */
int cupti_link_attach(struct cupti_link *cl, const char *host_path, uint64_t file_key, pid_t pid);
/* For a live view (top, serve): the bridges attached from now on are not asked for their
 * per-call records (gpuspy:call_records: CUDA API, synchronisation, overhead, copy and memset
 * records, NVTX ranges), which the views do not show; only kernels and devices. */
void cupti_link_set_live(struct cupti_link *cl);
/* Pauses the bridges' kernel records (gpuspy:kernels_paused's semaphore), in every bridge
 * attached now and later, or lets them go on: a live view's --gpu-sample duty cycle. */
void cupti_link_pause_kernels(struct cupti_link *cl, bool paused);
/* Raises the PyTorch observer's `gpuspy_torch:shapes` semaphore in `pid` (its file at
 * `host_path`) until detach, so that it records input shapes: before cupti_link_attach(),
 * since the observer reads it when it turns itself on. 0 or -errno. */
int cupti_link_want_shapes(struct cupti_link *cl, const char *host_path, pid_t pid);
/* A GS_REC_GPU_BATCH from BPF: its records are checked and written with the batch's pid. */
/* gpuspy itself started the library of `stream` (GS_GPU_BATCH_STREAM_*: the bridge, or the
 * PyTorch observer, which speaks the same protocol) in `pid` (bridge_inject.h): its flush
 * answer is awaited even if its ACTIVE status has not arrived yet. 0 or -ENOMEM. */
int cupti_link_expect(struct cupti_link *cl, pid_t pid, uint32_t stream);
/* Whether that library in `pid` said ACTIVE (its recording is on) and not INACTIVE since. */
bool cupti_link_is_active(const struct cupti_link *cl, pid_t pid, uint32_t stream);
int cupti_link_on_batch(struct cupti_link *cl, const struct gs_hdr *batch);
/* Asks every bridge to deliver all it holds and waits (polling) until each active one has
 * said so, or `timeout_ms` passed. */
void cupti_link_flush(struct cupti_link *cl, cupti_poll_fn poll, void *ctx, int timeout_ms);
/* Sequence gaps seen so far (batches a bridge sent that never arrived). */
uint64_t cupti_link_gaps(const struct cupti_link *cl);
/* Exited processes (record_exit.h): their bridge probes are detached (a uprobe and an fd
 * each) and their sequence and flush state forgotten. */
void cupti_link_forget(struct cupti_link *cl, const struct pid_list *dead);
/* Per-process entries kept: attachments to one process's bridge, bridge states. */
size_t cupti_link_tracked(const struct cupti_link *cl);
/* Hands the bridges' probes to `batch` to detach (NULL: detached here). */
void cupti_link_detach(struct cupti_link *cl, struct link_batch *batch);
void cupti_link_free(struct cupti_link *cl);

#endif /* GPUSPY_CUPTI_LINK_H */
