// SPDX-License-Identifier: MIT
/* How each traced process's PyTorch operators are seen (record_torch.h). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/array_grow.h"
#include "lib/clocks.h"
#include "lib/key_index.h"
#include "lib/messages.h"
#include "lib/pid_list.h"
#include "loader/bridge/cupti_link.h"
#include "loader/bridge/late_bridges.h"
#include "loader/bridge/torch_observer.h"
#include "loader/probes/cuda_probes.h"
#include "loader/probes/op_probes.h"
#include "loader/record/record_bridges.h"
#include "loader/record/record_torch.h"
#include "loader/session/bpf_session.h"
#include "output/trace/trace_format.h"

#define ACTIVE_WAIT_NS 1500000000ull /* for the observers started at the attach */
#define ACTIVE_POLL_MS 20

/* A process's state in r->torch_done. */
enum torch_state {
	TORCH_PENDING = 1, /* the observer is to be loaded */
	TORCH_INPROCESS,   /* its records probe is attached */
	TORCH_UPROBES,	   /* the observer could not be used: uprobes (auto) */
	TORCH_NONE,	   /* could not be used, and --ops inprocess: no operators */
};

static enum torch_state state_of(const struct recorder *r, pid_t pid)
{
	size_t state;

	return key_index_find(&r->torch_done, (uint64_t)pid, 0, &state) ? (enum torch_state)state
									: 0;
}

static int set_state(struct recorder *r, pid_t pid, enum torch_state state)
{
	return key_index_put(&r->torch_done, (uint64_t)pid, 0, state) ? -ENOMEM : 0;
}

static int write_torch_load(struct recorder *r, pid_t pid, const struct bridge_inject_result *res)
{
	return recorder_write_load(r, pid, GS_BRIDGE_LOAD_TORCH, res);
}

/* The observer is mapped in `pid`: its records probe, whose semaphore turns it on. `started`:
 * gpuspy started it (its flush answer is awaited at the end); one found mapped may be a forked
 * child's copy, without the thread that answers. */
static int turn_on(struct recorder *r, pid_t pid, bool started)
{
	struct torch_mapped *m = malloc(sizeof(*m));
	int err = m ? torch_observer_mapped(pid, m) : -ENOMEM;

	/* first: the observer reads it when its records probe turns it on */
	if (!err && r->opts.record_shapes) {
		int shapes = cupti_link_want_shapes(r->cupti, m->host_path, pid);

		if (shapes == -ENOMEM)
			err = shapes;
		else if (shapes && !r->opts.quiet)
			gs_warn("pid %d: input shapes not recorded: %s", pid, strerror(-shapes));
	}
	err = err ?: cupti_link_attach(r->cupti, m->host_path, m->file_key, pid);
	if (!err && !r->opts.quiet)
		fprintf(stderr, "gpuspy: PyTorch observer in pid %d: %s: turned on\n", pid,
			m->path);
	free(m);
	if (!err && started)
		err = cupti_link_expect(r->cupti, pid, GS_GPU_BATCH_STREAM_TORCH);
	return err ?: set_state(r, pid, TORCH_INPROCESS);
}

/* The observer cannot be used in `pid` (`res` says why): recorded, then uprobes in auto mode.
 * `expected`: nothing went wrong (auto chose uprobes), so nothing is said on stderr. */
static int fall_back(struct recorder *r, pid_t pid, struct bridge_inject_result *res, bool expected,
		     bool probe)
{
	bool uprobes = r->opts.ops_mode == OPS_AUTO;
	size_t len = strlen(res->message);
	int err;

	snprintf(res->message + len, sizeof(res->message) - len, "%s",
		 uprobes ? "; operators traced by uprobes instead"
			 : "; --ops inprocess: no operators recorded");
	if (!r->opts.quiet && !expected && res->err != -ESRCH)
		gs_warn("pid %d: PyTorch observer not used: %s", pid, res->message);
	err = write_torch_load(r, pid, res);
	err = err ?: set_state(r, pid, uprobes ? TORCH_UPROBES : TORCH_NONE);
	if (err || !uprobes || !probe)
		return err;
	err = op_probes_scan(r->ops, pid);
	return err < 0 ? err : 0;
}

