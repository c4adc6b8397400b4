// SPDX-License-Identifier: MIT
/* Sorting a thread's time into stall kinds (wait_kinds.h). */
#include <string.h>
#include <sys/syscall.h>
#include "lib/syscall_class.h"
#include "output/analysis/wait_kinds.h"

const char *stall_kind_name(enum stall_kind k)
{
	static const char *const names[STALL_NKINDS] = {
	    [STALL_INPUT_WAIT] = "input_wait",	   [STALL_IO_WAIT] = "io_wait",
	    [STALL_HOST_COMPUTE] = "host_compute", [STALL_SYNC_WAIT] = "sync_wait",
	    [STALL_LAUNCH_BOUND] = "launch_bound", [STALL_CPU_CONTENTION] = "cpu_contention",
	    [STALL_LOCK_WAIT] = "lock_wait",	   [STALL_GPU_BOUND] = "gpu_bound",
	    [STALL_OTHER_WAIT] = "other_wait",
	};

	return k < STALL_NKINDS ? names[k] : "?";
}

bool wait_cuda_blocks(const struct gs_cuda_probe *p)
{
	switch (p ? p->cls : GS_CUDA_STREAM_WAIT_EVENT) {
	case GS_CUDA_SYNC_DEVICE:
	case GS_CUDA_SYNC_STREAM:
	case GS_CUDA_SYNC_EVENT:
	case GS_CUDA_MEMCPY_RT: /* the synchronous copies wait for the stream's earlier work */
	case GS_CUDA_MEMCPY_DRV:
	case GS_CUDA_MEMCPY_HTOD:
	case GS_CUDA_MEMCPY_DTOH:
	case GS_CUDA_MEMCPY_DTOD:
		return true;
	default:
		return false;
	}
}

bool wait_syscall_reads(unsigned nr)
{
	switch (nr) {
	case SYS_read:
	case SYS_pread64:
	case SYS_readv:
	case SYS_preadv:
	case SYS_preadv2:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
		return true;
	default:
		return false;
	}
}

bool wait_file_is_data_loader(const char *filename)
{
	return filename && strstr(filename, "torch/utils/data/");
}

/* Off-CPU time by its reason, when nothing above it says more. */
static enum stall_kind off_cpu_kind(const struct wait_context *c)
{
	if (c->reason == GS_OFFCPU_PREEMPTED)
		return STALL_CPU_CONTENTION;
	if (c->reason == GS_OFFCPU_BLOCKED)
		return STALL_IO_WAIT;
	return STALL_OTHER_WAIT;
}

enum stall_kind wait_kind_of(const struct wait_context *c)
{
	/* runnable is never a wait for anything but the CPU, whatever call it is in */
	if (c->off_cpu && c->reason == GS_OFFCPU_PREEMPTED)
		return STALL_CPU_CONTENTION;
	if (c->in_cuda_sync)
		return STALL_SYNC_WAIT;
	if (c->in_data_loader && (c->off_cpu || c->in_syscall))
		return STALL_INPUT_WAIT;
	if (c->in_syscall && wait_syscall_reads(c->syscall_nr)) {
		if (c->off_cpu && c->reason == GS_OFFCPU_BLOCKED)
			return STALL_IO_WAIT;
		return STALL_INPUT_WAIT;
	}
	if (c->in_syscall && syscall_class_of(c->syscall_nr) == SC_SYNC)
		return STALL_LOCK_WAIT;
	if (c->off_cpu)
		return off_cpu_kind(c);
	return STALL_HOST_COMPUTE;
}
