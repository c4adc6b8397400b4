/* SPDX-License-Identifier: MIT */
/*
 * The observer's records on their way to gpuspy: converted to bpf/records.h's GS_REC_TORCH_OP
 * and GS_REC_TORCH_NAME and sent in GS_REC_GPU_BATCH batches through the same gpuspy:records
 * USDT probe, semaphore-gated, as the CUPTI bridge's (usdt.c, batch.c, status.c and rec.c are
 * built into both libraries). A control thread follows the semaphore.
 */
#ifndef GPUSPY_TORCH_SEND_H
#define GPUSPY_TORCH_SEND_H

#include <stddef.h>

#include "torch_ops.h"

/* init, then the control thread: for a loader that calls in through ptrace and reads no
 * return value. *result: 1 started (or already running), -1 refused (why says why), -2 no
 * thread. */
TORCH_OPS_EXPORT void gpuspy_torch_ops_load_late(const struct gpuspy_torch_syms *syms, int *result,
						 char *why, size_t why_len);
/* Starts the control thread, once: 0, or -1. While gpuspy:records' semaphore is up (seen at
 * two polls in a row, 20 ms apart) the observer is enabled and its records are sent every
 * 20 ms; when it drops, the observer is disabled. A flush request (gpuspy:flushed's
 * semaphore) is answered as the CUPTI bridge answers it: everything pending, a FLUSHED
 * status last, then gpuspy:flushed(that batch's sequence number). */
TORCH_OPS_EXPORT int gpuspy_torch_ops_start_gate(void);
/* The pending records, converted as they would be sent, written whole into out (at most cap
 * bytes): how many bytes. new_session: names are sent again before their next use, as at a
 * new recording. For tests. */
TORCH_OPS_EXPORT size_t gpuspy_torch_ops_convert(void *out, size_t cap, int new_session);

/* Not exported (torch_usdt.c): whether gpuspy_torch:shapes' semaphore is raised, and the
 * probe's site, never called. */
int torch_usdt_shapes_requested(void);
void torch_usdt_shapes_site(void);

#endif
