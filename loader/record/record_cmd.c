// SPDX-License-Identifier: MIT
/*
 * `gpuspy record`: checks → trace file → (held) launch → BPF load → targets → attach → release
 * the command → poll until a stop condition → detach → drain → statistics → trailer.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/clocks.h"
#include "lib/exit_codes.h"
#include "lib/messages.h"
#include "loader/bridge/cupti_env.h"
#include "loader/bridge/cupti_link.h"
#include "loader/bridge/late_bridges.h"
#include "loader/probes/cuda_names.h"
#include "loader/probes/cuda_probes.h"
#include "loader/probes/op_probes.h"
#include "loader/proc/fd_names.h"
#include "loader/proc/proc_attr.h"
#include "loader/proc/procfs.h"
#include "loader/python/py_stacks.h"
#include "loader/record/record_bridges.h"
#include "loader/record/record_torch.h"
#include "loader/record/record_cmd.h"
#include "loader/record/record_exit.h"
#include "loader/record/record_targets.h"
#include "loader/record/record_trace.h"
#include "loader/record/recorder.h"
#include "loader/record/status_line.h"
#include "loader/record/step_window.h"
#include "loader/session/bpf_session.h"
#include "loader/session/hold_watchdog.h"
#include "loader/session/link_batch.h"
#include "loader/session/privileges.h"
#include "loader/session/stats_dump.h"
#include "output/trace/cuda_api.h"
#include "output/trace/trace_writer.h"

#define POLL_MS		 100
#define LIVE_POLL_MAX_MS 1000
#define FLUSH_EVERY_NS	 1000000000ULL
/* Keys of exited threads are looked for in /proc this often, not at every checkpoint: a live
 * view checkpoints every interval, and the keys BPF could not flush only wait in the map */
#define SWEEP_EVERY_NS	 10000000000ULL
#define CHILD_GRACE_SECS 5
#define BRIDGE_FLUSH_MS	 1000

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

