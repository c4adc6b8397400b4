/* SPDX-License-Identifier: MIT */
/*
 * `record --steps N --skip-steps K`: a window of training steps, as torch.profiler's schedule
 * (wait/active), so a long job is sampled without tracing all of it. The window is steps
 * K .. K+N-1 of one process, found live by step_watch.h; it spans [S, E): S the start of step
 * K, E the end of step K+N-1. Recording stops once E is known.
 *
 * A gate on the trace writer sorts every record. Metadata (processes, threads, exec, names of
 * fds, kernels, operators, Python code objects and interpreters, CUDA libraries, bridge status,
 * GPU clock) goes to the file at once, so the window's events can be named. Events (syscall and
 * off-CPU spans, CUDA calls, GPU records, NVTX ranges, operator calls, Python stacks) go to the
 * file only when their time stamp lies in [S, E); those outside are counted, never written, and
 * never counted as lost. Since a step is known only after it began (an NVTX range once it ends,
 * a Python loop's iteration once its stacks show it), events are held in memory until the
 * window's bounds say which side they fall on. The statistics maps are taken (read and emptied)
 * every 0.1 s and the takes held likewise: the window's statistics are the sum of the takes from
 * the last before S to the first after E, and its loss counters count from the take before S.
 * The file's TRACE_INFO and trailer carry S and E, so reports measure the window.
 */
#ifndef GPUSPY_STEP_WINDOW_H
#define GPUSPY_STEP_WINDOW_H

#include <stdbool.h>
#include <stdint.h>
#include "loader/record/recorder.h"

/* The window of r->opts (steps, skip_steps, steps_by), gating r->writer from now on. 0 or
 * -ENOMEM. */
int step_window_new(struct recorder *r, struct step_window **out);
/* Each poll: finds steps (a few times a second), opens and closes the window, writes the held
 * events known to be in it. 1 once the window is complete (stop recording), 0 to go on, or
 * -errno. */
int step_window_tick(struct step_window *w, uint64_t now);
/* After the last record came (the probes detached, the ring drained): looks for steps one last
 * time, writes the held events that are in the window, lets the others go. The trailer's end
 * time goes to `end_ts`: E for a complete window, `now` otherwise. 0 or -errno. */
int step_window_finish(struct step_window *w, uint64_t now, uint64_t *end_ts);
/* Whether all N steps were recorded. */
bool step_window_complete(const struct step_window *w);
/* "window: steps 2..6 of pid 1234, at step 4", for the status line. */
const char *step_window_status(struct step_window *w);
/* What the window holds, after step_window_finish(): a summary line (unless `quiet`) when it
 * is complete, else a warning saying how far it got and why (`why`: the stop reason). */
void step_window_report(const struct step_window *w, const char *why, bool quiet);
void step_window_free(struct step_window *w);

#endif /* GPUSPY_STEP_WINDOW_H */
