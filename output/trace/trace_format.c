// SPDX-License-Identifier: MIT
/* What trace_format.h declares: the per-type validation of trace records (the reader's guarantee
 * to every report and exporter) and the names of the format's enums. */
#include <string.h>
#include "output/trace/trace_format.h"

static bool string_terminated(const char *s, size_t max)
{
	return memchr(s, '\0', max) != NULL;
}

static bool stats_valid(const struct gs_hdr *rec)
{
	const struct gs_syscall_stats *s = (const void *)rec;
	size_t need;

	if (rec->size < sizeof(*s) || s->nbuckets > GS_HIST_BUCKETS)
		return false;
	need = sizeof(*s) + (size_t)s->nbuckets * sizeof(s->buckets[0]);
	if (rec->size < need)
		return false;
	for (__u32 i = 0; i < s->nbuckets; i++)
		if (s->buckets[i].bucket >= GS_HIST_BUCKETS)
			return false;
	return true;
}

static bool tail_string_valid(const struct gs_hdr *rec, size_t fixed)
{
	return rec->size > fixed && string_terminated((const char *)rec + fixed, rec->size - fixed);
}

/* The CUPTI bridge's records (unpacked from its batches by the loader) and the loader's GPU
 * loss counters. Enumerated fields (copy kinds, states, NVTX kinds) are not checked: a newer
 * bridge may add values, which readers show as unknown. */
static bool gpu_record_valid(const struct gs_hdr *rec)
{
	switch (rec->type) {
	case GS_REC_GPU_BATCH:
		return rec->size >= sizeof(struct gs_gpu_batch);
	case GS_REC_GPU_KERNEL:
		return tail_string_valid(rec, sizeof(struct gs_gpu_kernel));
	case GS_REC_GPU_MEMCPY:
		return rec->size >= sizeof(struct gs_gpu_memcpy);
	case GS_REC_GPU_MEMSET:
		return rec->size >= sizeof(struct gs_gpu_memset);
	case GS_REC_GPU_API:
		return tail_string_valid(rec, sizeof(struct gs_gpu_api));
	case GS_REC_GPU_SYNC:
		return rec->size >= sizeof(struct gs_gpu_sync);
	case GS_REC_NVTX:
		return tail_string_valid(rec, sizeof(struct gs_nvtx));
	case GS_REC_GPU_CLOCK:
		return rec->size >= sizeof(struct gs_gpu_clock);
	case GS_REC_BRIDGE_STATUS:
		return tail_string_valid(rec, sizeof(struct gs_bridge_status));
	case GS_REC_GPU_OVERHEAD:
		return rec->size >= sizeof(struct gs_gpu_overhead);
	case GS_REC_TORCH_OP:
		return rec->size >= sizeof(struct gs_torch_op);
	case GS_REC_TORCH_NAME:
		return tail_string_valid(rec, sizeof(struct gs_torch_name));
	case GS_REC_GPU_DEVICE:
		return tail_string_valid(rec, sizeof(struct gs_gpu_device));
	case GS_REC_GPU_LOSS:
		return rec->size >= sizeof(struct gs_gpu_loss);
	default:
		return true;
	}
}

/* Python records: a stack's frames must fit its size; a code record's two strings must end
 * where their lengths say, and its line table fit after them. */
static bool py_stack_valid(const struct gs_hdr *rec)
{
	const struct gs_py_stack *s = (const void *)rec;

	return rec->size >= sizeof(*s) && s->nframes <= GS_PY_MAX_FRAMES &&
	       rec->size >= sizeof(*s) + (size_t)s->nframes * sizeof(s->frames[0]);
}

static bool py_code_valid(const struct gs_hdr *rec)
{
	const struct gs_py_code *c = (const void *)rec;
	size_t need;

	if (rec->size < sizeof(*c))
		return false;
	need = sizeof(*c) + (size_t)c->qualname_len + 1 + c->filename_len + 1 + c->linetable_len;
	return rec->size >= need && c->data[c->qualname_len] == '\0' &&
	       c->data[c->qualname_len + 1 + c->filename_len] == '\0' &&
	       !memchr(c->data, '\0', c->qualname_len) &&
	       !memchr(c->data + c->qualname_len + 1, '\0', c->filename_len);
}