void recorder_install_signal_handlers(void)
{
	struct sigaction sa = {.sa_handler = on_stop_signal};

	/* no SA_RESTART: the ring-buffer poll must return at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Whether a CUDA call shows its process really using CUDA: it succeeded (a fork of a CUDA
 * process, or a process without a driver, fails its calls) and is not a kernel registration,
 * which the constructors of any library built with nvcc make before anything initialises CUDA. */
static bool uses_cuda(const struct gs_hdr *rec)
{
	const struct gs_cuda_call *c = (const void *)rec;
	struct cuda_call_info info;

	return cuda_call_decode(c, &info) && info.probe->cls != GS_CUDA_NAME_STUB &&
	       !cuda_call_failed(c, &info);
}

/* The watchdog resumed a held process before the loader got to it (gpuspy was stopped or
 * busy for GS_HOLD_MAX_NS): what it loaded ran unprobed until the next scan, a counted loss. */
static void hold_cut_short(struct recorder *r, const struct gs_hdr *rec)
{
	r->holds_cut_short++;
	if (!r->opts.quiet)
		gs_warn("pid %u was held longer than %llu s and resumed by the watchdog before its "
			"new libraries were probed",
			rec->pid, GS_HOLD_MAX_NS / 1000000000ull);
	if (rec->type == GS_REC_LIBS_CHANGED) {
		cuda_probes_libs_changed(r->cuda, (pid_t)rec->pid);
		kill((pid_t)rec->pid, SIGCONT);
	}
}

/* Someone else resumed a held process while the loader probed what it loaded: another gpuspy
 * whose hold of the same load ended first, most likely. It ran unprobed meanwhile, as above. */
static void hold_resumed_elsewhere(struct recorder *r, const struct gs_hdr *rec)
{
	r->holds_cut_short++;
	if (!r->opts.quiet)
		gs_warn("pid %u was resumed by another process (another gpuspy?) or ended while "
			"its new libraries were probed: calls it made meanwhile may be missing",
			rec->pid);
}

/* CUDA records: names compacted, launches of unnamed stubs named, held processes probed. */
static int on_cuda_record(struct recorder *r, const struct gs_hdr *rec)
{
	bool stopped;
	int err;

	switch (rec->type) {
	case GS_REC_LIBS_CHANGED:
		if (!hold_watchdog_holding(bpf_session_held_fd(r->session), rec)) {
			hold_cut_short(r, rec);
			return 0;
		}
		/* while BPF holds the process: the operators of a library it just mapped are
		 * probed before any of them can run (the CUDA probes resume it) */
		err = recorder_scan_ops(r, (pid_t)rec->pid, true);
		if (err < 0 && err != -ENOENT)
			gs_warn("cannot probe the operators of pid %u: %s", rec->pid,
				strerror(-err));
		cuda_probes_libs_changed(r->cuda, (pid_t)rec->pid);
		stopped = hold_watchdog_stopped(rec);
		/* resume it whatever happened: BPF stopped it only for this */
		kill((pid_t)rec->pid, SIGCONT);
		if (!hold_watchdog_done(bpf_session_held_fd(r->session), rec))
			hold_cut_short(r, rec);
		else if (!stopped)
			hold_resumed_elsewhere(r, rec);
		return 0;
	case GS_REC_CUDA_NAME:
		return cuda_names_from_bpf(r->cuda_names, r->writer, (const void *)rec);
	default:
		if (rec->size < sizeof(struct gs_cuda_call))
			return 0;
		err = trace_writer_append(r->writer, rec);
		if (!err && late_bridges_is_new(r->late, (pid_t)rec->pid, false) && uses_cuda(rec))
			err = late_bridges_queue(r->late, (pid_t)rec->pid, false, rec->ts);
		return err ?: cuda_names_note_call(r->cuda_names, r->writer, (const void *)rec);
	}
}

/* The late loads (late_bridges.h) finished since the last call: recorded, turned on. */
static int take_late_loads(struct recorder *r)
{
	struct late_bridge_outcome done[8];
	size_t n;
	int err = 0;

	while (!err && (n = late_bridges_take(r->late, done, 8)))
		for (size_t i = 0; i < n && !err; i++)
			err = done[i].torch
				  ? recorder_finish_torch_load(r, done[i].pid, &done[i].res)
				  : recorder_finish_bridge_load(r, done[i].pid, &done[i].res);
	return err;
}

static int on_record(void *ctx, const struct gs_hdr *rec, size_t size)
{
	struct recorder *r = ctx;
	const struct gs_syscall *sc;
	int err;

	(void)size;
	r->events++;
	if (rec->type == GS_REC_EXIT || rec->type == GS_REC_FORK)
		record_exit_on_record(r, rec); /* process churn: what exited processes left */
	if (rec->type == GS_REC_EXEC)
		recorder_torch_exec(r,
				    (pid_t)rec->pid); /* a new program: its own libtorch, if any */
	if (rec->type == GS_REC_PY_STACK) {
		err = r->py ? py_stacks_on_record(r->py, rec) : 0;
		goto out;
	}
	/* the Python module follows processes through these; they are written below as usual */
	if (r->py &&
	    (rec->type == GS_REC_FORK || rec->type == GS_REC_EXEC || rec->type == GS_REC_EXIT ||
	     rec->type == GS_REC_LIBS_CHANGED) &&
	    (err = py_stacks_on_record(r->py, rec)))
		goto out;
	if (rec->type == GS_REC_GPU_BATCH) {
		err = r->cupti ? cupti_link_on_batch(r->cupti, rec) : 0;
		goto out;
	}
	if (rec->type == GS_REC_CUDA_CALL || rec->type == GS_REC_CUDA_NAME ||
	    rec->type == GS_REC_LIBS_CHANGED) {
		err = r->cuda ? on_cuda_record(r, rec) : 0;
		goto out;
	}
	if (rec->type == GS_REC_SYSCALL_FINAL) {
		err = stats_write_syscall_final(r->writer, (const void *)rec);
		goto out;
	}
	if (rec->type == GS_REC_OP_UNWIND) { /* the loader's business, not the trace's */
		/* the watchdog did it if it resumed the thread already */
		if (hold_watchdog_holding(bpf_session_held_fd(r->session), rec))
			op_probes_unwind(r->ops, rec);
		hold_watchdog_done(bpf_session_held_fd(r->session), rec);
		return 0;
	}
	if (rec->type == GS_REC_FD_NAME) {
		/* BPF's fixed-size buffer: checked to hold a string before it is used */
		if (rec->size <= sizeof(struct gs_fd_name) ||
		    !memchr((const char *)rec + sizeof(struct gs_fd_name), '\0',
			    rec->size - sizeof(struct gs_fd_name)))
			return 0;
		err = fd_names_opened(r->fd_names, r->writer, (const void *)rec);
		goto out;
	}
	err = trace_writer_append(r->writer, rec);
	/* after the exec record, so a reader has the process before its new attribution */
	if (!err &&
	    (rec->type == GS_REC_FORK || rec->type == GS_REC_EXEC || rec->type == GS_REC_EXIT))
		err = proc_attrs_on_record(r->attrs, r->writer, rec);
	if (!err && rec->type == GS_REC_SYSCALL) {
		sc = (const void *)rec;
		err = fd_names_note(r->fd_names, r->writer, (pid_t)rec->pid, (uint32_t)sc->args[0],
				    sc->fd_ino, rec->ts);
	}
out:
	if (err) {
		r->write_err = err;
		return -1;
	}
	return 0;
}

/* Whether the launched command exited (and is reaped now). A peek comes first: a late load
 * (late_bridges.h) may ptrace its main thread from another of gpuspy's threads, and the kernel
 * reports that tracee's ptrace stops to any wait of this process for it, which would take
 * them from the loader; only an exit is collected here. */
static bool child_exited(struct recorder *r)
{
	siginfo_t info;

	if (r->cmd.pid <= 0 || r->child_reaped)
		return r->child_reaped;
	memset(&info, 0, sizeof(info));
	if (waitid(P_PID, (id_t)r->cmd.pid, &info, WEXITED | WNOHANG | WNOWAIT) ||
	    info.si_pid != r->cmd.pid ||
	    (info.si_code != CLD_EXITED && info.si_code != CLD_KILLED &&
	     info.si_code != CLD_DUMPED))
		return false;
	if (waitpid(r->cmd.pid, &r->child_status, WNOHANG) == r->cmd.pid)
		r->child_reaped = true;
	return r->child_reaped;
}

/* Cumulative statistics and loss counters, so a recording that never reaches its end (the
 * machine or gpuspy killed) still holds exact totals up to here; readers keep the last. */
static int checkpoint_stats(struct recorder *r, uint64_t now)
{
	bool sweep = now - r->last_sweep_ns >= SWEEP_EVERY_NS;
	int err = bpf_session_write_stats(r->session, r->writer, now, sweep);

	if (sweep)
		r->last_sweep_ns = now;

	return err ?: recorder_write_losses(r, now, false);
}

/* How long the next ring-buffer poll may wait. record wakes every POLL_MS for its status
 * line, its targets' exits and the timeouts of its options. A live view (top, serve) has
 * nothing to do between its ticks but what wakes the poll anyway (a hold record, a signal, a
 * megabyte of records) and the bridge loads under way, so it sleeps until its next tick or
 * -d's end, at most LIVE_POLL_MAX_MS: on an idle host its wakeups every POLL_MS were a third
 * of serve's own CPU (docs/BENCHMARKS.md). */
static int poll_timeout_ms(struct recorder *r, uint64_t now, uint64_t start, uint64_t last_stats)
{
	uint64_t due = last_stats + r->opts.stats_interval_ns;

	if (!r->live || late_bridges_busy(r->late))
		return POLL_MS;
	if (r->opts.duration_ns && start + r->opts.duration_ns < due)
		due = start + r->opts.duration_ns;
	if (due <= now)
		return 0;
	return due - now >= LIVE_POLL_MAX_MS * 1000000ull ? LIVE_POLL_MAX_MS
							  : (int)((due - now + 999999) / 1000000);
}

/* Polls and writes until a stop condition; returns which one. */
static const char *poll_loop(struct recorder *r, struct status_line *status)
{
	uint64_t start = status->start_ns, last_flush = start, last_stats = start, now = start;
	int n;

	for (;;) {
		n = bpf_session_poll(r->session, poll_timeout_ms(r, now, start, last_stats));
		if (r->write_err)
			return "write error";
		if (n < 0 && n != -EINTR)
			return "ring buffer error";
		if (stop_signal)
			return "signal";
		now = gs_monotonic_ns();
		if (r->py && (r->write_err = py_stacks_tick(r->py, now)))
			return "write error";
		if ((r->write_err = take_late_loads(r)))
			return "write error";
		if (r->window && (n = step_window_tick(r->window, now))) {
			if (n > 0)
				return "window complete";
			r->write_err = n;
			return "write error";
		}
		if (r->opts.duration_ns && now - start >= r->opts.duration_ns)
			return "duration";
		if (r->cmd.pid > 0 ? child_exited(r) : target_watch_all_exited(&r->watch))
			return "target exited";
		if (r->opts.stats_interval_ns && now - last_stats >= r->opts.stats_interval_ns) {
			if ((r->write_err = checkpoint_stats(r, now)))
				return "write error";
			last_stats = now;
			n = r->on_tick ? r->on_tick(r, now) : 0;
			if (n < 0) {
				r->write_err = n;
				return "write error";
			}
			if (n > 0)
				return "done";
		}
		if (now - last_flush >= FLUSH_EVERY_NS) {
			if ((r->write_err = trace_writer_flush(r->writer)))
				return "write error";
			last_flush = now;
			if (!r->opts.quiet)
				status_line_tick(status, now, r->events,
						 trace_writer_bytes(r->writer),
						 bpf_session_loss_total(r->session),
						 r->window ? step_window_status(r->window) : NULL);
		}
	}
}

static const char *poll_until_stop(struct recorder *r)
{
	struct status_line status;
	const char *why;

	status_line_init(&status, gs_monotonic_ns());
	why = poll_loop(r, &status);
	/* a tty's status line is rewritten in place: end it before the summary */
	status_line_end(&status);
	return why;
}

/* A launched command still running when recording stops gets SIGTERM (as nsys does), then
 * SIGKILL after a grace period, so gpuspy never leaves it orphaned. */
static void stop_child(struct recorder *r)
{
	if (r->cmd.pid <= 0 || child_exited(r))
		return;
	kill(r->cmd.pid, SIGTERM);
	for (int i = 0; i < CHILD_GRACE_SECS * 10 && !child_exited(r); i++) {
		const struct timespec pause = {0, POLL_MS * 1000000L};

		/* what its exit leaves in the ring is recorded, while there is a session */
		if (r->session)
			bpf_session_poll(r->session, POLL_MS);
		else
			nanosleep(&pause, NULL);
	}
	if (!child_exited(r)) {
		const struct timespec pause = {0, POLL_MS * 1000000L};

		kill(r->cmd.pid, SIGKILL);
		while (!child_exited(r))
			nanosleep(&pause, NULL);
	}
}

/* The probes' state and the BPF session, with what the step window holds: at the end, or once a
 * complete window leaves a launched command running untraced, for as long as that runs. */
static void release_session(struct recorder *r)
{
	late_bridges_free(r->late);
	cupti_link_free(r->cupti);
	cuda_probes_free(r->cuda);
	op_probes_free(r->ops);
	py_stacks_free(r->py);
	cuda_names_free(r->cuda_names);
	bpf_session_destroy(r->session);
	step_window_free(r->window); /* before the writer it gates */
	r->late = NULL;
	r->cupti = NULL;
	r->cuda = NULL;
	r->ops = NULL;
	r->py = NULL;
	r->cuda_names = NULL;
	r->session = NULL;
	r->window = NULL;
}

/* After a complete step window, a launched command runs on untraced to its own end (as the
 * training job it is): gpuspy, its parent, waits to pass on its status; a stop signal meanwhile
 * stops it as at any other stop. */
static void wait_child(struct recorder *r)
{
	const struct timespec pause = {0, POLL_MS * 1000000L};

	release_session(r);
	if (!r->opts.quiet)
		fprintf(stderr, "gpuspy: '%s' (pid %d) runs on, untraced; waiting for it to exit\n",
			r->opts.command[0], r->cmd.pid);
	while (!child_exited(r)) {
		if (stop_signal) {
			stop_child(r);
			return;
		}
		nanosleep(&pause, NULL);
	}
}

/* The launched command's status; a step window cut short makes a success GS_EXIT_WINDOW (a
 * failing command's own status says more). */
static int exit_status(struct recorder *r)
{
	bool cut = r->window && !step_window_complete(r->window);
	int code = GS_EXIT_OK;

	if (r->cmd.pid > 0) {
		if (!r->child_reaped)
			wait_child(r);
		code = r->child_reaped ? launch_exit_code(r->child_status) : GS_EXIT_FAILURE;
	}
	return code == GS_EXIT_OK && cut ? GS_EXIT_WINDOW : code;
}

static int poll_session(void *ctx, int timeout_ms)
{
	return bpf_session_poll(ctx, timeout_ms);
}

/* Every probe, in two batches: each detach waits for a grace period, which a batch's
 * detaches share (link_batch.h); the unwinder hooks outlast the operators' return probes. */
static void detach_probes(struct recorder *r)
{
	struct link_batch batch;

	link_batch_init(&batch);
	cupti_link_detach(r->cupti, &batch);
	cuda_probes_detach(r->cuda, &batch);
	op_probes_detach(r->ops, &batch);
	py_stacks_detach(r->py, &batch);
	link_batch_close(&batch);
	op_probes_detach_unwinders(r->ops, &batch);
	link_batch_free(&batch);
	bpf_session_detach(r->session);
}

/* Detach, drain what is still in the ring, then the exact statistics and the trailer. */
static int finish_trace(struct recorder *r, const char *why)
{
	struct link_batch watches;
	uint64_t now, end;
	int err;

	/* a load under way ends first, so that its bridge is turned on and flushed too */
	late_bridges_stop(r->late);
	if (!r->write_err)
		r->write_err = take_late_loads(r);
	/* ld.so's watch, a perf-event uprobe (cuda.bpf.c: ldso_debug_state), takes longest to
	 * detach: it starts while the bridges flush */
	link_batch_init(&watches);
	cuda_probes_detach_watches(r->cuda, &watches);
	link_batch_start(&watches);
	/* the CUPTI bridges deliver what they hold while their probes are still attached */
	cupti_link_flush(r->cupti, poll_session, r->session, BRIDGE_FLUSH_MS);
	detach_probes(r);
	link_batch_free(&watches);
	/* a process held by ld.so's probe in the drained records is resumed there */
	bpf_session_drain(r->session);
	if (r->write_err) {
		gs_error("cannot write %s: %s", r->opts.output, strerror(-r->write_err));
		return r->write_err;
	}
	now = end = gs_monotonic_ns();
	/* a step window's held events, and its end for the trailer */
	err = r->window ? step_window_finish(r->window, now, &end) : 0;
	err = err ?: bpf_session_write_stats(r->session, r->writer, now, true);
	err = err ?: recorder_write_losses(r, now, true);
	if (!err) {
		uint64_t records = trace_writer_records(r->writer) + 1; /* + the trailer */

		err = trace_writer_finish(r->writer, end);
		r->writer = NULL;
		if (!err && r->window)
			step_window_report(r->window, why, r->opts.quiet);
		if (!err && !r->opts.quiet)
			fprintf(stderr, "gpuspy: wrote %s (%llu records, %llu events, %llu lost)\n",
				r->opts.output, (unsigned long long)records,
				(unsigned long long)r->events,
				(unsigned long long)bpf_session_loss_total(r->session));
	}
	if (err)
		gs_error("cannot finish %s: %s", r->opts.output, strerror(-err));
	return err;
}

int recorder_check_environment(const pid_t *pids, size_t npids, const char *verb)
{
	int err = privileges_check();

	if (err)
		return err;
	err = privileges_check_btf();
	if (err)
		return err;
	for (size_t i = 0; i < npids; i++) {
		pid_t tgid = procfs_tgid_of(pids[i]);

		if (!tgid) {
			gs_error("cannot %s pid %d: no such process", verb, pids[i]);
			return GS_EXIT_NO_TARGET;
		}
		/* tracing is per process; a thread id would match nothing */
		if (tgid != pids[i]) {
			gs_error("pid %d is a thread of process %d: use -p %d", pids[i], tgid,
				 tgid);
			return GS_EXIT_USAGE;
		}
	}
	return 0;
}

static int start_session(struct recorder *r)
{
	const struct record_opts *o = &r->opts;
	struct bpf_session_config cfg = {
	    .trace_all = o->trace_all,
	    .follow = o->follow,
	    .osrt_threshold_ns = o->osrt_threshold_ns,
	    .offcpu_threshold_ns = o->offcpu_threshold_ns,
	    .ringbuf_bytes = o->ringbuf_bytes,
	    .max_stat_keys = o->max_stat_keys,
	    .stats_taken = o->steps != 0,
	    .syscall_counts_only = o->syscall_counts,
	    .cputime = o->live,
	    .btf_path = getenv("GPUSPY_BTF_PATH"),
	    .launch_pid = r->cmd.pid,
	    .cuda = o->cuda,
	    .cupti = o->cupti,
	    .python = o->python,
	    .ops = o->ops,
	    .sample_hz = o->sample_hz,
	};
	int err = bpf_session_open(&cfg, on_record, r, &r->session);

	if (err)
		return err == -EPERM ? GS_EXIT_PERMISSION : GS_EXIT_FAILURE;
	if (o->cuda) {
		err = cuda_probes_new(bpf_session_cuda(r->session), r->writer, o->quiet, &r->cuda);
		if (!err && o->live)
			cuda_probes_set_live(r->cuda);
		r->cuda_names = cuda_names_new();
		if (err || !r->cuda_names) {
			gs_error("cannot set up CUDA probing: out of memory");
			return GS_EXIT_FAILURE;
		}
	}
	if (o->cupti) {
		if (cupti_link_new(bpf_session_cupti(r->session), r->writer, o->quiet, &r->cupti)) {
			gs_error("cannot set up the CUPTI bridge link: out of memory");
			return GS_EXIT_FAILURE;
		}
		if (o->live)
			cupti_link_set_live(r->cupti);
		cuda_probes_use_bridge(r->cuda, r->cupti, o->trace_all);
	}
	if (bpf_session_ops(r->session) &&
	    op_probes_new(bpf_session_ops(r->session), r->writer, o->quiet, &r->ops)) {
		gs_error("cannot set up PyTorch operator probing: out of memory");
		return GS_EXIT_FAILURE;
	}
	if (o->python && py_stacks_new(r->session, r->writer, o->quiet, &r->py)) {
		gs_error("cannot set up Python stacks: out of memory");
		return GS_EXIT_FAILURE;
	}
	/* before the targets: those dealt with at the attach are marked as they are found */
	if (recorder_start_late_bridges(r))
		return GS_EXIT_FAILURE;
	err = recorder_add_targets(r);
	if (err) {
		gs_error("cannot register the target processes: %s", strerror(-err));
		return GS_EXIT_FAILURE;
	}
	if (!o->command && !o->trace_all && target_watch_open(&r->watch, o->pids, o->npids)) {
		gs_error("cannot watch the target processes: %s", strerror(errno));
		return GS_EXIT_FAILURE;
	}
	err = bpf_session_attach(r->session);
	if (!err && r->py)
		err = py_stacks_attach_sampler(r->py, o->sample_hz);
	if (err)
		return err == -EPERM ? GS_EXIT_PERMISSION : GS_EXIT_FAILURE;
	err = recorder_load_bridges(r);
	err = err ?: recorder_load_torch(r);
	if (err)
		gs_error("cannot record the loads of gpuspy's libraries: %s", strerror(-err));
	return err ? GS_EXIT_FAILURE : 0;
}

static int release_command(struct recorder *r)
{
	int child_errno = launch_release(&r->cmd);

	if (!child_errno)
		return 0;
	if (r->opts.run_as_user)
		gs_error("cannot run '%s' as %s: %s", r->opts.command[0], r->opts.run_as.name,
			 strerror(child_errno));
	else
		gs_error("cannot run '%s': %s", r->opts.command[0], strerror(child_errno));
	waitpid(r->cmd.pid, NULL, 0);
	r->cmd.pid = 0;
	return GS_EXIT_EXEC_FAILED;
}

/* Scripts wait for this line to know the probes are live. */
static void announce(const struct recorder *r)
{
	const struct record_opts *o = &r->opts;

	if (o->command)
		fprintf(stderr, "gpuspy: recording '%s' (pid %d) to %s\n", o->command[0],
			r->cmd.pid, o->output);
	else if (o->trace_all)
		fprintf(stderr, "gpuspy: recording all processes to %s\n", o->output);
	else
		fprintf(stderr,
			"gpuspy: recording %zu process%s (pid %d%s) to %s, Ctrl-C to stop\n",
			o->npids, o->npids > 1 ? "es" : "", o->pids[0], o->npids > 1 ? ",..." : "",
			o->output);
}

static int record(struct recorder *r)
{
	uint64_t now = gs_monotonic_ns();
	const char *why;
	int ret;

	if (recorder_open_trace(r, now))
		return GS_EXIT_FAILURE;
	if (r->opts.steps && step_window_new(r, &r->window)) {
		gs_error("cannot set up the step window: out of memory");
		return GS_EXIT_FAILURE;
	}
	r->fd_names = fd_names_new();
	r->attrs = proc_attrs_new(true);
	if (!r->fd_names || !r->attrs)
		return GS_EXIT_FAILURE;
	if (r->opts.command && r->opts.cupti)
		cupti_env_prepare(r->opts.quiet);
	if (r->opts.command &&
	    launch_prepare(r->opts.command, r->opts.run_as_user ? &r->opts.run_as : NULL,
			   &r->cmd)) {
		gs_error("cannot start '%s': %s", r->opts.command[0], strerror(errno));
		return GS_EXIT_FAILURE;
	}
	ret = start_session(r);
	if (ret)
		return ret;
	if (r->opts.command && (ret = release_command(r)))
		return ret;
	if (!r->opts.quiet)
		announce(r);
	why = poll_until_stop(r);
	gs_debug("stopping: %s", why);
	/* a complete step window leaves a launched command running, untraced */
	if (!r->window || !step_window_complete(r->window))
		stop_child(r);
	if (finish_trace(r, why))
		return GS_EXIT_FAILURE;
	return exit_status(r);
}

int recorder_run_live(struct recorder *r)
{
	const char *why;
	int ret;

	r->fd_names = fd_names_new();
	r->attrs = proc_attrs_new(false); /* the views show no ranks */
	if (!r->fd_names || !r->attrs)
		return GS_EXIT_FAILURE;
	ret = start_session(r);
	if (ret)
		return ret;
	/* the view's baseline (CPU times, counters) at the moment the probes are live */
	ret = r->on_tick ? r->on_tick(r, gs_monotonic_ns()) : 0;
	if (ret < 0) {
		gs_error("cannot start the live view: %s", strerror(-ret));
		return GS_EXIT_FAILURE;
	}
	why = poll_until_stop(r);
	gs_debug("stopping: %s", why);
	return finish_trace(r, why) ? GS_EXIT_FAILURE : GS_EXIT_OK;
}

void recorder_cleanup(struct recorder *r)
{
	if (r->cmd.pid > 0 && !r->child_reaped)
		launch_abort(&r->cmd);
	free(r->bridge_pids);
	recorder_free_torch(r);
	release_session(r);
	/* a trace that could not be finished keeps what was written: it reads as truncated */
	trace_writer_abandon(r->writer);
	fd_names_free(r->fd_names);
	proc_attrs_free(r->attrs);
	record_exit_free();
	target_watch_close(&r->watch);
	record_opts_free(&r->opts);
}

int record_main(int argc, char **argv)
{
	struct recorder r = {.cmd = {.go_fd = -1, .exec_fd = -1}, .watch = {0}};
	int ret = record_opts_parse(argc, argv, &r.opts);

	if (ret >= 0) { /* --help, or a usage error */
		record_opts_free(&r.opts);
		return ret;
	}
	ret = recorder_check_environment(r.opts.pids, r.opts.npids, "attach to");
	if (ret == 0) {
		recorder_install_signal_handlers();
		ret = record(&r);
	}
	recorder_cleanup(&r);
	return ret;
}
