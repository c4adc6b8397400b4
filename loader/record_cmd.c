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
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bpf_session.h"
#include "cli.h"
#include "fd_names.h"
#include "launch.h"
#include "privileges.h"
#include "procfs.h"
#include "record_opts.h"
#include "status_line.h"
#include "target_watch.h"
#include "trace_writer.h"

#define POLL_MS		 100
#define FLUSH_EVERY_NS	 1000000000ULL
#define CHILD_GRACE_SECS 5

static volatile sig_atomic_t stop_signal;

struct recorder {
	struct record_opts opts;
	struct trace_writer *writer;
	struct bpf_session *session;
	struct fd_names *fd_names;
	struct launched_cmd cmd;
	struct target_watch watch;
	uint64_t events;
	int write_err;
	int child_status;
	bool child_reaped;
};

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static void install_signal_handlers(void)
{
	struct sigaction sa = {.sa_handler = on_stop_signal};

	/* no SA_RESTART: the ring-buffer poll must return at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int on_record(void *ctx, const struct gs_hdr *rec, size_t size)
{
	struct recorder *r = ctx;
	const struct gs_syscall *sc;
	int err;

	(void)size;
	r->events++;
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

static int write_trace_info(struct recorder *r, uint64_t now)
{
	union {
		struct gs_trace_info rec;
		unsigned char bytes[sizeof(struct gs_trace_info) + 1024];
	} u;
	char *p = u.rec.command, *end = (char *)u.bytes + sizeof(u.bytes) - 1;
	const struct record_opts *o = &r->opts;

	memset(&u, 0, sizeof(u));
	u.rec.hdr.type = GS_REC_TRACE_INFO;
	u.rec.hdr.ts = now;
	u.rec.hdr.pid = (uint32_t)getpid();
	u.rec.osrt_threshold_ns = o->osrt_threshold_ns;
	u.rec.offcpu_threshold_ns = o->offcpu_threshold_ns;
	u.rec.follow = o->follow;
	u.rec.mode = o->command ? GS_MODE_LAUNCH : o->trace_all ? GS_MODE_SYSTEM : GS_MODE_ATTACH;
	for (char **a = o->command; a && *a && p < end; a++)
		p += snprintf(p, (size_t)(end - p), "%s%s", a == o->command ? "" : " ", *a);
	for (size_t i = 0; i < o->npids && p < end; i++)
		p += snprintf(p, (size_t)(end - p), "%s%d", i ? "," : "-p ", o->pids[i]);
	if (o->trace_all)
		snprintf(p, (size_t)(end - p), "-a");
	u.rec.hdr.size = (uint16_t)gs_align8(sizeof(u.rec) + strlen(u.rec.command) + 1);
	return trace_writer_append(r->writer, &u.rec.hdr);
}

static int open_trace(struct recorder *r, uint64_t now)
{
	struct gs_file_header h = {
	    .version_major = GS_TRACE_VERSION_MAJOR,
	    .version_minor = GS_TRACE_VERSION_MINOR,
	    .header_size = sizeof(h),
	    .created_realtime_ns = gs_realtime_ns(),
	    .created_monotonic_ns = now,
	};
	struct utsname u;
	int err;

	memcpy(h.magic, GS_TRACE_MAGIC, sizeof(h.magic));
	if (!uname(&u)) {
		snprintf(h.hostname, sizeof(h.hostname), "%.63s", u.nodename);
		snprintf(h.kernel_release, sizeof(h.kernel_release), "%.63s", u.release);
	}
	err = trace_writer_open(r->opts.output, r->opts.overwrite, &h, &r->writer);
	if (err == -EEXIST)
		gs_error("%s already exists (use -f to overwrite)", r->opts.output);
	else if (err)
		gs_error("cannot create %s: %s", r->opts.output, strerror(-err));
	return err ? err : write_trace_info(r, now);
}

static int write_comm(void *ctx, pid_t pid, pid_t tid, const char *comm)
{
	struct recorder *r = ctx;
	struct gs_comm rec = {
	    .hdr = {.type = GS_REC_COMM,
		    .size = sizeof(rec),
		    .pid = (uint32_t)pid,
		    .tid = (uint32_t)tid,
		    .ts = gs_monotonic_ns()},
	};

	snprintf(rec.comm, sizeof(rec.comm), "%.*s", GS_COMM_LEN - 1, comm);
	return trace_writer_append(r->writer, &rec.hdr);
}

static int trace_thread(void *ctx, pid_t pid, pid_t tid, const char *comm)
{
	struct recorder *r = ctx;
	int err = bpf_session_trace_thread(r->session, tid);

	return err ?: write_comm(r, pid, tid, comm);
}

static int trace_process(void *ctx, pid_t pid)
{
	struct recorder *r = ctx;
	int err;

	if (!r->opts.follow)
		return procfs_for_each_thread(pid, trace_thread, r);
	err = bpf_session_trace_process(r->session, pid);
	if (err)
		return err;
	/* a process may exit between the /proc scan and here: not an error */
	err = procfs_for_each_thread(pid, write_comm, r);
	return err == -ENOENT ? 0 : err;
}

