/* SPDX-License-Identifier: MIT */
/* Turns the BPF statistics maps into trace records at the end of a recording. */
#ifndef GPUSPY_STATS_DUMP_H
#define GPUSPY_STATS_DUMP_H

#include <stdint.h>

struct trace_writer;

int stats_dump_syscalls(int map_fd, struct trace_writer *w, uint64_t ts);
int stats_dump_offcpu(int map_fd, struct trace_writer *w, uint64_t ts);

#endif /* GPUSPY_STATS_DUMP_H */
