// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include "bpf/records.h"
#include "loader/session/stat_slots.h"
#include "loader/session/stats_dump.h"

uint32_t stat_slots_count(uint32_t max_stat_keys, bool taken, bool counts_only)
{
	uint32_t half = max_stat_keys / 2;

	if (taken || counts_only)
		return 0;
	/* half the entries, so the hash keeps room for threads beyond the slots; capped because
	 * an array is allocated whole (GS_STAT_SLOTS_MAX x 608 bytes = 2.4 MiB) */
	return half < GS_STAT_SLOTS_MAX ? half : GS_STAT_SLOTS_MAX;
}

int stat_slots_free_all(int free_fd, uint32_t n)
{
	for (__u32 i = 0; i < n; i++) {
		if (bpf_map_update_elem(free_fd, NULL, &i, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* A gone thread's slot: nothing updates it any more, so it is zeroed and freed as BPF's
 * exit flush would have. */
static int free_slot(int slots_fd, int free_fd, __u32 idx)
{
	struct gs_syscall_slot zero;

	memset(&zero, 0, sizeof(zero));
	if (bpf_map_update_elem(slots_fd, &idx, &zero, BPF_ANY) ||
	    bpf_map_update_elem(free_fd, NULL, &idx, BPF_ANY))
		return -errno;
	return 0;
}

/* Whether slot `idx` still holds what `seen` read of it (same key), refreshed. */
static bool still_unflushed(int slots_fd, __u32 idx, struct gs_syscall_slot *seen)
{
	struct gs_syscall_slot now;

	if (bpf_map_lookup_elem(slots_fd, &idx, &now) || !now.key.pid ||
	    memcmp(&now.key, &seen->key, sizeof(now.key)))
		return false;
	*seen = now;
	return true;
}

int stat_slots_dump(int slots_fd, int free_fd, uint32_t n, struct trace_writer *w, uint64_t ts,
		    bool sweep)
{
	struct gs_syscall_slot slot;
	int err = 0;

	for (__u32 i = 0; i < n && !err; i++) {
		if (bpf_map_lookup_elem(slots_fd, &i, &slot))
			return -errno;
		if (!slot.key.pid)
			continue; /* free */
		/* only a sweep asks whether the thread is gone (stats_dump.h) */
		if (!sweep || !stats_thread_gone(slot.key.pid, slot.key.tid)) {
			err = stats_write_syscall(w, &slot.key, &slot.val, ts, 0);
			continue;
		}
		/* read again now that the thread is gone: its exit program ran before, and when it
		 * could flush, the slot was zeroed and freed (maybe taken by another thread since)
		 * after the first read: freeing it again would hand it to two threads */
		if (!still_unflushed(slots_fd, i, &slot))
			continue;
		err = stats_write_syscall(w, &slot.key, &slot.val, ts, GS_STATS_FINAL);
		err = err ?: free_slot(slots_fd, free_fd, i);
	}
	return err;
}
