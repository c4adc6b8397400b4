// SPDX-License-Identifier: MIT
/*
 * gpuspy's CUPTI bridge: entry points and the control thread. README.md in this folder
 * describes the design; in short:
 *
 * - The CUDA driver loads this library through CUDA_INJECTION64_PATH (InitializeInjection)
 *   and NVTX through NVTX_INJECTION64_PATH (InitializeInjectionNvtx2, nvtx.c). Either may
 *   come first or alone; the first starts the control thread.
 * - Nothing happens while no recorder is attached: the gate is the semaphore of the
 *   gpuspy:records USDT probe (usdt.c), which the kernel raises in this process when gpuspy
 *   attaches a uprobe to the probe. The control thread reads it (and the flush semaphore)
 *   every POLL_NS; that read is all the bridge costs until then.
 * - Gate 0 -> >0: a session starts: NVTX calls are recorded, and once CUDA is initialised
 *   CUPTI is subscribed and its activities enabled (activity.c). While it is open the thread
 *   also flushes CUPTI every FLUSH_NS and re-calibrates the clock every CALIBRATE_NS.
 * - Gate >0 -> 0: disable, flush, unsubscribe, forget NVTX state; nothing is emitted (no
 *   one is listening any more).
 * - gpuspy:kernels_paused's semaphore follows a live view's --gpu-sample duty cycle: while it
 *   is raised CUPTI's kernel kind is disabled, the rest of the session untouched. gpuspy
 *   switches the semaphore (attaching and detaching the probe) rather than telling the bridge
 *   ON and PERIOD because the semaphores are the only channel to the bridge, and because
 *   gpuspy then knows which intervals were windows without reading the bridge's clock. It is
 *   read at every poll without the two-poll wait: nothing is fired through it. Detaching
 *   gpuspy drops it with the gate, so a paused bridge never outlives its recorder.
 * - gpuspy:call_records' semaphore: raised by `record` before it opens the gate, never by the
 *   live views. While it is down, the records made per CUDA call (API, synchronisation,
 *   overhead, copies, memsets) and NVTX ranges are off: top and serve show kernels and GPU
 *   busy and count calls and bytes with uprobes. Read at every poll, as kernels_paused.
 * - Flush semaphore 0 -> >0: everything is delivered, a GS_BRIDGE_FLUSHED status ends the
 *   last batch, and gpuspy:flushed fires with that batch's sequence number. It re-arms only
 *   when the semaphore went back to 0.
 *
 * The control state is under one mutex, taken by the control thread, by the entry points
 * (so an Initialize* that finds the gate already open starts the session at once, before
 * the first CUDA call returns) and at exit; never by the CUPTI or NVTX callbacks.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bridge.h"

#define POLL_NS	     20000000ull   /* semaphore check */
#define FLUSH_NS     100000000ull  /* CUPTI flush and batch delivery while recording */
#define CALIBRATE_NS 1000000000ull /* clock re-calibration while recording */
/* CUPTI hands over only full buffers unless the flush is forced: a process launching a few
 * kernels a second would keep them for many seconds, and gpuspy top and serve show
 * intervals of a second. A forced flush this often bounds their delay. */
#define FORCED_FLUSH_NS 1000000000ull

enum cupti_state {
	CUPTI_OFF = 0,
	CUPTI_ON = 1,
	CUPTI_PASSIVE = 2, /* busy or failed: left alone until the gate closes and reopens */
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static struct {
	pthread_mutex_t lock;
	int cuda;		   /* InitializeInjection ran: CUDA, hence CUPTI, is usable */
	int gate;		   /* a session is open: a recorder is attached */
	int cupti;		   /* enum cupti_state */
	int flush_armed;	   /* the flush semaphore was 0 since the last flush */
	int gate_seen, flush_seen; /* consecutive polls that saw each semaphore raised */
	int stopped;		   /* exiting, or a forked child: the bridge stays off */
	int calls;		   /* per-call records and NVTX on (gpuspy:call_records) */
	int exit_after_cupti;	   /* at_exit registered again once CUPTI was initialised */
	uint64_t session;
	uint64_t next_flush, next_calibrate, next_forced_flush;
} g = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .flush_armed = 1,
};

