// SPDX-License-Identifier: MIT
#include "output/trace/pid_filter.h"
#include "output/trace/trace_format.h"

/* Records about the recording as a whole: hdr.pid is gpuspy's own or 0. */
static bool belongs_to_no_process(uint16_t type)
{
	switch (type) {
	case GS_REC_TRACE_INFO:
	case GS_REC_LOSS:
	case GS_REC_LOSS_MORE:
	case GS_REC_GPU_LOSS:
	case GS_REC_OP_NAME:
	case GS_REC_TRAILER:
		return true;
	default:
		return false;
	}
}

static bool has_pid(const struct pid_filter *f, uint32_t pid)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->pids[mid] == pid)
			return true;
		if (f->pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

bool pid_filter_keeps(const struct pid_filter *f, const struct gs_hdr *h)
{
	if (!f || belongs_to_no_process(h->type))
		return true;
	/* a fork belongs to both: the child's side names the new process */
	if (h->type == GS_REC_FORK && has_pid(f, ((const struct gs_fork *)h)->child_pid))
		return true;
	return has_pid(f, h->pid);
}
