/* SPDX-License-Identifier: MIT */
/* Which processes a recording traces. */
#ifndef GPUSPY_RECORD_TARGETS_H
#define GPUSPY_RECORD_TARGETS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "loader/record/recorder.h"

/* Registers the -p pids (with their existing descendants) in BPF's traced set, or with -a
 * names every process; writes the names of what is traced. */
int recorder_add_targets(struct recorder *r);

#endif /* GPUSPY_RECORD_TARGETS_H */