static void at_exit(void);

static void start_cupti(uint64_t now)
{
	enum activity_start_result r = activity_start(g.calls);

	g.cupti = r == ACTIVITY_STARTED ? CUPTI_ON : CUPTI_PASSIVE;
	/* Handlers run in reverse order: registered again after CUPTI initialised (and maybe
	 * registered exit handlers of its own), ours runs while CUPTI still works. The first
	 * run stops the bridge, so the second does nothing. */
	if (r == ACTIVITY_STARTED && !g.exit_after_cupti) {
		g.exit_after_cupti = 1;
		atexit(at_exit);
	}
	g.next_flush = now + FLUSH_NS;
	g.next_calibrate = now + CALIBRATE_NS;
	g.next_forced_flush = now + FORCED_FLUSH_NS;
}

static void open_session(uint64_t now)
{
	/* an NVTX call that saw the previous session just before it closed may have added a
	 * record since: it is not the new recorder's */
	batch_discard();
	g.gate = 1;
	g.session++;
	g.next_flush = now + FLUSH_NS;
	g.calls = usdt_call_records();
	if (g.calls)
		nvtx_open(g.session);
	if (!g.cuda) {
		status_emit(GS_BRIDGE_ACTIVE, 0, "NVTX only: CUDA not initialised (yet)");
		batch_send();
	}
}

/* A recorder came or went while the session stays open (another recorder or a live view
 * keeps the gate up): the per-call records and NVTX follow. */
static void follow_calls(int calls)
{
	if (calls == g.calls)
		return;
	g.calls = calls;
	if (calls)
		nvtx_open(++g.session); /* ranges open before are not this recorder's */
	else
		nvtx_close();
	if (g.cupti == CUPTI_ON)
		activity_set_calls(calls);
}

static void close_session(void)
{
	g.calls = 0;
	nvtx_close();
	if (g.cupti == CUPTI_ON)
		activity_stop();
	/* too late for gpuspy to see it, most likely: it must not reach the next recorder */
	batch_send();
	g.cupti = CUPTI_OFF;
	g.gate = 0;
}

static void flush(void)
{
	union bridge_rec r;

	if (g.cupti == CUPTI_ON)
		activity_flush(1);
	status_make(&r, GS_BRIDGE_FLUSHED, 0, "flush complete");
	usdt_fire_flushed(batch_add_send(&r.hdr));
}

static void periodic(uint64_t now)
{
	if (now < g.next_flush)
		return;
	if (g.cupti == CUPTI_ON) {
		activity_flush(now >= g.next_forced_flush);
		if (now >= g.next_forced_flush)
			g.next_forced_flush = now + FORCED_FLUSH_NS;
		if (now >= g.next_calibrate) {
			clock_calibrate(); /* on failure the previous offset stays */
			g.next_calibrate = now + CALIBRATE_NS;
		}
	}
	batch_send(); /* NVTX records, when CUPTI delivered nothing */
	g.next_flush = now + FLUSH_NS;
}

/*
 * Whether a semaphore counts as raised. The kernel raises it when gpuspy creates the uprobe,
 * a moment before gpuspy's BPF program is attached to it, and a batch fired in between is
 * lost: the control thread acts only on a semaphore it saw raised at two polls in a row.
 * `trusted` (the entry points) acts at once: a recorder that is there when CUDA or NVTX
 * starts attached long before (gpuspy holds a process it launches while it attaches).
 */
static int raised(int now_raised, int *seen, int trusted)
{
	if (!now_raised) {
		*seen = 0;
		return 0;
	}
	if (*seen < 2)
		(*seen)++;
	return trusted || *seen >= 2;
}

