/* SPDX-License-Identifier: MIT */
/* The syscall_slots array of bpf/osrt.bpf.c, where most threads' syscall statistics live while
 * recording: how many slots a session gets, their free list, and their checkpoints. */
#ifndef GPUSPY_STAT_SLOTS_H
#define GPUSPY_STAT_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

struct trace_writer;
struct gs_syscall_slot;

/* Slots for a session of `max_stat_keys` statistics entries, timed or counted only; the hash
 * gets the rest. None when the maps are taken (step windows delete hash keys; a slot stays its
 * thread's until it exits). */
uint32_t stat_slots_count(uint32_t max_stat_keys, bool taken);
/* Pushes slots 0..n-1 onto the free list. 0 or -errno. */
int stat_slots_free_all(int free_fd, uint32_t n);
/* A checkpoint of every slot in use; with `sweep`, a slot whose thread has exited (BPF could
 * not flush it, ring buffer full) is written as final totals and freed. 0 or -errno. */
int stat_slots_dump(struct gs_syscall_slot *slots, int free_fd, uint32_t n, struct trace_writer *w,
		    uint64_t ts, bool sweep);
/* The `n` slots of the syscall_slots map `slots_fd`, mapped into gpuspy (the map is
 * BPF_F_MMAPABLE); NULL with errno set. */
struct gs_syscall_slot *stat_slots_map(int slots_fd, uint32_t n);
void stat_slots_unmap(struct gs_syscall_slot *slots, uint32_t n);

#endif /* GPUSPY_STAT_SLOTS_H */
