// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bpf/records.h"
#include "loader/session/stat_slots.h"
#include "loader/session/stats_dump.h"

uint32_t stat_slots_count(uint32_t max_stat_keys, bool taken)
{
	uint32_t half = max_stat_keys / 2;

	if (taken)
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

/* The byte size of the mapping: whole pages of slots (an array's values are 8-byte aligned,
 * which gs_syscall_slot's size is). */
static size_t mapped_size(uint32_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return ((size_t)n * sizeof(struct gs_syscall_slot) + page - 1) / page * page;
}

struct gs_syscall_slot *stat_slots_map(int slots_fd, uint32_t n)
{
	void *p = mmap(NULL, mapped_size(n), PROT_READ | PROT_WRITE, MAP_SHARED, slots_fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

void stat_slots_unmap(struct gs_syscall_slot *slots, uint32_t n)
{
	if (slots)
		munmap(slots, mapped_size(n));
}

/* A gone thread's slot: nothing updates it any more, so it is zeroed and freed as BPF's
 * exit flush would have. */
static int free_slot(struct gs_syscall_slot *slot, int free_fd, __u32 idx)
{
	memset(slot, 0, sizeof(*slot));
	return bpf_map_update_elem(free_fd, NULL, &idx, BPF_ANY) ? -errno : 0;
}

/* A copy of a slot in use, false when it is free. Its thread may be counting meanwhile: as
 * with a lookup through bpf(), a copy can be a call short in some field, never corrupt. */
static bool copy_used(const struct gs_syscall_slot *slot, struct gs_syscall_slot *copy)
{
	if (!__atomic_load_n(&slot->key.pid, __ATOMIC_ACQUIRE))
		return false;
	memcpy(copy, slot, sizeof(*copy));
	return copy->key.pid != 0;
}

/* Whether `slot` still holds what `seen` read of it (same key), refreshed. */
static bool still_unflushed(const struct gs_syscall_slot *slot, struct gs_syscall_slot *seen)
{
	struct gs_syscall_slot now;

	if (!copy_used(slot, &now) || memcmp(&now.key, &seen->key, sizeof(now.key)))
		return false;
	*seen = now;
	return true;
}

int stat_slots_dump(struct gs_syscall_slot *slots, int free_fd, uint32_t n, struct trace_writer *w,
		    uint64_t ts, bool sweep)
{
	struct gs_syscall_slot slot;
	int err = 0;

	for (__u32 i = 0; i < n && !err; i++) {
		if (!copy_used(&slots[i], &slot))
			continue; /* free */
		/* only a sweep asks whether the thread is gone (stats_dump.h) */
		if (!sweep || !stats_thread_gone(slot.key.pid, slot.key.tid)) {
			err = stats_write_syscall(w, &slot.key, &slot.val, ts, 0);
			continue;
		}
		/* read again now that the thread is gone: its exit program ran before, and when it
		 * could flush, the slot was zeroed and freed (maybe taken by another thread since)
		 * after the first read: freeing it again would hand it to two threads */
		if (!still_unflushed(&slots[i], &slot))
			continue;
		err = stats_write_syscall(w, &slot.key, &slot.val, ts, GS_STATS_FINAL);
		err = err ?: free_slot(&slots[i], free_fd, i);
	}
	return err;
}
