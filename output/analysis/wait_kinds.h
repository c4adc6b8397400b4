/* SPDX-License-Identifier: MIT */
/*
 * The kinds of stall gpuspy names (the steps breakdown, the stalls report, top's wait column),
 * and how one interval of a training loop's thread is sorted into them from what the trace
 * says of it: the CUDA call it was in, its syscall, its off-CPU reason, and whether Python was
 * in the DataLoader. One table, so that every view sorts time the same way.
 */
#ifndef GPUSPY_WAIT_KINDS_H
#define GPUSPY_WAIT_KINDS_H

#include <stdbool.h>
#include "output/trace/cuda_api.h"

enum stall_kind {
	STALL_INPUT_WAIT,     /* waiting for data: the DataLoader's queue, reads of files/pipes */
	STALL_IO_WAIT,	      /* uninterruptible (disk) I/O */
	STALL_HOST_COMPUTE,   /* on CPU: Python, operators, the kernel on its behalf */
	STALL_SYNC_WAIT,      /* in a CUDA synchronisation or blocking copy, the GPU then idle */
	STALL_LAUNCH_BOUND,   /* on CPU launching many short kernels the GPU finishes at once */
	STALL_CPU_CONTENTION, /* runnable, but another thread had the CPU */
	STALL_LOCK_WAIT,      /* futex: a lock, condition or join */
	STALL_GPU_BOUND,      /* waiting for a GPU that stays busy: the good case */
	STALL_OTHER_WAIT,     /* any other off-CPU wait: sleeps, polls, sockets */
	STALL_NKINDS,
};

/* "input_wait", "io_wait", ... */
const char *stall_kind_name(enum stall_kind k);

/* What an interval of a thread was in, as far as the trace tells. */
struct wait_context {
	bool in_cuda_sync;   /* inside a CUDA call that blocks until the GPU is done */
	bool in_syscall;     /* inside a syscall span */
	unsigned syscall_nr; /* ... this one */
	bool off_cpu;	     /* off CPU ... */
	unsigned reason;     /* ... for this enum gs_offcpu_reason */
	bool in_data_loader; /* a Python frame of the DataLoader (torch.utils.data) on the stack */
};

/* The kind of an interval. GPU-bound and launch-bound are decided over whole steps (the GPU's
 * side of the step), never from one interval: an interval in a sync is STALL_SYNC_WAIT and
 * on-CPU time STALL_HOST_COMPUTE until the step says otherwise. */
enum stall_kind wait_kind_of(const struct wait_context *c);

/* Whether a CUDA call blocks the calling thread until the GPU has finished earlier work:
 * device, stream and event synchronisations and the synchronous copies (as `.item()`). */
bool wait_cuda_blocks(const struct gs_cuda_probe *p);

/* Whether a syscall reads input: read, pread64, readv, preadv(2), recv*. */
bool wait_syscall_reads(unsigned nr);

/* Whether a Python source file is the DataLoader's (torch/utils/data/). */
bool wait_file_is_data_loader(const char *filename);

#endif /* GPUSPY_WAIT_KINDS_H */
