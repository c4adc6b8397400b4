// SPDX-License-Identifier: MIT
/* Which processes a recording traces: -p pids and their existing descendants go into BPF's
 * traced set (threads with --no-follow); a launched command is added by BPF itself at its
 * execve; -a traces everything, so only names are collected. The CUDA libraries each target
 * has mapped are probed here; later ones through ld.so (cuda_probes.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "lib/messages.h"
#include "loader/probes/cuda_names.h"
#include "loader/probes/cuda_probes.h"
#include "loader/probes/op_probes.h"
#include "loader/proc/proc_attr.h"
#include "loader/proc/procfs.h"
#include "loader/python/py_stacks.h"
#include "loader/record/record_bridges.h"
#include "loader/record/record_targets.h"
#include "loader/record/record_torch.h"
#include "loader/record/record_trace.h"
#include "loader/record/recorder.h"
#include "loader/session/bpf_session.h"
#include "output/trace/trace_format.h"

static int trace_thread(void *ctx, pid_t pid, pid_t tid, const char *comm)
{
	struct recorder *r = ctx;
	int err = bpf_session_trace_thread(r->session, tid);

	return err ?: recorder_write_comm(r, pid, tid, comm);
}

/* The CUDA libraries a target has mapped already, and the kernel handles its runtime handed
 * out before now. A process whose maps cannot be read (it exited, or it is a kernel thread)
 * is traced without CUDA probes; only running out of memory or a write error stops the
 * recording. */
static int probe_cuda(struct recorder *r, pid_t pid)
{
	int roles = r->cuda ? cuda_probes_scan(r->cuda, pid) : 0;

	int err;

	if (roles == -EACCES || roles == -EPERM)
		return recorder_note_unreadable(r, pid);
	if (roles < 0 && roles != -ENOMEM) {
		gs_debug("cannot look for CUDA libraries in pid %d: %s", pid, strerror(-roles));
		return 0;
	}
	if (roles < 0)
		return roles;
	err = recorder_note_cuda_process(r, pid, roles);
	if (!err && (roles & GS_CUDA_LIB_RUNTIME))
		err = cuda_names_scan_process(r->cuda_names, r->writer, pid);
	return err;
}

/* The PyTorch operator libraries a target has mapped already; as with CUDA, a process whose
 * maps cannot be read is traced without them. */
static int probe_ops(struct recorder *r, pid_t pid)
{
	int libs = recorder_scan_ops(r, pid, false);

	if (libs < 0 && libs != -ENOMEM) {
		gs_debug("cannot look for PyTorch operators in pid %d: %s", pid, strerror(-libs));
		return 0;
	}
	return libs < 0 ? libs : 0;
}

/* The Python interpreter of a target, if any: its stacks are captured from attach on. */
static int probe_python(struct recorder *r, pid_t pid)
{
	return r->py ? py_stacks_scan(r->py, pid) : 0;
}

/* What a process already has loaded: CUDA libraries, operators, a Python interpreter. */
static int probe_process(struct recorder *r, pid_t pid)
{
	int err = proc_attrs_add(r->attrs, r->writer, pid);

	err = err ?: probe_cuda(r, pid);

	err = err ?: probe_ops(r, pid);
	return err ?: probe_python(r, pid);
}

static int trace_process(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;
	int err = probe_process(r, pid);

	if (err)
		return err;

	if (!r->opts.follow)
		return procfs_for_each_thread(pid, trace_thread, r);
	err = bpf_session_trace_process(r->session, pid);
	if (err)
		return err;
	/* a process may exit between the /proc scan and here: not an error */
	err = procfs_for_each_thread(pid, recorder_write_comm, r);
	return err == -ENOENT ? 0 : err;
}

static int name_process(void *ctx, pid_t pid)
{
	int err;

	if (pid == getpid())
		return 0; /* never traced: see self_tgid */
	err = probe_process(ctx, pid);
	err = err ?: procfs_for_each_thread(pid, recorder_write_comm, ctx);

	return err == -ENOENT ? 0 : err;
}

/* The targets: a launched command, -p pids with their existing descendants, or (-a) names for
 * every process, which BPF then traces without a filter. */
int recorder_add_targets(struct recorder *r)
{
	const struct record_opts *o = &r->opts;
	int err = 0;

	/* gpuspy's own ld.so is the one a launched command or a new process will use */
	if (r->cuda && (err = cuda_probes_watch_ldso(r->cuda, getpid())))
		return err;
	if (o->trace_all)
		return procfs_for_each_process(name_process, r);
	if (r->cmd.pid > 0)
		return 0; /* BPF starts tracing it at its execve (launch_pid) */
	for (size_t i = 0; i < o->npids && !err; i++) {
		err = trace_process(r, o->pids[i]);
		if (!err && o->follow)
			err = procfs_for_each_descendant(o->pids[i], trace_process, r);
	}
	return err;
}
