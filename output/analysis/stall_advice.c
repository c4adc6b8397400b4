// SPDX-License-Identifier: MIT
/* Advice per stall kind (stall_advice.h). */
#include <stdio.h>
#include <string.h>
#include "output/analysis/stall_advice.h"
#include "output/analysis/wait_kinds.h"

/* " at train (x.py:42)", or "" without a place */
static const char *at(const char *where, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", *where ? " at " : "", where);
	return buf;
}

char *stall_advice(uint32_t kind, const char *where, const char *what, const char *cause, bool gpu)
{
	char place[400];
	char *text = NULL;
	int n = -1;

	at(where, place, sizeof(place));
	switch (kind) {
	case STALL_INPUT_WAIT:
		if (strncmp(what, "DataLoader", 10)) { /* a read of its own, no DataLoader */
			n = asprintf(&text,
				     "the loop waits in %s: read ahead (DataLoader workers, a "
				     "prefetching thread), cache the data in memory, or use "
				     "faster storage",
				     what);
			break;
		}
		n = asprintf(&text, "%s%s",
			     "the loop waits for its input: more DataLoader workers (num_workers), "
			     "prefetch_factor, pin_memory=True, or a cheaper __getitem__",
			     strstr(cause, " on ") ? "; the workers wait in reads: faster storage, "
						     "or cache the data in memory"
						   : "");
		break;
	case STALL_IO_WAIT:
		n = asprintf(&text,
			     "%s waits for the disk: read it in DataLoader workers, cache it in "
			     "memory or on faster storage, or read larger blocks",
			     what);
		break;
	case STALL_HOST_COMPUTE:
		n = asprintf(&text,
			     "the CPU work%s %s: move it into DataLoader workers, vectorise "
			     "it (NumPy/torch ops)%s; --report python shows its hot lines",
			     place, gpu ? "keeps the GPU waiting" : "sets the step's pace",
			     gpu ? ", or overlap it with GPU work" : "");
		break;
	case STALL_SYNC_WAIT:
		n = asprintf(&text,
			     "%s%s waits for the GPU, which then idles: remove the "
			     "synchronisation (.item(), .cpu(), printing a tensor) or do it "
			     "every N steps",
			     what, place);
		break;
	case STALL_LAUNCH_BOUND:
		n = asprintf(&text,
			     "many short kernels launched%s: fuse them (torch.compile), "
			     "capture the step in a CUDA graph, or give each kernel more work "
			     "(a larger batch)",
			     place);
		break;
	case STALL_CPU_CONTENTION:
		n = asprintf(&text,
			     "the loop's thread waits for a CPU: give the job CPUs of its own "
			     "(taskset, cgroup cpusets) or run fewer threads "
			     "(torch.set_num_threads, OMP_NUM_THREADS)");
		break;
	case STALL_LOCK_WAIT:
		n = asprintf(&text,
			     "the loop blocks on a lock%s: shorten what the holder does "
			     "while it holds the lock, or move that work out of it",
			     place);
		break;
	case STALL_GPU_BOUND:
		n = asprintf(&text,
			     "the GPU sets the pace (good): for more speed, make its kernels "
			     "faster (mixed precision, fused or tuned kernels)");
		break;
	default:
		n = asprintf(&text, "the loop sleeps in %s%s: check why it waits there", what,
			     place);
	}
	return n < 0 ? NULL : text;
}
