// SPDX-License-Identifier: MIT
/* Loading the CUPTI bridge into processes that start using CUDA after the attach
 * (late_bridges.h). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/array_grow.h"
#include "lib/clocks.h"
#include "lib/key_index.h"
#include "lib/messages.h"
#include "lib/pid_list.h"
#include "loader/bridge/late_bridges.h"
#include "loader/bridge/torch_observer.h"
#include "loader/proc/procfs.h"
#include "output/trace/trace_format.h"

#define STAT_START_TIME 22 /* /proc/PID/stat: clock ticks since boot */
/* a load that found ld.so's lock held (a library loading for seconds: CUDA's own, often) is
 * tried again this much later, a few times, before its refusal is recorded */
#define LDSO_BUSY_RETRY_NS 2000000000ull
#define LDSO_BUSY_RETRIES  3
/* the observer's load is tried sooner and more often: `import torch` maps libraries for a
 * second or two, each held stopped a moment while gpuspy probes it (stopped processes are
 * left alone), and the operators it misses meanwhile are the program's own */
#define TORCH_RETRY_NS	100000000ull
#define TORCH_RETRIES	50
#define TORCH_SAMPLE_NS 20000000ull

struct queued {
	pid_t pid;
	unsigned long long start_time; /* so a pid handed out again is not mistaken for it */
	uint64_t due;
	unsigned retries; /* loads put off because ld.so's lock was held */
	bool torch;	  /* the PyTorch observer, else the CUPTI bridge */
};

struct late_bridges {
	char bridge[PATH_MAX]; /* "" when CUDA processes are not loaded into */
	char torch[PATH_MAX];  /* the PyTorch observer, "" when not loaded */
	bridge_inject_hold_fn hold;
	void *hold_ctx;
	struct key_index seen; /* (pid, torch) queued or dealt with: the recorder's thread only */
	sigset_t caller_mask;  /* the recorder thread's signal mask before SIGCHLD was blocked */
	pthread_t worker;
	bool started;
	/* shared with the worker */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	bool loading;	      /* the worker is loading one it took off the queue */
	struct queued *queue; /* in due order */
	size_t nqueue, queue_cap;
	struct late_bridge_outcome *done;
	size_t ndone, done_cap;
};

static void ns_to_timespec(uint64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / 1000000000ull);
	ts->tv_nsec = (long)(ns % 1000000000ull);
}

/* Whether the process queued is still the one running under its pid, and left to gpuspy:
 * one whose environment names an injection library gets it from the driver at cuInit. */
static bool still_ours(const struct queued *q)
{
	char value[PATH_MAX];
	unsigned long long start;

	if (procfs_stat_field(q->pid, STAT_START_TIME, &start) || start != q->start_time)
		return false;
	if (q->torch)
		return true;
	procfs_environ_value(q->pid, "CUDA_INJECTION64_PATH", value, sizeof(value));
	return !value[0];
}

/* Queues `item` in due order (the kinds wait for different times): 0, or -ENOMEM. Lock
 * held. */
static int enqueue_locked(struct late_bridges *lb, const struct queued *item)
{
	struct queued *slot =
	    array_grow((void **)&lb->queue, &lb->nqueue, &lb->queue_cap, sizeof(*slot));
	size_t at;

	if (!slot)
		return -ENOMEM;
	for (at = lb->nqueue - 1; at && lb->queue[at - 1].due > item->due; at--)
		lb->queue[at] = lb->queue[at - 1];
	lb->queue[at] = *item;
	pthread_cond_signal(&lb->wake);
	return 0;
}

/* Puts a load off for later: 0, or -ENOMEM. */
static int retry_later(struct late_bridges *lb, const struct queued *q)
{
	struct queued item = *q;
	int err;

	item.due = gs_monotonic_ns() + (q->torch ? TORCH_RETRY_NS : LDSO_BUSY_RETRY_NS);
	item.retries++;
	pthread_mutex_lock(&lb->lock);
	err = enqueue_locked(lb, &item);
	pthread_mutex_unlock(&lb->lock);
	return err;
}

/* The PyTorch observer: its spec is the process's own (where its libtorch is mapped). */
static void load_torch(struct late_bridges *lb, const struct queued *q,
		       struct bridge_inject_result *res)
{
	struct torch_load *t = malloc(sizeof(*t));
	int err;