bool gs_record_valid(const struct gs_hdr *rec)
{
	if (rec->size < sizeof(*rec) || rec->size % 8)
		return false;
	switch (rec->type) {
	case GS_REC_SYSCALL:
		return rec->size >= sizeof(struct gs_syscall);
	case GS_REC_OFFCPU:
		return rec->size >= sizeof(struct gs_offcpu) &&
		       ((const struct gs_offcpu *)rec)->reason < GS_OFFCPU_NREASONS;
	case GS_REC_FORK:
		return rec->size >= sizeof(struct gs_fork) &&
		       string_terminated(((const struct gs_fork *)rec)->comm, GS_COMM_LEN);
	case GS_REC_EXEC:
		return rec->size >= sizeof(struct gs_exec) &&
		       string_terminated(((const struct gs_exec *)rec)->comm, GS_COMM_LEN) &&
		       string_terminated(((const struct gs_exec *)rec)->filename, GS_FILENAME_LEN);
	case GS_REC_EXIT:
		return rec->size >= sizeof(struct gs_exit) &&
		       string_terminated(((const struct gs_exit *)rec)->comm, GS_COMM_LEN);
	case GS_REC_COMM:
		return rec->size >= sizeof(struct gs_comm) &&
		       string_terminated(((const struct gs_comm *)rec)->comm, GS_COMM_LEN);
	case GS_REC_TRACE_INFO:
		return tail_string_valid(rec, sizeof(struct gs_trace_info));
	case GS_REC_FD_NAME:
		return tail_string_valid(rec, sizeof(struct gs_fd_name));
	case GS_REC_CUDA_CALL:
		return rec->size >= sizeof(struct gs_cuda_call);
	case GS_REC_CUDA_NAME:
		return tail_string_valid(rec, sizeof(struct gs_cuda_name));
	case GS_REC_CUDA_LIB:
		return tail_string_valid(rec, sizeof(struct gs_cuda_lib));
	case GS_REC_SYSCALL_STATS:
		return stats_valid(rec);
	case GS_REC_OFFCPU_STATS:
		return rec->size >= sizeof(struct gs_offcpu_stats);
	case GS_REC_LOSS:
		return rec->size >= sizeof(struct gs_loss);
	case GS_REC_LOSS_MORE:
		return rec->size >= sizeof(struct gs_loss_more);
	case GS_REC_TRAILER:
		return rec->size >= sizeof(struct gs_trailer);
	case GS_REC_PY_STACK:
		return py_stack_valid(rec);
	case GS_REC_PY_CODE:
		return py_code_valid(rec);
	case GS_REC_PY_PROC:
		return tail_string_valid(rec, sizeof(struct gs_py_proc));
	case GS_REC_OP_CALL:
		return rec->size >= sizeof(struct gs_op_call);
	case GS_REC_OP_NAME:
		return tail_string_valid(rec, sizeof(struct gs_op_name));
	case GS_REC_BRIDGE_LOAD:
		return tail_string_valid(rec, sizeof(struct gs_bridge_load));
	case GS_REC_PROC_INFO:
		return tail_string_valid(rec, sizeof(struct gs_proc_info)) &&
		       memchr(((const struct gs_proc_info *)rec)->user, '\0', 32);
	case GS_REC_PROC_ENV:
		return rec->size >= sizeof(struct gs_proc_env);
	default:
		return gpu_record_valid(rec);
	}
}

const char *gs_loss_kind_name(unsigned kind)
{
	static const char *const names[GS_LOSS_NKINDS] = {
	    [GS_LOSS_RINGBUF_SYSCALL] = "syscall spans (ring buffer full)",
	    [GS_LOSS_RINGBUF_OFFCPU] = "off-cpu spans (ring buffer full)",
	    [GS_LOSS_RINGBUF_PROC] = "process events (ring buffer full)",
	    [GS_LOSS_STATS_MAP_FULL] = "statistics (map full: raise --max-stat-keys)",
	    [GS_LOSS_TRACED_MAP_FULL] = "children not followed (traced-process map full)",
	    [GS_LOSS_RINGBUF_FD_NAME] = "file names at open (ring buffer full)",
	    [GS_LOSS_CUDA_CALL] = "CUDA API calls (ring buffer full, or nested deeper than 8)",
	    [GS_LOSS_LIBS_NOT_HELD] =
		"library loads not held for probing (ring/map full, watchdog)",
	    [GS_LOSS_PY_STACK] = "Python stacks (ring buffer full; forks: map full)",
	    [GS_LOSS_PY_SAMPLE] = "CPU samples (ring buffer full)",
	    [GS_LOSS_OP_CALL] = "operator calls (ring full, nested over 32, C++ exception)",
	};

	return kind < GS_LOSS_NKINDS ? names[kind] : "unknown";
}

const char *gs_offcpu_reason_name(unsigned reason)
{
	static const char *const names[GS_OFFCPU_NREASONS] = {
	    [GS_OFFCPU_PREEMPTED] = "preempted",
	    [GS_OFFCPU_SLEEPING] = "sleeping",
	    [GS_OFFCPU_BLOCKED] = "uninterruptible",
	};

	return reason < GS_OFFCPU_NREASONS ? names[reason] : "unknown";
}
