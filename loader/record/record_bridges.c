// SPDX-License-Identifier: MIT
/*
 * The CUPTI bridge in the running CUDA processes a recording attaches to (-p targets and their
 * descendants, every process with -a): found already loaded, loaded now (bridge_inject.h), or
 * left out and why. Each such process gets one GS_REC_BRIDGE_LOAD record, which the gpu_mode
 * report shows. Loading happens after the probes are attached, so the bridge's records find
 * gpuspy listening; the CUDA library scan that follows turns the new bridge on.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/array_grow.h"
#include "lib/clocks.h"
#include "lib/messages.h"
#include "loader/bridge/bridge_inject.h"
#include "loader/bridge/cupti_env.h"
#include "loader/bridge/cupti_link.h"
#include "loader/bridge/late_bridges.h"
#include "loader/bridge/torch_observer.h"
#include "loader/probes/cuda_probes.h"
#include "loader/record/record_bridges.h"
#include "loader/record/recorder.h"
#include "output/trace/trace_format.h"
#include "output/trace/trace_writer.h"

int recorder_write_load(struct recorder *r, pid_t pid, uint32_t flags,
			const struct bridge_inject_result *res)
{
	struct gs_bridge_load rec = {
	    .hdr = {.type = GS_REC_BRIDGE_LOAD,
		    .pid = (uint32_t)pid,
		    .tid = (uint32_t)res->tid,
		    .flags = flags,
		    .ts = res->released_ns ?: gs_monotonic_ns()},
	    .outcome = res->outcome,
	    .err = res->err,
	    .pause_ns = res->pause_ns,
	    .wait_ns = res->wait_ns,
	};

	return trace_writer_append_tail(r->writer, &rec.hdr, sizeof(rec), res->message,
					sizeof(res->message));
}

static int write_load(struct recorder *r, pid_t pid, const struct bridge_inject_result *res)
{
	return recorder_write_load(r, pid, 0, res);
}

static int write_simple(struct recorder *r, pid_t pid, uint32_t outcome, const char *message)
{
	struct bridge_inject_result res = {.outcome = outcome};

	snprintf(res.message, sizeof(res.message), "%s", message);
	return write_load(r, pid, &res);
}

int recorder_note_unreadable(struct recorder *r, pid_t pid)
{
	if (pid == getpid())
		return 0;
	/* -a meets many such processes in containers: said once each, with -v only */
	if (r->opts.trace_all)
		gs_debug("pid %d: ptrace access refused: not probed", pid);
	else if (!r->opts.quiet)
		gs_warn(
		    "pid %d: ptrace not permitted (gpuspy lacks CAP_SYS_PTRACE?): its libraries "
		    "and memory cannot be read, so no CUDA, GPU or Python data, syscalls only",
		    pid);
	return write_simple(r, pid, GS_BRIDGE_LOAD_REFUSED,
			    "ptrace not permitted: libraries and memory not readable, not probed");
}

