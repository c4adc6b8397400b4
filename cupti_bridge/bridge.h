/* SPDX-License-Identifier: MIT */
/*
 * Internal interfaces of gpuspy's CUPTI bridge (libgpuspy_cupti.so). See README.md in this
 * folder for the design: a USDT semaphore gates everything, records are converted into
 * bpf/records.h structs and handed to gpuspy in batches through one USDT probe.
 */
#ifndef GPUSPY_BRIDGE_H
#define GPUSPY_BRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include "records.h"

#define BRIDGE_EXPORT __attribute__((visibility("default")))

/* Largest single record: a kernel (or NVTX, status) record with a GS_GPU_NAME_MAX name. */
#define BRIDGE_REC_MAX (sizeof(struct gs_gpu_kernel) + GS_GPU_NAME_MAX)

/* A record being built: aligned for any gs_* struct, big enough for the largest. */
union bridge_rec {
	struct gs_hdr hdr;
	__u64 align;
	unsigned char bytes[BRIDGE_REC_MAX];
};

uint64_t bridge_now_ns(void); /* CLOCK_MONOTONIC, what BPF's bpf_ktime_get_ns() reads */
uint32_t bridge_getpid(void);
uint32_t bridge_gettid(void);
void bridge_forget_ids(void); /* in a forked child: its pid, and the forking thread's tid */

/* Fills hdr (type, pid, tid, ts; flags 0), appends `name` (NUL-terminated, cut to
 * GS_GPU_NAME_MAX) after the `fixed`-byte struct and zero-pads to 8: returns the record's
 * size, also in hdr.size. NULL `name`: the record has no name, it is its struct alone. */
size_t bridge_rec_finish(union bridge_rec *r, __u16 type, size_t fixed, uint32_t tid, uint64_t ts,
			 const char *name);

/* usdt.c: the two probes and their semaphores. */
int usdt_recorder_attached(void);
/* Whether gpuspy:records' site holds a breakpoint now (1 too where the site cannot be told):
 * the semaphore rises before the kernel writes it, so a recorder is there only once both. */
int usdt_records_armed(void);
/* The semaphore is up and the breakpoint there, or the semaphore has stayed up without one
 * for a few calls: what the control threads act on (one call per poll). */
int usdt_recorder_ready(void);
int usdt_flush_requested(void);
/* gpuspy:kernels_paused is attached: a live view samples kernels and this is not a window. */
int usdt_kernels_paused(void);
void usdt_kernels_paused_site(void);
/* gpuspy:call_records is attached: a recorder (not only live views) wants per-call records. */
int usdt_call_records(void);
void usdt_call_records_site(void);
void usdt_fire_records(const void *batch, size_t len);
void usdt_fire_flushed(unsigned long generation);

/* batch.c: the one batch being filled; every function is thread-safe. */
void batch_add(const struct gs_hdr *rec);
/* Sends the pending batch (when a recorder is attached; else it is dropped). */
void batch_send(void);
/* Appends `rec` and sends, with nothing else in between; returns the batch's sequence
 * number, 0 when it could not be sent. */
uint64_t batch_add_send(const struct gs_hdr *rec);
/* Forgets the pending batch: records a late NVTX call added after its session ended. */
void batch_discard(void);
/* Forgets the pending batch and the sequence (a forked child is a new process). */
void batch_reset_child(void);

/* status.c: GS_REC_BRIDGE_STATUS records and the loss counters they carry. */
void status_add_dropped(uint64_t n);
void status_add_lost(uint64_t n);
/* Builds a status record in `r`, for a caller that must send it in a particular way. */
__attribute__((format(printf, 4, 5))) void status_make(union bridge_rec *r, uint32_t state,
						       int cupti_result, const char *fmt, ...);
/* Builds one and adds it to the batch. */
__attribute__((format(printf, 3, 4))) void status_emit(uint32_t state, int cupti_result,
						       const char *fmt, ...);

/* clock.c: CUPTI clock -> CLOCK_MONOTONIC. */
int clock_calibrate(void); /* 0, or the failing CUptiResult; emits GS_REC_GPU_CLOCK */
uint64_t clock_to_mono(uint64_t cupti_ts);

/* activity.c: the CUPTI side, driven by the control thread (bridge.c). */
enum activity_start_result {
	ACTIVITY_STARTED = 0,
	ACTIVITY_BUSY = 1,   /* another CUPTI subscriber */
	ACTIVITY_FAILED = 2, /* a CUPTI error; a status record says which */
};
/* `calls`: the per-call kinds too (gpuspy:call_records). */
enum activity_start_result activity_start(int calls);
void activity_flush(int forced);
/* Kernel records on or off (CONCURRENT_KERNEL), the other kinds untouched; only while
 * started. */
void activity_set_kernels(int on);
/* The per-call kinds (API, synchronisation, overhead, copies, memsets) on or off. */
void activity_set_calls(int on);
void activity_stop(void);

/* convert.c: one CUPTI record into the batch, unless `keep` is 0 or it began before
 * `floor_cupti` (CUPTI's clock); either way CUPTI's allocations in it are freed. */
void convert_record(const void *cupti_record, uint64_t floor_cupti, int keep);

/* nvtx_ranges.c (the NVTX entry points, nvtx.c, use nvtx_ranges.h) */
void nvtx_open(uint64_t session); /* record NVTX calls from now on, as `session` */
void nvtx_close(void);		  /* stop, and forget start/end ranges still open */
void nvtx_reset_child(void);

/* bridge.c: starts the control thread (once) and looks at the semaphores at once, so a
 * recorder already attached is served before the caller returns; `from_cuda`: called by
 * the CUDA driver, so CUPTI may be used from now on. */
void bridge_start(int from_cuda);

/* debug_log.c: a line to $GPUSPY_CUPTI_LOG, when set. */
void debug_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* GPUSPY_BRIDGE_H */
