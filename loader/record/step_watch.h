/* SPDX-License-Identifier: MIT */
/*
 * Training steps found while recording (`record --steps`), the way `gpuspy report --report
 * steps` finds them in a finished trace (output/analysis/steps.h), so that both agree on what a
 * step is: ProfilerStep#N NVTX ranges first, else the step loop in the Python stacks, or the
 * way `--steps-by` names. The watch keeps the NVTX ranges and Python records it is handed and,
 * at each update, runs the report's finders over them (steps_py_find on a py_model built from
 * the stacks kept). Only the stacks of a process's last two steps are kept (with the count of
 * the steps before), so an update costs the same after an hour as after a minute.
 *
 * Early on the finder reads a short prefix of the run, and may read it otherwise than it will
 * once more of the run is in (a loop told by its CPU samples, until a second line of it has an
 * event, then by those events: its first iteration had no sample at the line it first chose).
 * So a process's steps are *settled* only after several updates in a row found the same loop,
 * the same steps where they overlap and no fewer; the stacks of its earlier steps are let go
 * only then, since its count could not be taken again without them.
 */
#ifndef GPUSPY_STEP_WATCH_H
#define GPUSPY_STEP_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "output/analysis/step_list.h"
#include "output/trace/trace_format.h"

struct step_watch;

/* One process's steps as the last update found them. */
struct watch_proc {
	uint32_t pid, tid;
	uint64_t first;	      /* the index of v[0] among all the process's steps */
	const struct step *v; /* v[0 .. n) */
	size_t n;
	/* v[n - 1] has ended: a later step began, its loop was left, or the process exited */
	bool last_ended;
	bool settled;	 /* the last updates all found these steps (above) */
	const char *how; /* as the steps report says it: "python loop in train (train.py:42)" */
};

/* `by`: a --steps-by value, or NULL for the preferred way; `nvtx`: NVTX ranges are recorded;
 * `python`: Python stacks are. 0 or -ENOMEM. */
int step_watch_new(const char *by, bool nvtx, bool python, struct step_watch **out);
/* Whether step_watch_take() wants records of this type. */
bool step_watch_takes(uint16_t type);
/* Keeps what it needs of a record (NVTX ranges, Python records, process exits). 0 or -ENOMEM. */
int step_watch_take(struct step_watch *w, const struct gs_hdr *rec);
/* Steps from `index` on must stay found: the stacks before such a step are never let go. */
void step_watch_keep_from(struct step_watch *w, uint64_t index);
/* From now on only the steps of process `pid` are looked for. */
void step_watch_follow(struct step_watch *w, uint32_t pid);
/* Finds the steps in what was taken so far. 0 or -ENOMEM. */
int step_watch_update(struct step_watch *w, uint64_t now);
/* The processes with steps after the last update, valid until the next one. */
size_t step_watch_nprocs(const struct step_watch *w);
const struct watch_proc *step_watch_proc(const struct step_watch *w, size_t i);
void step_watch_free(struct step_watch *w);

#endif /* GPUSPY_STEP_WATCH_H */
