/* SPDX-License-Identifier: MIT */
/* The CUPTI bridge of each traced process: found at attach, loaded into running processes, and
 * into processes whose first CUDA call comes later. */
#ifndef GPUSPY_RECORD_BRIDGES_H
#define GPUSPY_RECORD_BRIDGES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "loader/record/recorder.h"

/* A target's CUDA libraries (gs_cuda_lib_role bits) were found at attach: its bridge is noted
 * as present, or it is queued for recorder_load_bridges(). 0 or -ENOMEM/write error. */
int recorder_note_cuda_process(struct recorder *r, pid_t pid, int roles);
/* A target whose maps gpuspy may not read (ptrace access refused): said and recorded. */
int recorder_note_unreadable(struct recorder *r, pid_t pid);
/* Loads the bridge into the queued processes (after the probes are attached). */
int recorder_load_bridges(struct recorder *r);
/* Starts loading the bridge into processes whose first CUDA call comes later (late_bridges.h),
 * unless --no-cupti, --no-inject or no bridge. 0 or -errno, said. */
int recorder_start_late_bridges(struct recorder *r);
/* The late loads finished since the last call: recorded, new bridges turned on. */
int recorder_take_late_bridges(struct recorder *r);

#endif /* GPUSPY_RECORD_BRIDGES_H */