	memset(res, 0, sizeof(*res));
	if (!t) {
		res->outcome = GS_BRIDGE_LOAD_FAILED;
		res->err = -ENOMEM;
		snprintf(res->message, sizeof(res->message), "out of memory");
		return;
	}
	err = torch_observer_prepare(q->pid, lb->torch, t, res->message, sizeof(res->message));
	/* libtorch was just imported: the importing thread goes on with the imports, reading
	 * files (safe points) for a while; a CPU-bound loop later would have none */
	t->lib.sample_phase_ns = TORCH_SAMPLE_NS;
	if (!err)
		bridge_inject(q->pid, &t->lib, false, lb->hold, lb->hold_ctx, res);
	else if (err == -ENOTSUP)
		res->outcome = GS_BRIDGE_LOAD_SKIPPED, res->err = err;
	else
		res->outcome = GS_BRIDGE_LOAD_SKIPPED, res->err = -ESRCH;
	free(t);
}

/* ld.so's lock held (a library loading), or the process stopped (BPF holds it while gpuspy
 * probes a library it mapped): both pass. */
static bool may_retry(const struct queued *q, int err)
{
	if (q->torch)
		return (err == -EBUSY || err == -EAGAIN) && q->retries < TORCH_RETRIES;
	return err == -EBUSY && q->retries < LDSO_BUSY_RETRIES;
}

static void load(struct late_bridges *lb, const struct queued *q)
{
	struct late_bridge_outcome o = {.pid = q->pid, .torch = q->torch};
	struct late_bridge_outcome *slot;
	struct inject_lib lib;

	if (!still_ours(q))
		return;
	/* not named with -p: a process that started CUDA later may be a setuid one */
	if (q->torch) {
		load_torch(lb, q, &o.res);
	} else {
		inject_lib_cupti(&lib, lb->bridge);
		bridge_inject(q->pid, &lib, false, lb->hold, lb->hold_ctx, &o.res);
	}
	/* already there (a parent's mapping), or gone meanwhile: nothing to say */
	if ((!q->torch && o.res.outcome == GS_BRIDGE_LOAD_PRESENT) || o.res.err == -ESRCH)
		return;
	if (may_retry(q, o.res.err) && !retry_later(lb, q)) {
		if (q->torch)
			gs_debug("pid %d: %s; trying again in %llu ms", q->pid, o.res.message,
				 TORCH_RETRY_NS / 1000000ull);
		else
			gs_debug("pid %d: %s; trying again in %llu s", q->pid, o.res.message,
				 LDSO_BUSY_RETRY_NS / 1000000000ull);
		return;
	}
	if (o.res.outcome == GS_BRIDGE_LOAD_INJECTED)
		snprintf(o.res.message + strlen(o.res.message),
			 sizeof(o.res.message) - strlen(o.res.message), "%s",
			 q->torch ? " (libtorch loaded after the attach)"
				  : " (CUDA started after the attach)");
	pthread_mutex_lock(&lb->lock);
	slot = array_grow((void **)&lb->done, &lb->ndone, &lb->done_cap, sizeof(*slot));
	if (slot)
		*slot = o;
	pthread_mutex_unlock(&lb->lock);
	if (!slot)
		gs_warn("pid %d: out of memory for the load record", q->pid);
}

static void *work(void *arg)
{
	struct late_bridges *lb = arg;
	struct timespec ts;
	struct queued q;

	pthread_mutex_lock(&lb->lock);
	while (!lb->stopping) {
		if (!lb->nqueue) {
			pthread_cond_wait(&lb->wake, &lb->lock);
			continue;
		}
		if (gs_monotonic_ns() < lb->queue[0].due) {
			ns_to_timespec(lb->queue[0].due, &ts);
			pthread_cond_timedwait(&lb->wake, &lb->lock, &ts);
			continue;
		}
		q = lb->queue[0];
		memmove(lb->queue, lb->queue + 1, --lb->nqueue * sizeof(*lb->queue));
		lb->loading = true;
		pthread_mutex_unlock(&lb->lock);
		load(lb, &q);
		pthread_mutex_lock(&lb->lock);
		lb->loading = false;
	}
	pthread_mutex_unlock(&lb->lock);
	return NULL;
}

static int init_sync(struct late_bridges *lb)
{
	pthread_condattr_t attr;
	int err = pthread_condattr_init(&attr);

	/* due times are CLOCK_MONOTONIC, as everything in gpuspy */
	err = err ?: pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	err = err ?: pthread_cond_init(&lb->wake, &attr);
	pthread_condattr_destroy(&attr);
	return err ?: pthread_mutex_init(&lb->lock, NULL);
}