int recorder_note_cuda_process(struct recorder *r, pid_t pid, int roles)
{
	pid_t *slot;

	if (pid == getpid() || !r->opts.cupti)
		return 0;
	/* dealt with here, whatever comes of it: never again when its CUDA calls are seen */
	if ((roles & (GS_CUDA_LIB_BRIDGE | GS_CUDA_LIB_DRIVER)) &&
	    late_bridges_mark(r->late, pid, false))
		return -ENOMEM;
	if (roles & GS_CUDA_LIB_BRIDGE)
		return write_simple(r, pid, GS_BRIDGE_LOAD_PRESENT,
				    "already loaded (CUDA_INJECTION64_PATH, or an earlier attach)");
	if (!(roles & GS_CUDA_LIB_DRIVER))
		return 0; /* CUDA not initialised: nothing for CUPTI to record yet */
	if (!r->opts.inject)
		return write_simple(r, pid, GS_BRIDGE_LOAD_SKIPPED, "--no-inject");
	slot = array_grow((void **)&r->bridge_pids, &r->nbridge_pids, &r->bridge_pids_cap,
			  sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = pid;
	return 0;
}

void recorder_exempt_from_hold(void *ctx, pid_t tid, bool exempt)
{
	struct recorder *r = ctx;

	if (r->cuda)
		cuda_probes_exempt_thread(r->cuda, tid, exempt);
}

static void say(const struct recorder *r, pid_t pid, const struct bridge_inject_result *res)
{
	if (res->outcome == GS_BRIDGE_LOAD_INJECTED)
		gs_debug("pid %d: CUPTI bridge loaded (thread %d paused %llu us, waited %llu us "
			 "for a safe point): %s",
			 pid, res->tid, (unsigned long long)(res->pause_ns / 1000),
			 (unsigned long long)(res->wait_ns / 1000), res->message);
	else if (!r->opts.quiet && res->err != -ESRCH)
		gs_warn("pid %d: CUPTI bridge not loaded: %s; GPU activity from uprobes only", pid,
			res->message);
}

int recorder_finish_bridge_load(struct recorder *r, pid_t pid,
				const struct bridge_inject_result *res)
{
	int err, roles;

	say(r, pid, res);
	err = write_load(r, pid, res);
	if (err || res->outcome != GS_BRIDGE_LOAD_INJECTED)
		return err;
	/* the new mapping: its probe raises the bridge's gate */
	roles = cuda_probes_scan(r->cuda, pid);
	if (roles == -ENOMEM)
		return roles;
	return cupti_link_expect(r->cupti, pid, GS_GPU_BATCH_STREAM_BRIDGE);
}

bool recorder_named(const struct recorder *r, pid_t pid)
{
	for (size_t i = 0; i < r->opts.npids; i++)
		if (r->opts.pids[i] == pid)
			return true;
	return false;
}

static int load_one(struct recorder *r, pid_t pid, const char *bridge)
{
	struct bridge_inject_result res;
	struct inject_lib lib;

	inject_lib_cupti(&lib, bridge);
	bridge_inject(pid, &lib, recorder_named(r, pid), recorder_exempt_from_hold, r, &res);
	return recorder_finish_bridge_load(r, pid, &res);
}

int recorder_start_late_bridges(struct recorder *r)
{
	char bridge[PATH_MAX], torch[PATH_MAX];
	bool cupti, ops;
	int err;

	if (!r->opts.inject || !r->cuda) /* late processes are seen by the CUDA probes */
		return 0;
	cupti = r->opts.cupti && cupti_bridge_path(bridge, sizeof(bridge));
	ops = r->ops && r->cupti && r->opts.ops_mode != OPS_UPROBES &&
	      torch_observer_path(torch, sizeof(torch));
	if (!cupti && !ops)
		return 0;
	err = late_bridges_new(cupti ? bridge : NULL, ops ? torch : NULL, recorder_exempt_from_hold,
			       r, &r->late);
	if (err)
		gs_error("cannot start loading gpuspy's libraries into new processes: %s",
			 strerror(-err));
	return err;
}

int recorder_load_bridges(struct recorder *r)
{
	char bridge[PATH_MAX];
	int err = 0;

	if (!r->nbridge_pids)
		return 0;
	if (!cupti_bridge_path(bridge, sizeof(bridge))) {
		for (size_t i = 0; i < r->nbridge_pids && !err; i++)
			err = write_simple(r, r->bridge_pids[i], GS_BRIDGE_LOAD_SKIPPED,
					   "gpuspy's CUPTI bridge was not found");
		if (!r->opts.quiet)
			gs_warn("CUPTI bridge libgpuspy_cupti.so not found next to gpuspy (or "
				"$GPUSPY_CUPTI_BRIDGE): running CUDA processes get uprobes only");
		return err;
	}
	for (size_t i = 0; i < r->nbridge_pids && !err; i++)
		err = load_one(r, r->bridge_pids[i], bridge);
	return err;
}
