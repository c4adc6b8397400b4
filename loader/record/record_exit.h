/* SPDX-License-Identifier: MIT */
/*
 * Process churn: what the recording's modules keep per traced process (the CUDA libraries
 * reported for it, its kernel handles, its CUPTI bridge attachment, the operator libraries
 * said for it; the Python module forgets its own at once) is released once the process has
 * exited, so memory and lookups stay bounded by the processes alive, not by all the processes
 * a recording ever saw (a shell loop, DataLoader workers respawned every epoch, an hour of -a).
 *
 * A process's own records all precede its exit record in the ring buffer (one ring, in
 * reservation order; the exit record is reserved by its last thread on its way out), so
 * nothing of it is needed after that record; its state is nevertheless kept for a grace
 * period of 1-2 s (exits are released in batches, at most one a second, so each module
 * rebuilds its tables once per batch, not once per exit). A pid the kernel hands out again
 * (a fork record naming it as the child) releases the old process's state at once.
 */
#ifndef GPUSPY_RECORD_EXIT_H
#define GPUSPY_RECORD_EXIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gs_hdr;
struct recorder;

/* Every record, before the modules see it: notes group exits, releases what is due, and the
 * old state of a pid a fork record hands out again. */
void record_exit_on_record(struct recorder *r, const struct gs_hdr *rec);

/* Frees the pending exits (their processes' state is the modules' to free). */
void record_exit_free(void);

#endif /* GPUSPY_RECORD_EXIT_H */
