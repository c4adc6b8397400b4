/* SPDX-License-Identifier: MIT */
/* What a recording writes into its trace file besides the BPF records. */
#ifndef GPUSPY_RECORD_TRACE_H
#define GPUSPY_RECORD_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "loader/record/recorder.h"

/* Creates the trace file with its header and TRACE_INFO record; prints why on failure. */
int recorder_open_trace(struct recorder *r, uint64_t now);
/* The TRACE_INFO record (settings and command line); `now` is the recording's start. */
int recorder_write_trace_info(struct recorder *r, uint64_t now);
/* The loss counters now; LOSS records count from r->loss_base (a step window's start). */
void recorder_read_losses(struct recorder *r, struct loss_counts *out);
/* Writes the loss counters (a cumulative LOSS record); `warn` prints each nonzero one. */
int recorder_write_losses(struct recorder *r, uint64_t ts, bool warn);
/* ... as they were when `now` was read. */
int recorder_write_loss_counts(struct recorder *r, const struct loss_counts *now, uint64_t ts,
			       bool warn);
/* A thread's name as a COMM record; a procfs_thread_fn. */
int recorder_write_comm(void *recorder, pid_t pid, pid_t tid, const char *comm);

#endif /* GPUSPY_RECORD_TRACE_H */
