/* SPDX-License-Identifier: MIT */
/* Turns the BPF statistics maps into trace records: checkpoints of every key while recording
 * and at its end, and an exiting thread's final totals as BPF flushed them. */
#ifndef GPUSPY_STATS_DUMP_H
#define GPUSPY_STATS_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include "bpf/records.h"

struct trace_writer;

/* A checkpoint of every key. With `sweep`, keys of threads gone from /proc (BPF could not flush
 * them at exit) are written as final totals and taken out: one /proc lookup per thread, so a
 * live view sweeps less often than it checkpoints. 0 or -errno. */
int stats_dump_syscalls(int map_fd, struct trace_writer *w, uint64_t ts, bool sweep);
int stats_dump_offcpu(int map_fd, struct trace_writer *w, uint64_t ts, bool sweep);
/* Writes every entry as a checkpoint and deletes it, so that the map counts again from zero:
 * what was counted since the previous take (record --steps keeps these in memory until it
 * knows whether they fall in its window). 0 or -errno. */
int stats_take_syscalls(int map_fd, struct trace_writer *w, uint64_t ts);
int stats_take_offcpu(int map_fd, struct trace_writer *w, uint64_t ts);
/* One statistics key and value as a GS_REC_SYSCALL_STATS record. 0 or -errno. */
int stats_write_syscall(struct trace_writer *w, const struct gs_syscall_stats_key *k,
			const struct gs_syscall_stats_val *v, uint64_t ts, __u32 flags);
/* Whether thread `tid` of `pid` has exited, so that BPF no longer updates its statistics. */
bool stats_thread_gone(__u32 pid, __u32 tid);
/* A GS_REC_SYSCALL_FINAL from BPF, written as a GS_REC_SYSCALL_STATS with GS_STATS_FINAL. */
int stats_write_syscall_final(struct trace_writer *w, const struct gs_syscall_final *rec);

#endif /* GPUSPY_STATS_DUMP_H */