static int name_process(void *ctx, pid_t pid)
{
	int err;

	if (pid == getpid())
		return 0; /* never traced: see self_tgid */
	err = procfs_for_each_thread(pid, write_comm, ctx);

	return err == -ENOENT ? 0 : err;
}

/* The targets: a launched command, -p pids with their existing descendants, or (-a) names for
 * every process, which BPF then traces without a filter. */
static int add_targets(struct recorder *r)
{
	const struct record_opts *o = &r->opts;
	int err = 0;

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

static bool child_exited(struct recorder *r)
{
	if (r->cmd.pid <= 0 || r->child_reaped)
		return r->child_reaped;
	if (waitpid(r->cmd.pid, &r->child_status, WNOHANG) == r->cmd.pid)
		r->child_reaped = true;
	return r->child_reaped;
}

static void total_losses(struct recorder *r, uint64_t *sum)
{
	uint64_t counts[GS_LOSS_NKINDS];

	bpf_session_losses(r->session, counts);
	*sum = 0;
	for (int k = 0; k < GS_LOSS_NKINDS; k++)
		*sum += counts[k];
}

static int write_losses(struct recorder *r, uint64_t ts, uint64_t *total, bool warn);

/* Cumulative statistics and loss counters, so a recording that never reaches its end (the
 * machine or gpuspy killed) still holds exact totals up to here; readers keep the last. */
static int checkpoint_stats(struct recorder *r, uint64_t now)
{
	uint64_t lost;
	int err = bpf_session_write_stats(r->session, r->writer, now);

	return err ?: write_losses(r, now, &lost, false);
}

static const char *poll_until_stop(struct recorder *r)
{
	uint64_t start = gs_monotonic_ns(), last_flush = start, last_stats = start, now, lost;
	struct status_line status;
	int n;

	status_line_init(&status, start);
	for (;;) {
		n = bpf_session_poll(r->session, POLL_MS);
		if (r->write_err)
			return "write error";
		if (n < 0 && n != -EINTR)
			return "ring buffer error";
		if (stop_signal)
			return "signal";
		now = gs_monotonic_ns();
		if (r->opts.duration_ns && now - start >= r->opts.duration_ns)
			return "duration";
		if (r->cmd.pid > 0 ? child_exited(r) : target_watch_all_exited(&r->watch))
			return "target exited";
		if (r->opts.stats_interval_ns && now - last_stats >= r->opts.stats_interval_ns) {
			if ((r->write_err = checkpoint_stats(r, now)))
				return "write error";
			last_stats = now;
		}
		if (now - last_flush >= FLUSH_EVERY_NS) {
			if ((r->write_err = trace_writer_flush(r->writer)))
				return "write error";
			last_flush = now;
			if (!r->opts.quiet) {
				total_losses(r, &lost);
				status_line_tick(&status, now, r->events,
						 trace_writer_bytes(r->writer), lost);
			}
		}
	}
	status_line_end(&status);
}

/* A launched command still running when recording stops gets SIGTERM (as nsys does), then
 * SIGKILL after a grace period, so gpuspy never leaves it orphaned. */
static void stop_child(struct recorder *r)
{
	if (r->cmd.pid <= 0 || child_exited(r))
		return;
	kill(r->cmd.pid, SIGTERM);
	for (int i = 0; i < CHILD_GRACE_SECS * 10 && !child_exited(r); i++) {
		bpf_session_poll(r->session, POLL_MS);
	}
	if (!child_exited(r)) {
		kill(r->cmd.pid, SIGKILL);
		if (waitpid(r->cmd.pid, &r->child_status, 0) == r->cmd.pid)
			r->child_reaped = true;
	}
}

static int write_losses(struct recorder *r, uint64_t ts, uint64_t *total, bool warn)
{
	struct gs_loss rec = {.hdr = {.type = GS_REC_LOSS, .size = sizeof(rec), .ts = ts}};
	uint64_t counts[GS_LOSS_NKINDS];

	bpf_session_losses(r->session, counts);
	*total = 0;
	for (int k = 0; k < GS_LOSS_NKINDS; k++) {
		rec.count[k] = counts[k];
		*total += counts[k];
		if (counts[k] && warn)
			gs_warn("lost %llu %s", (unsigned long long)counts[k],
				gs_loss_kind_name(k));
	}
	return trace_writer_append(r->writer, &rec.hdr);
}

/* Detach, drain what is still in the ring, then the exact statistics and the trailer. */
static int finish_trace(struct recorder *r)
{
	uint64_t now, lost = 0;
	int err;

	bpf_session_detach(r->session);
	bpf_session_drain(r->session);
	if (r->write_err) {
		gs_error("cannot write %s: %s", r->opts.output, strerror(-r->write_err));
		return r->write_err;
	}
	now = gs_monotonic_ns();
	err = bpf_session_write_stats(r->session, r->writer, now);
	err = err ?: write_losses(r, now, &lost, true);
	if (!err) {
		uint64_t records = trace_writer_records(r->writer) + 1; /* + the trailer */

		err = trace_writer_finish(r->writer, now);
		r->writer = NULL;
		if (!err && !r->opts.quiet)
			fprintf(stderr, "gpuspy: wrote %s (%llu records, %llu events, %llu lost)\n",
				r->opts.output, (unsigned long long)records,
				(unsigned long long)r->events, (unsigned long long)lost);
	}
	if (err)
		gs_error("cannot finish %s: %s", r->opts.output, strerror(-err));
	return err;
}

static int check_environment(const struct record_opts *o)
{
	int err = privileges_check();

	if (err)
		return err;
	err = privileges_check_btf();
	if (err)
		return err;
	for (size_t i = 0; i < o->npids; i++) {
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			gs_error("cannot attach to pid %d: no such process", o->pids[i]);
			return GS_EXIT_NO_TARGET;
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
	    .btf_path = getenv("GPUSPY_BTF_PATH"),
	    .launch_pid = r->cmd.pid,
	};
	int err = bpf_session_open(&cfg, on_record, r, &r->session);

	if (err)
		return err == -EPERM ? GS_EXIT_PERMISSION : GS_EXIT_FAILURE;
	err = add_targets(r);
	if (err) {
		gs_error("cannot register the target processes: %s", strerror(-err));
		return GS_EXIT_FAILURE;
	}
	if (!o->command && !o->trace_all && target_watch_open(&r->watch, o->pids, o->npids)) {
		gs_error("cannot watch the target processes: %s", strerror(errno));
		return GS_EXIT_FAILURE;
	}
	err = bpf_session_attach(r->session);
	return err == -EPERM ? GS_EXIT_PERMISSION : err ? GS_EXIT_FAILURE : 0;
}

static int release_command(struct recorder *r)
{
	int child_errno = launch_release(&r->cmd);

	if (!child_errno)
		return 0;
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

	if (open_trace(r, now))
		return GS_EXIT_FAILURE;
	r->fd_names = fd_names_new();
	if (!r->fd_names)
		return GS_EXIT_FAILURE;
	if (r->opts.command && launch_prepare(r->opts.command, &r->cmd)) {
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
	stop_child(r);
	if (finish_trace(r))
		return GS_EXIT_FAILURE;
	if (r->cmd.pid > 0)
		return r->child_reaped ? launch_exit_code(r->child_status) : GS_EXIT_FAILURE;
	return GS_EXIT_OK;
}

static void cleanup(struct recorder *r)
{
	if (r->cmd.pid > 0 && !r->child_reaped)
		launch_abort(&r->cmd);
	bpf_session_destroy(r->session);
	/* a trace that could not be finished keeps what was written: it reads as truncated */
	trace_writer_abandon(r->writer);
	fd_names_free(r->fd_names);
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
	ret = check_environment(&r.opts);
	if (ret == 0) {
		install_signal_handlers();
		ret = record(&r);
	}
	cleanup(&r);
	return ret;
}
