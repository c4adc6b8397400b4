// SPDX-License-Identifier: MIT
/*
 * gpu_mode: per process with CUDA, how its GPU side was recorded: by the CUPTI bridge (GPU
 * records joined to the calls), or by uprobes only and why (CUPTI held by another subscriber
 * such as torch.profiler or nsys, no bridge loaded, or a CUPTI error), with the clock
 * alignment error and what the bridge or CUPTI lost; and whether gpuspy loaded the bridge into
 * the running process when it attached (the thread's pause), or why not.
 */
#include <stdio.h>
#include <string.h>
#include "output/model/gpu/gpu_model.h"
#include "output/report/base/report.h"
#include "output/report/gpu/gpu_reports.h"

static const struct table_col cols[] = {
    {"PID", "pid", COL_ID},
    {"Process", "process", COL_STR},
    {"Mode", "mode", COL_STR},
    {"Bridge", "bridge", COL_STR},
    {"Inject Pause (ns)", "inject_pause_ns", COL_INT},
    {"Clock Error (ns)", "clock_error_ns", COL_INT},
    {"CUPTI Dropped", "cupti_dropped", COL_INT},
    {"Bridge Lost", "bridge_lost", COL_INT},
    {"GPU Ops", "ops", COL_INT},
    {"CUPTI Overhead (ns)", "overhead_ns", COL_INT},
    {"Message", "message", COL_STR},
};

/* Whether one of the first `nlibs` CUDA libraries found was found in `pid` (and has one of
 * `roles`, unless 0). */
static bool found_in(const struct trace_model *m, size_t nlibs, uint32_t pid, uint32_t roles)
{
	for (size_t i = 0; i < nlibs; i++)
		if (m->cuda.libs[i].pid == pid && (!roles || (m->cuda.libs[i].roles & roles)))
			return true;
	return false;
}

/* How the bridge got into the process when gpuspy attached (GS_REC_BRIDGE_LOAD). */
static const char *load_name(uint32_t outcome)
{
	static const char *const names[] = {
	    [GS_BRIDGE_LOAD_INJECTED] = "injected", [GS_BRIDGE_LOAD_PRESENT] = "present",
	    [GS_BRIDGE_LOAD_REFUSED] = "refused",   [GS_BRIDGE_LOAD_SKIPPED] = "skipped",
	    [GS_BRIDGE_LOAD_FAILED] = "failed",
	};

	return outcome < sizeof(names) / sizeof(names[0]) && names[outcome] ? names[outcome] : "";
}

static bool not_loaded(const struct gpu_proc *p)
{
	return p && (p->load_outcome == GS_BRIDGE_LOAD_REFUSED ||
		     p->load_outcome == GS_BRIDGE_LOAD_SKIPPED ||
		     p->load_outcome == GS_BRIDGE_LOAD_FAILED);
}

static const char *mode(const struct trace_model *m, uint32_t pid, const struct gpu_proc *p)
{
	if (p && (p->ops || p->apis))
		return "cupti";
	if (not_loaded(p) && !p->seen && p->load_outcome == GS_BRIDGE_LOAD_REFUSED)
		return found_in(m, m->cuda.nlibs, pid, 0)
			   ? "uprobes-only (bridge not loaded: ptrace not permitted)"
			   : "not probed (ptrace not permitted)";
	if (not_loaded(p) && !p->seen)
		return "uprobes-only (bridge not loaded)";
	if (!p || !p->seen)
		return found_in(m, m->cuda.nlibs, pid, GS_CUDA_LIB_BRIDGE)
			   ? "uprobes-only (bridge loaded, never reported)"
			   : "uprobes-only (no bridge loaded)";
	/* NVTX_INJECTION64_PATH loads the bridge into processes that never use CUDA too */
	if (p->seen & (1u << GS_BRIDGE_ACTIVE))
		return "cupti (no CUDA activity recorded)";
	if (p->seen & (1u << GS_BRIDGE_CUPTI_BUSY))
		return "uprobes-only (CUPTI busy: another subscriber)";
	if (p->seen & (1u << GS_BRIDGE_CUPTI_ERROR))
		return "error";
	return "uprobes-only (bridge inactive)";
}

static int add_row(const struct trace_model *m, struct table *t, uint32_t pid)
{
	const struct gpu_proc *p = gpu_model_proc(&m->gpu, pid);
	const struct model_process *proc = trace_model_process(m, pid);
	struct table_cell *row = table_add_row(t);
	char msg[768] = "";

	if (not_loaded(p) && p->load_message)
		snprintf(msg, sizeof(msg), "bridge %s: %s", load_name(p->load_outcome),
			 p->load_message);
	if (p && p->message)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s%s", msg[0] ? "; " : "",
			 p->message);
	if (p && p->cupti_result)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s(CUptiResult %d)",
			 msg[0] ? " " : "", p->cupti_result);
	if (!row || table_set_str(&row[1], proc && proc->comm[0] ? proc->comm : "?") ||
	    table_set_str(&row[2], mode(m, pid, p)) ||
	    table_set_str(&row[3], load_name(p ? p->load_outcome : 0)) ||
	    table_set_str(&row[10], msg))
		return -1;
	row[0].u = pid;
	row[4].u = p ? p->load_pause_ns : 0;
	row[5].u = p ? p->clock_error_ns : 0;
	row[5].empty = !p || !p->clocks;
	row[6].u = p ? p->dropped : 0;
	row[7].u = p ? p->lost : 0;
	row[8].u = p ? p->ops : 0;
	row[9].u = p ? p->overhead_ns : 0;
	return 0;
}

/* Each process once: those a CUDA library was found in, then those only the bridge (or gpuspy's
 * attempt to load it) reported on. */
static int build(const struct trace_model *m, struct table *t)
{
	for (size_t i = 0; i < m->cuda.nlibs; i++)
		if (!found_in(m, i, m->cuda.libs[i].pid, 0) && add_row(m, t, m->cuda.libs[i].pid))
			return -1;
	for (size_t i = 0; i < m->gpu.nprocs; i++) {
		uint32_t pid = m->gpu.procs[i].pid;

		if (!found_in(m, m->cuda.nlibs, pid, 0) && add_row(m, t, pid))
			return -1;
	}
	return 0;
}

const struct report_def report_gpu_mode = {
    .name = "gpu_mode",
    .summary = "how each CUDA process's GPU side was recorded: CUPTI bridge or uprobes only, "
	       "and why",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = NULL, /* processes as they were found */
    .build = build,
};