/* One look at the semaphores, and what follows from them. Lock held. */
static void step(int trusted)
{
	uint64_t now = bridge_now_ns();
	int attached, flush_req;

	if (g.stopped)
		return;
	attached = raised(usdt_recorder_ready(), &g.gate_seen, trusted);
	if (!g.gate_seen && g.gate)
		close_session();
	if (attached && !g.gate)
		open_session(now);
	if (g.gate && g.cuda && g.cupti == CUPTI_OFF)
		start_cupti(now);
	if (g.gate)
		follow_calls(usdt_call_records());
	if (g.cupti == CUPTI_ON)
		activity_set_kernels(!usdt_kernels_paused());
	flush_req = raised(usdt_flush_requested(), &g.flush_seen, trusted);
	if (!g.flush_seen) {
		g.flush_armed = 1;
	} else if (flush_req && g.flush_armed) {
		g.flush_armed = 0;
		flush();
	}
	if (g.gate)
		periodic(now);
}

static void *control_thread(void *arg)
{
	const struct timespec poll = {0, POLL_NS};

	(void)arg;
	for (;;) {
		nanosleep(&poll, NULL);
		pthread_mutex_lock(&g.lock);
		step(0);
		pthread_mutex_unlock(&g.lock);
	}
	return NULL;
}

/* At exit, while the process still runs: what CUPTI holds is delivered to a recorder that is
 * still attached (a launched command ends this way), and the bridge stops for good. */
static void at_exit(void)
{
	pthread_mutex_lock(&g.lock);
	if (g.gate && !g.stopped) {
		nvtx_close();
		if (g.cupti == CUPTI_ON)
			activity_stop();
		status_emit(GS_BRIDGE_INACTIVE, 0, "process exiting: all records delivered");
		batch_send();
	}
	g.stopped = 1;
	pthread_mutex_unlock(&g.lock);
}

/* The control thread does not survive fork(), and CUDA cannot be used in a forked child:
 * the child's bridge stays off. */
static void in_child(void)
{
	pthread_mutex_init(&g.lock, NULL);
	bridge_forget_ids();
	g.stopped = 1;
	g.gate = 0;
	g.cupti = CUPTI_OFF;
	batch_reset_child();
	nvtx_reset_child();
}

static void init_once(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t tid;

	atexit(at_exit);
	pthread_atfork(NULL, NULL, in_child);
	/* the thread must never take a signal the application expects on its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!pthread_create(&tid, &attr, control_thread, NULL))
		pthread_setname_np(tid, "gpuspy-cupti");
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void bridge_start(int from_cuda)
{
	pthread_once(&g_once, init_once);
	pthread_mutex_lock(&g.lock);
	if (from_cuda)
		g.cuda = 1;
	step(1);
	pthread_mutex_unlock(&g.lock);
}

/* Called by the CUDA driver in cuInit when CUDA_INJECTION64_PATH names this library. */
BRIDGE_EXPORT int InitializeInjection(void)
{
	bridge_start(1);
	return 1;
}

/*
 * Called by gpuspy (loader/bridge/bridge_inject.c) right after it dlopen()ed this library into a
 * CUDA process that was already running, in a thread of the application it stopped at a syscall
 * boundary. Only the control thread is started here: it opens the session and turns CUPTI on
 * itself once it sees the gate, never this borrowed thread, which may hold locks of the
 * application or the driver. CUDA's driver is there (gpuspy checked), so CUPTI is usable.
 * Writes 1 to *started (gpuspy's call returns through a signal frame, which does not hand a
 * return value back) and returns 1.
 */
BRIDGE_EXPORT int gpuspy_bridge_load_late(int *started)
{
	pthread_once(&g_once, init_once);
	pthread_mutex_lock(&g.lock);
	g.cuda = 1;
	pthread_mutex_unlock(&g.lock);
	if (started)
		*started = 1;
	debug_log("pid %d: loaded late, into a running process", (int)getpid());
	return 1;
}