int late_bridges_new(const char *bridge, const char *torch, bridge_inject_hold_fn hold,
		     void *hold_ctx, struct late_bridges **out)
{
	struct late_bridges *lb = calloc(1, sizeof(*lb));
	sigset_t chld;
	int err;

	if (!lb)
		return -ENOMEM;
	snprintf(lb->bridge, sizeof(lb->bridge), "%s", bridge ?: "");
	snprintf(lb->torch, sizeof(lb->torch), "%s", torch ?: "");
	lb->hold = hold;
	lb->hold_ctx = hold_ctx;
	err = init_sync(lb);
	if (err) {
		free(lb);
		return -err;
	}
	/* Every stop of a tracee sends SIGCHLD to gpuspy; blocked in every thread, it stays
	 * pending until the worker's sigtimedwait takes it (remote_call.c), instead of being
	 * delivered, and ignored, in this one. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &lb->caller_mask);
	err = pthread_create(&lb->worker, NULL, work, lb);
	if (err) {
		pthread_sigmask(SIG_SETMASK, &lb->caller_mask, NULL);
		late_bridges_free(lb);
		return -err;
	}
	lb->started = true;
	*out = lb;
	return 0;
}

int late_bridges_mark(struct late_bridges *lb, pid_t pid, bool torch)
{
	return lb && key_index_put(&lb->seen, (uint64_t)pid, torch, 0) ? -ENOMEM : 0;
}

bool late_bridges_is_new(const struct late_bridges *lb, pid_t pid, bool torch)
{
	size_t unused;

	return lb && (torch ? lb->torch[0] : lb->bridge[0]) &&
	       !key_index_find(&lb->seen, (uint64_t)pid, torch, &unused);
}

int late_bridges_queue(struct late_bridges *lb, pid_t pid, bool torch, uint64_t now)
{
	struct queued item;
	unsigned long long start;
	int err;

	if (key_index_put(&lb->seen, (uint64_t)pid, torch, 0))
		return -ENOMEM;
	if (procfs_stat_field(pid, STAT_START_TIME, &start))
		return 0; /* gone already */
	item = (struct queued){.pid = pid,
			       .start_time = start,
			       .due = now + (torch ? LATE_TORCH_DELAY_NS : LATE_BRIDGE_DELAY_NS),
			       .torch = torch};
	pthread_mutex_lock(&lb->lock);
	err = enqueue_locked(lb, &item);
	pthread_mutex_unlock(&lb->lock);
	return err;
}

bool late_bridges_busy(struct late_bridges *lb)
{
	bool busy;

	if (!lb)
		return false;
	pthread_mutex_lock(&lb->lock);
	busy = lb->nqueue || lb->loading || lb->ndone;
	pthread_mutex_unlock(&lb->lock);
	return busy;
}

size_t late_bridges_take(struct late_bridges *lb, struct late_bridge_outcome *out, size_t max)
{
	size_t n;

	if (!lb)
		return 0;
	pthread_mutex_lock(&lb->lock);
	n = lb->ndone < max ? lb->ndone : max;
	if (n) { /* lb->done is NULL until the first outcome */
		memcpy(out, lb->done, n * sizeof(*out));
		lb->ndone -= n;
		memmove(lb->done, lb->done + n, lb->ndone * sizeof(*lb->done));
	}
	pthread_mutex_unlock(&lb->lock);
	return n;
}

void late_bridges_stop(struct late_bridges *lb)
{
	if (!lb || !lb->started)
		return;
	pthread_mutex_lock(&lb->lock);
	lb->stopping = true;
	lb->nqueue = 0;
	pthread_cond_signal(&lb->wake);
	pthread_mutex_unlock(&lb->lock);
	pthread_join(lb->worker, NULL);
	lb->started = false;
	pthread_sigmask(SIG_SETMASK, &lb->caller_mask, NULL);
}

void late_bridges_forget(struct late_bridges *lb, const struct pid_list *dead)
{
	if (lb)
		key_index_drop_pids(&lb->seen, dead, 1);
}

size_t late_bridges_tracked(const struct late_bridges *lb)
{
	return lb ? lb->seen.n : 0;
}

void late_bridges_free(struct late_bridges *lb)
{
	if (!lb)
		return;
	late_bridges_stop(lb);
	pthread_mutex_destroy(&lb->lock);
	pthread_cond_destroy(&lb->wake);
	key_index_free(&lb->seen);
	free(lb->queue);
	free(lb->done);
	free(lb);
}
