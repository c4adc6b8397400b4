/* SPDX-License-Identifier: MIT */
/*
 * Training steps (iterations) as gpuspy finds them, per process: the list every way of finding
 * them fills (steps_nvtx.c from NVTX ranges, steps_py.c from the Python stacks) and steps.c
 * returns.
 */
#ifndef GPUSPY_STEP_LIST_H
#define GPUSPY_STEP_LIST_H

#include <stddef.h>
#include <stdint.h>

/* One step of one process: [start, end) on CLOCK_MONOTONIC, on the thread that runs the loop. */
struct step {
	uint32_t pid, tid;
	uint32_t index; /* 0, 1, ... within its process */
	uint64_t start, end;
};

/* How a process's steps were found, said in the report ("py-loop train (train.py:42)"). */
struct step_origin {
	uint32_t pid, tid;
	char how[192];
	size_t first, n; /* its steps: list.v[first .. first + n) */
};

struct step_list {
	struct step *v; /* by process, in time order within one */
	size_t n, cap;
	struct step_origin *origins;
	size_t norigins, origins_cap;
};

/* Starts a process's steps (found by `how`); 0, or -1 out of memory. */
int step_list_begin(struct step_list *l, uint32_t pid, uint32_t tid, const char *how);
/* Appends a step to the process begun last, after its steps so far (the one before ends by this
 * one's start at the latest); 0, or -1 out of memory. */
int step_list_add(struct step_list *l, uint64_t start, uint64_t end);
/* The parent of a process, or 0 when unknown (the caller's bookkeeping: the trace model, or
 * the recorder's fork records). */
typedef uint32_t (*step_parent_of)(void *ctx, uint32_t pid);
/* Drops the steps of every process whose ancestor has steps: its loop serves its parent's (a
 * data feeder, a worker pool, as DataLoader workers serve theirs); ranks started by torchrun or
 * mp.spawn are siblings under a launcher without steps, and keep theirs. 0, or -1 out of
 * memory (the list unchanged). */
int step_list_drop_served(struct step_list *l, step_parent_of parent_of, void *ctx);
/* Drops the process begun last (it had too few steps to be a loop). */
void step_list_drop_last(struct step_list *l);
void step_list_free(struct step_list *l);

#endif /* GPUSPY_STEP_LIST_H */
