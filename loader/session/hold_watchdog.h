/* SPDX-License-Identifier: MIT */
/*
 * Nothing gpuspy holds may stay stopped if gpuspy dies or stalls. BPF stops a traced process
 * (SIGSTOP) at ld.so's hook until the loader has probed the libraries it just mapped, and a
 * thread about to unwind a C++ exception until the loader has put back the return addresses
 * pending uretprobes replaced; the loader sends SIGCONT. Each hold is noted in the held_procs
 * map first (bpf/common.bpf.h). A watchdog process forked at start, in a session of its own,
 * keeps that map open and watches gpuspy through a pidfd: once gpuspy is gone (SIGKILL, a
 * crash, the OOM killer) it resumes every process still held, after putting back an unwinding
 * thread's return addresses itself, and exits; while gpuspy lives, it resumes any process held
 * longer than GS_HOLD_MAX_NS (gpuspy stopped or stuck), so no hold outlasts that bound.
 */
#ifndef GPUSPY_HOLD_WATCHDOG_H
#define GPUSPY_HOLD_WATCHDOG_H

#include <stdbool.h>
#include <sys/types.h>
#include "bpf/records.h"

#define GS_HOLD_MAX_NS 10000000000ull /* 10 s: the longest any process stays held */

/* Forks the watchdog for the held_procs map `held_fd`. 0 or -errno. */
int hold_watchdog_start(int held_fd, pid_t *pid);
/* The loader resumed the process of hold record `rec`: its entry goes. false when the entry
 * was gone already (the watchdog resumed it first: it ran unprobed meanwhile). */
bool hold_watchdog_done(int held_fd, const struct gs_hdr *rec);
/* Whether the hold of `rec` is still in force (the watchdog has not resumed it). */
bool hold_watchdog_holding(int held_fd, const struct gs_hdr *rec);
/* Whether the process of hold record `rec` is still stopped, or about to be (its SIGSTOP
 * pending): false once someone else resumed it, such as another gpuspy whose own hold of the
 * same load ended first (each sends SIGCONT when done), or when it is gone. Before the
 * loader's SIGCONT: it ran unprobed meanwhile, a loss to count. */
bool hold_watchdog_stopped(const struct gs_hdr *rec);

#endif /* GPUSPY_HOLD_WATCHDOG_H */
