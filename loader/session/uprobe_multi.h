/* SPDX-License-Identifier: MIT */
/*
 * uprobe_multi links (Linux 6.6+): one BPF link attaches a program to many functions of one
 * file, each with its cookie. libbpf 1.1 has no API for them, so this is the raw
 * BPF_LINK_CREATE. Besides attaching in one call, they detach in one: a perf-event uprobe
 * per function costs an RCU grace period (~100 ms here) each to remove.
 */
#ifndef GPUSPY_UPROBE_MULTI_H
#define GPUSPY_UPROBE_MULTI_H

#include <stdbool.h>
#include <stdint.h>

#define GS_BPF_TRACE_UPROBE_MULTI   48 /* enum bpf_attach_type; load programs with it */
#define GS_BPF_TRACE_UPROBE_SESSION 57 /* ... for one program at entry and return (6.13+) */

/* Attaches `prog_fd` at `n` file offsets of `path` (every process), as return probes when
 * `retprobe`. Returns the link fd (close it to detach) or -errno. */
int uprobe_multi_attach(int prog_fd, const char *path, const uint64_t *offsets,
			const uint64_t *cookies, uint32_t n, bool retprobe);
/* One probe at `offset` of `path` with a USDT semaphore at file offset `sema` (0: none), in
 * process `pid` only (0: every process). Link fd or -errno. */
int uprobe_multi_attach_one(int prog_fd, const char *path, uint64_t offset, uint64_t sema,
			    uint32_t pid);
/* The same with a uprobe session program (loaded with GS_BPF_TRACE_UPROBE_SESSION): it runs
 * at entry and, unless its entry returned nonzero, at return. Link fd or -errno. */
int uprobe_session_attach(int prog_fd, const char *path, const uint64_t *offsets,
			  const uint64_t *cookies, uint32_t n);

#endif /* GPUSPY_UPROBE_MULTI_H */