static int refuse(struct recorder *r, pid_t pid, int err, const char *why)
{
	struct bridge_inject_result res = {.outcome = GS_BRIDGE_LOAD_SKIPPED, .err = err};

	snprintf(res.message, sizeof(res.message), "%s", why);
	return fall_back(r, pid, &res, !err, true);
}

/* Why gpuspy may not load the observer at all, or NULL. */
static const char *cannot_load(const struct recorder *r, char *observer, size_t len)
{
	if (!r->cupti)
		return "--no-cupti: the observer's records travel the CUPTI bridge's probe";
	if (!r->opts.inject)
		return "--no-inject: gpuspy loads nothing into processes";
	if (!torch_observer_path(observer, len))
		return TORCH_OBSERVER_NAME " not found next to gpuspy (or $GPUSPY_TORCH_OBSERVER)";
	return NULL;
}

static int queue_load(struct recorder *r, pid_t pid, bool held)
{
	pid_t *slot;

	if (held) {
		int err = late_bridges_queue(r->late, pid, true, gs_monotonic_ns());

		return err ?: set_state(r, pid, TORCH_PENDING);
	}
	slot =
	    array_grow((void **)&r->torch_pids, &r->ntorch_pids, &r->torch_pids_cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = pid;
	return set_state(r, pid, TORCH_PENDING);
}

/* `auto`, a process ld.so holds (a launched command, or a target loading libraries after the
 * attach): uprobes, attached before its first operator, as without the observer. The observer
 * could only be loaded once the import is done, with the first operators (and the Python stack
 * of each) missed: auto keeps the whole run, --ops inprocess the lower cost. Nothing else is
 * looked at while the process waits (the observer's checks read libtorch's symbols). */
static int probe_held(struct recorder *r, pid_t pid)
{
	struct bridge_inject_result res = {.outcome = GS_BRIDGE_LOAD_SKIPPED};
	int libs = op_probes_scan(r->ops, pid);

	if (libs <= 0)
		return libs; /* no operator library yet: decided when one comes */
	snprintf(res.message, sizeof(res.message),
		 "libtorch loaded after the attach: the observer could only be loaded once the "
		 "import is done, after the first operators (--ops inprocess does that)");
	return fall_back(r, pid, &res, true, false);
}

/* A process not decided yet: the observer is there already, or can be loaded, or not. */
static int decide(struct recorder *r, pid_t pid, bool held)
{
	char observer[PATH_MAX], why[TORCH_WHY_MAX];
	struct torch_load *load;
	const char *reason;
	int err;

	err = r->cupti ? turn_on(r, pid, false) : -ENOTSUP;
	if (!err) {
		struct bridge_inject_result res = {.outcome = GS_BRIDGE_LOAD_PRESENT};

		snprintf(res.message, sizeof(res.message),
			 "already loaded (an earlier attach, or the program itself)");
		return write_torch_load(r, pid, &res);
	}
	if (err == -ENOMEM)
		return err;
	if (held && r->opts.ops_mode == OPS_AUTO)
		return probe_held(r, pid);
	load = malloc(sizeof(*load));
	if (!load)
		return -ENOMEM;
	err = torch_observer_prepare(pid, "", load, why, sizeof(why));
	free(load);
	if (err == -ENOENT) /* no libtorch: other operator libraries, by uprobes */
		return r->opts.ops_mode == OPS_AUTO ? op_probes_scan(r->ops, pid) : 0;
	if (err == -ENOTSUP)
		return refuse(r, pid, err, why);
	if (err)
		return 0; /* the process is gone */
	reason = cannot_load(r, observer, sizeof(observer));
	if (reason)
		return refuse(r, pid, -EPERM, reason);
	if (held && !r->late)
		return refuse(r, pid, -ENOTSUP, "no loader thread");
	return queue_load(r, pid, held);
}

int recorder_scan_ops(struct recorder *r, pid_t pid, bool held)
{
	int err;

	if (!r->ops || pid == getpid())
		return 0;
	if (r->opts.ops_mode == OPS_UPROBES)
		return op_probes_scan(r->ops, pid);
	switch (state_of(r, pid)) {
	case TORCH_UPROBES:
		return op_probes_scan(r->ops, pid); /* libraries mapped since */
	case TORCH_PENDING:
	case TORCH_INPROCESS:
	case TORCH_NONE:
		return 0;
	default:
		err = decide(r, pid, held);
		return err < 0 ? err : 0;
	}
}

int recorder_finish_torch_load(struct recorder *r, pid_t pid,
			       const struct bridge_inject_result *res)
{
	struct bridge_inject_result copy = *res;
	int err;

	if (res->outcome == GS_BRIDGE_LOAD_INJECTED || res->outcome == GS_BRIDGE_LOAD_PRESENT) {
		err = turn_on(r, pid, res->outcome == GS_BRIDGE_LOAD_INJECTED);
		if (err == -ENOMEM)
			return err;
		if (!err) {
			gs_debug("pid %d: PyTorch observer loaded: %s", pid, res->message);
			return write_torch_load(r, pid, res);
		}
		copy.outcome = GS_BRIDGE_LOAD_FAILED;
		copy.err = err;
		snprintf(copy.message, sizeof(copy.message),
			 "loaded, but its records probe could not be attached: %s", strerror(-err));
	}
	return fall_back(r, pid, &copy, false, true);
}

/* Whether every observer loaded at the attach said it is on. */
static bool all_active(const struct recorder *r)
{
	for (size_t i = 0; i < r->ntorch_pids; i++) {
		pid_t pid = r->torch_pids[i];

		if (state_of(r, pid) == TORCH_INPROCESS && !kill(pid, 0) &&
		    !cupti_link_is_active(r->cupti, pid, GS_GPU_BATCH_STREAM_TORCH))
			return false;
	}
	return true;
}

/* Loads the observer into `pid` now (the attach): where its libtorch is, then ptrace. */
static void load_into(struct recorder *r, pid_t pid, struct bridge_inject_result *res)
{
	struct torch_load *load = malloc(sizeof(*load));
	char observer[PATH_MAX], why[TORCH_WHY_MAX];
	int err;

	memset(res, 0, sizeof(*res));
	res->outcome = GS_BRIDGE_LOAD_FAILED;
	res->err = -ENOMEM;
	snprintf(res->message, sizeof(res->message), "out of memory");
	if (!load || !torch_observer_path(observer, sizeof(observer))) {
		free(load);
		return;
	}
	err = torch_observer_prepare(pid, observer, load, why, sizeof(why));
	if (!err) {
		bridge_inject(pid, &load->lib, recorder_named(r, pid), recorder_exempt_from_hold, r,
			      res);
	} else {
		res->outcome = GS_BRIDGE_LOAD_SKIPPED;
		res->err = err == -ENOTSUP ? err : -ESRCH;
		snprintf(res->message, sizeof(res->message), "%s", why);
	}
	free(load);
}

int recorder_load_torch(struct recorder *r)
{
	uint64_t deadline;
	int err = 0;

	for (size_t i = 0; i < r->ntorch_pids && !err; i++) {
		pid_t pid = r->torch_pids[i];
		struct bridge_inject_result res;

		load_into(r, pid, &res);
		err = recorder_finish_torch_load(r, pid, &res);
	}
	if (err || !r->ntorch_pids)
		return err;
	/* the observer turns itself on at its second poll of the semaphore (40 ms at most) */
	deadline = gs_monotonic_ns() + ACTIVE_WAIT_NS;
	while (!all_active(r) && gs_monotonic_ns() < deadline)
		bpf_session_poll(r->session, ACTIVE_POLL_MS);
	if (!all_active(r) && !r->opts.quiet)
		gs_warn("a PyTorch observer did not say it was on within %llu ms: its first "
			"operators may be missing",
			ACTIVE_WAIT_NS / 1000000ull);
	return r->write_err;
}

void recorder_torch_exec(struct recorder *r, pid_t pid)
{
	key_index_remove(&r->torch_done, (uint64_t)pid, 0);
}

void recorder_forget_torch(struct recorder *r, const struct pid_list *dead)
{
	key_index_drop_pids(&r->torch_done, dead, 1);
}

void recorder_free_torch(struct recorder *r)
{
	free(r->torch_pids);
	key_index_free(&r->torch_done);
}
