// SPDX-License-Identifier: MIT
/*
 * When is it safe to make a thread of another process call dlopen()? dlopen takes ld.so's
 * recursive load lock and malloc's arena locks, and pthread_create (the bridge's start) the
 * stack-cache lock. A thread stopped while it holds one of them, inside ld.so or malloc, would
 * deadlock on itself or re-enter the loader half-way. Those code paths make only a few
 * syscalls (mmap, munmap, mprotect, madvise, brk, openat, read and close from ld.so's own
 * copies, futex waits for a contended lock), so a thread is borrowed only where it is
 * entering, or blocked in, a *waiting* syscall that none of them makes: sleeps, polls, reads
 * and receives, waits for children, and futex waits of the FUTEX_WAIT_BITSET kind (condition
 * variables, semaphores, joins; glibc's internal locks use plain FUTEX_WAIT) — and only when
 * that syscall instruction is in the process's libc, never in ld.so. A thread that is blocked
 * in such a call is taken at once (/proc is sampled for one for SAMPLE_PHASE_NS); otherwise
 * the main thread is followed from syscall to syscall (this thread alone is slowed
 * meanwhile) until it enters one, for the rest of SAFE_POINT_WAIT_NS. The remaining risk is a
 * thread that waits in a signal handler which interrupted malloc: the call then times out
 * (CALL_TIMEOUT_NS) and is left to finish on its own. A thread is never borrowed while any
 * thread of the process holds one of ld.so's locks (ldso_locks.h): gpuspy waits for the load
 * in progress to end, until SAFE_POINT_WAIT_NS, and otherwise says so and loads nothing.
 *
 * Every call returns through an rt_sigreturn frame that restores the thread (remote_frame.h),
 * so a gpuspy killed mid-call leaves the thread to finish the call and go on. Processes are
 * left alone where the load itself could harm them: those under a seccomp filter (the
 * bridge's open or mmap could be answered with SIGSYS or a kill), and, unless the user named
 * them with -p, those running with other credentials than their real ids (setuid/setgid) or
 * not dumpable, whose environment came from a less privileged user.
 */
#include <errno.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "lib/clocks.h"
#include "lib/syscall_names.h"
#include "loader/bridge/bridge_inject.h"
#include "loader/bridge/ldso_locks.h"
#include "loader/bridge/remote_call.h"
#include "loader/bridge/remote_frame.h"
#include "loader/proc/elf_symbols.h"
#include "loader/proc/proc_maps.h"
#include "loader/proc/proc_mem.h"
#include "loader/proc/procfs.h"
#include "output/trace/trace_format.h"

#define SAFE_POINT_WAIT_NS 2000000000ull /* for some thread to reach a safe point, in all */
#define BLOCKED_STOP_NS	   50000000ull	 /* for a thread blocked in a syscall to stop */
#define SAMPLE_PHASE_NS	   1500000000ull /* of it, looking for a blocked thread in /proc */
#define SAMPLE_EVERY_NS	   500000ull
#define FOLLOW_PHASE_NS	   (SAFE_POINT_WAIT_NS - SAMPLE_PHASE_NS)
#define LDSO_RECHECK_NS	   20000000ull	 /* while another thread holds ld.so's lock */
#define CALL_TIMEOUT_NS	   5000000000ull /* for dlopen (the bridge pulls in libcupti) */
#define WHY_MAX		   256
#define MAX_LIBC_TEXT	   8

struct range {
	uint64_t start, end;
};

/* What gpuspy needs to know of the process before it stops anything. */
struct target {
	pid_t pid;
	const struct inject_lib *lib;
	struct stat bridge_st;
	bool named;		  /* the user named it with -p */
	uint64_t dlopen;	  /* run-time address, 0 if not found */
	uint64_t restorer;	  /* libc's rt_sigreturn trampoline, 0 if not found */
	struct proc_mapping ldso; /* ld.so's text (ldso.end == 0: none seen) */
	struct ldso_locks locks;  /* where ld.so's locks are, once found */
	struct range libc_text[MAX_LIBC_TEXT];
	size_t nlibc_text;
	uint64_t late_start_off; /* file offset of the library's entry */
	uint64_t late_start;	 /* its run-time address, once the bridge is mapped */
	long safe_nr;		 /* the syscall of the safe point last accepted */
	bool safe_entry;	 /* ... at its entry (else blocked in it) */
	struct bridge_inject_result *res;
};

static void set_result(struct bridge_inject_result *res, uint32_t outcome, int err, const char *fmt,
		       ...) __attribute__((format(printf, 4, 5)));

static void set_result(struct bridge_inject_result *res, uint32_t outcome, int err, const char *fmt,
		       ...)
{
	va_list ap;

	res->outcome = outcome;
	res->err = err;
	va_start(ap, fmt);
	vsnprintf(res->message, sizeof(res->message), fmt, ap);
	va_end(ap);
}

/* glibc 2.34+ has dlopen in libc itself; older ones in libdl, with libpthread's own syscall
 * wrappers beside libc's. */
static bool is_libc(const char *base)
{
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-2.", 7) ||
	       !strncmp(base, "libpthread", 10) || !strncmp(base, "libdl", 5);
}

/* The run-time address of file offset `off` of a mapped file, if this mapping holds it. */
static uint64_t runtime_address(const struct proc_mapping *m, uint64_t off)
{
	if (!off || off < m->offset || off - m->offset >= m->end - m->start)
		return 0;
	return m->start + (off - m->offset);
}

static void note_libc(struct target *t, const struct proc_mapping *m)
{
	static const char *const names[] = {"dlopen", "__libc_dlopen_mode"};
	uint64_t off[2] = {0};
	char host[PATH_MAX + 32];

	if (t->nlibc_text < MAX_LIBC_TEXT)
		t->libc_text[t->nlibc_text++] = (struct range){m->start, m->end};
	if (!t->restorer && !strncmp(proc_maps_file_name(m->path), "libc", 4))
		t->restorer = remote_frame_find_restorer(t->pid, m->start, m->end);
	proc_maps_host_path(t->pid, m->path, host, sizeof(host));
	if (elf_find_functions(host, names, 2, false, off) <= 0)
		return;
	if (!t->dlopen)
		t->dlopen = runtime_address(m, off[0]) ?: runtime_address(m, off[1]);
}

static bool is_bridge(const struct target *t, const struct proc_mapping *m)
{
	return m->exec && m->dev == t->bridge_st.st_dev && m->ino == t->bridge_st.st_ino;
}

/* After the dlopen: where the bridge's entry is. */
static int find_late_start(void *ctx, const struct proc_mapping *m)
{
	struct target *t = ctx;

	if (is_bridge(t, m) && !t->late_start)
		t->late_start = runtime_address(m, t->late_start_off);
	return 0;
}

/* Before stopping anything: libc's text and functions, and a bridge already loaded. */
static int scan_mapping(void *ctx, const struct proc_mapping *m)
{
	struct target *t = ctx;

	if (is_bridge(t, m))
		return find_late_start(ctx, m);
	if (m->exec && is_libc(proc_maps_file_name(m->path)))
		note_libc(t, m);
	if (m->exec && !t->ldso.end && proc_maps_is_ldso(m->path))
		t->ldso = *m;
	return 0;
}

/* Seccomp mode of a thread's /proc status directory: 0 none, 1 strict, 2 filter. */
static unsigned seccomp_mode(const char *dir, unsigned *filters)
{
	*filters = (unsigned)procfs_status_field(dir, "Seccomp_filters", 10);
	return (unsigned)procfs_status_field(dir, "Seccomp", 10);
}

static int refuse_seccomp(struct bridge_inject_result *res, const char *dir, pid_t tid)
{
	unsigned filters, mode = seccomp_mode(dir, &filters);

	if (!mode)
		return 0;
	set_result(res, GS_BRIDGE_LOAD_SKIPPED, -EPERM,
		   mode == 1
		       ? "thread %d runs in seccomp strict mode: the bridge's dlopen would "
			 "kill it"
		       : "thread %d runs under %u seccomp filter(s): the bridge's dlopen could "
			 "be refused or kill the process",
		   tid, filters);
	return -1;
}

/* Whether the process runs with other ids than its real ones (setuid/setgid) or is not
 * dumpable (its /proc files are then owned by root whatever its uid; the directory itself
 * keeps the owner it had when first looked up): its environment, which the bridge reads, may
 * come from a less privileged user. */
static bool privileged_by_exec(pid_t pid, const char *dir, char *why, size_t len)
{
	unsigned long long ids[2][4] = {{0}};
	static const char *const keys[] = {"Uid", "Gid"};
	char line[128], path[48];
	struct stat st;

	for (int k = 0; k < 2; k++) {
		if (!procfs_status_text(dir, keys[k], line, sizeof(line)) ||
		    sscanf(line, "%llu %llu %llu %llu", &ids[k][0], &ids[k][1], &ids[k][2],
			   &ids[k][3]) != 4)
			continue;
		if (ids[k][1] != ids[k][0] || ids[k][2] != ids[k][0] || ids[k][3] != ids[k][0]) {
			snprintf(why, len, "it runs set%cid (real %s %llu, effective %llu)",
				 k ? 'g' : 'u', k ? "gid" : "uid", ids[k][0], ids[k][1]);
			return true;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!stat(path, &st) && st.st_uid == 0 && ids[0][0] != 0) {
		snprintf(why, len, "it is not dumpable");
		return true;
	}
	return false;
}

/* Reasons to leave the process alone that need no ptrace: 0 to go on. */
/* PF_EXITING (include/linux/sched.h), in the flags of /proc/PID/stat: do_exit() has begun. */
#define TASK_PF_EXITING 0x4ull

/* Whether the process is gone or exiting: it has let go of its memory and filesystem, so its
 * environment reads empty and its root cannot be followed, which would look like a container. */
static bool exiting(pid_t pid)
{
	unsigned long long flags;

	return procfs_stat_field(pid, 9, &flags) || (flags & TASK_PF_EXITING);
}

static int check_process(struct target *t)
{
	struct bridge_inject_result *res = t->res;
	char value[PATH_MAX], seen[PATH_MAX + 32], dir[16];
	struct stat st;
	pid_t tracer;

	snprintf(dir, sizeof(dir), "%d", t->pid);
	if (procfs_status_text(dir, "State", value, sizeof(value)) &&
	    (value[0] == 'T' || value[0] == 't')) {
		set_result(res, GS_BRIDGE_LOAD_SKIPPED, -EAGAIN, "the process is stopped");
		return -1;
	}
	tracer = (pid_t)procfs_status_field(dir, "TracerPid", 10);
	if (tracer) {
		set_result(res, GS_BRIDGE_LOAD_SKIPPED, -EBUSY,
			   "already traced by pid %d (a debugger?)", tracer);
		return -1;
	}
	if (refuse_seccomp(res, dir, t->pid))
		return -1;
	if (!t->named && privileged_by_exec(t->pid, dir, value, sizeof(value))) {
		set_result(res, GS_BRIDGE_LOAD_SKIPPED, -EPERM,
			   "%s: its environment may come from another user (name it with -p to "
			   "load it anyway)",
			   value);
		return -1;
	}
	if (t->lib->cuda)
		procfs_environ_value(t->pid, "CUDA_INJECTION64_PATH", value, sizeof(value));
	else
		value[0] = '\0';
	if (value[0]) {
		set_result(res, GS_BRIDGE_LOAD_SKIPPED, 0,
			   "CUDA_INJECTION64_PATH=%s: the driver loads that tool at cuInit "
			   "(another CUPTI user, or gpuspy's bridge not initialised yet)",
			   value);
		return -1;
	}
	proc_maps_host_path(t->pid, t->lib->path, seen, sizeof(seen));
	if (stat(seen, &st) || st.st_dev != t->bridge_st.st_dev ||
	    st.st_ino != t->bridge_st.st_ino) {
		if (exiting(t->pid)) {
			set_result(res, GS_BRIDGE_LOAD_SKIPPED, -ESRCH, "the process is exiting");
			return -1;
		}
		set_result(res, GS_BRIDGE_LOAD_SKIPPED, -ENOENT,
			   "%s is not the same file in the process's filesystem (a container?)",
			   t->lib->path);
		return -1;
	}
	return 0;
}

static bool in_libc(const struct target *t, uint64_t addr)
{
	for (size_t i = 0; i < t->nlibc_text; i++)
		if (addr >= t->libc_text[i].start && addr < t->libc_text[i].end)
			return true;
	return false;
}

/* Waiting syscalls that ld.so, malloc and pthread_create never make while they hold a lock. */
static bool waiting_syscall(long nr, const uint64_t *args)
{
	switch (nr) {
	case SYS_read:
	case SYS_readv:
	case SYS_pread64:
	case SYS_preadv:
	case SYS_preadv2:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_poll:
	case SYS_ppoll:
	case SYS_select:
	case SYS_pselect6:
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
	case SYS_epoll_pwait2:
	case SYS_nanosleep:
	case SYS_clock_nanosleep:
	case SYS_pause:
	case SYS_rt_sigsuspend:
	case SYS_rt_sigtimedwait:
	case SYS_wait4:
	case SYS_waitid:
	case SYS_accept:
	case SYS_accept4:
	case SYS_msgrcv:
		return true;
	case SYS_futex:
		return (args[1] & FUTEX_CMD_MASK) == FUTEX_WAIT_BITSET;
	default:
		return false;
	}
}

/* A waiting syscall whose `syscall` instruction (2 bytes before `ip`) is libc's. */
static bool at_safe_syscall(const struct target *t, const struct remote_stop *at)
{
	return waiting_syscall(at->nr, at->args) && at->ip >= 2 && in_libc(t, at->ip - 2);
}

static bool safe_point(void *ctx, const struct remote_stop *at)
{
	struct target *t = ctx;

	if (!at_safe_syscall(t, at))
		return false;
	t->safe_nr = at->nr;
	t->safe_entry = at->entry;
	return true;
}

/* Whether the thread is blocked in a waiting syscall now (/proc/PID/task/TID/syscall). */
static bool blocked_safely(const struct target *t, pid_t tid)
{
	char path[96], line[512];
	struct remote_stop at = {0};
	unsigned long long a[6], sp, pc;
	long nr;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", t->pid, tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fgets(line, sizeof(line), f)
		? sscanf(line, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1],
			 &a[2], &a[3], &a[4], &a[5], &sp, &pc)
		: 0;
	fclose(f);
	if (n != 9)
		return false;
	at.nr = nr;
	for (int i = 0; i < 6; i++)
		at.args[i] = a[i];
	at.ip = pc;
	return at_safe_syscall(t, &at);
}

/* Threads blocked at a safe point now. */
static size_t blocked_threads(const struct target *t, pid_t *tids, size_t max)
{
	char path[64];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", t->pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid > 0 && blocked_safely(t, tid))
			tids[n++] = tid;
	}
	closedir(d);
	return n;
}

static const char *ptrace_refusal_hint(void)
{
	char scope[16] = "";
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");

	if (f) {
		if (!fgets(scope, sizeof(scope), f))
			scope[0] = '\0';
		fclose(f);
	}
	if (scope[0] == '3')
		return "Yama ptrace_scope is 3 (no ptrace at all until reboot)";
	if (scope[0] == '2')
		return "Yama ptrace_scope is 2 and gpuspy lacks CAP_SYS_PTRACE";
	return "gpuspy lacks CAP_SYS_PTRACE, or a seccomp/container policy forbids ptrace";
}

/* Why a dlopen loaded nothing: glibc's dlerror() text is a return value, which a call that
 * returns through rt_sigreturn does not give back, so the open that failed is named
 * instead. */
static void dlopen_failed(struct target *t, const struct remote_thread *th)
{
	if (th->failed_open[0])
		set_result(t->res, GS_BRIDGE_LOAD_FAILED, -ENOEXEC,
			   "dlopen did not load %s: the last open that failed was %s: %s",
			   t->lib->what, th->failed_open, strerror(th->failed_open_err));
	else
		set_result(t->res, GS_BRIDGE_LOAD_FAILED, -ENOEXEC,
			   "dlopen did not load %s (no open failed: a missing symbol or "
			   "version?)",
			   t->lib->what);
}

/* The library's late start, after the dlopen: 0 it started, else said in the result. */
static void start_library(struct target *t, struct remote_thread *th)
{
	const struct inject_lib *lib = t->lib;
	uint64_t args[6];
	int32_t started = 0;
	char why[WHY_MAX] = "";
	int err;

	memcpy(args, lib->args, sizeof(args));
	err = remote_call(th, t->late_start, args, lib->blob, lib->blob_len, lib->blob_args,
			  gs_monotonic_ns() + CALL_TIMEOUT_NS);
	if (!err)
		err = proc_mem_read(t->pid, th->blob_addr + lib->started_off, &started,
				    sizeof(started));
	if (!err && started != 1 && lib->why_len) {
		size_t n = lib->why_len < sizeof(why) ? lib->why_len : sizeof(why);

		if (!proc_mem_read(t->pid, th->blob_addr + lib->why_off, why, n))
			why[n - 1] = '\0';
	}
	if (err || started != 1)
		set_result(t->res,
			   lib->refused_outcome && why[0] ? lib->refused_outcome
							  : GS_BRIDGE_LOAD_FAILED,
			   err ?: -EIO, "%s did not start: %s", lib->what,
			   err	    ? strerror(-err)
			   : why[0] ? why
				    : "it said no");
}

/* dlopen(library) and its late start, in a thread stopped at a safe point. */
static void load_in_thread(struct target *t, struct remote_thread *th)
{
	struct bridge_inject_result *res = t->res;
	uint64_t args[6] = {0, RTLD_NOW};
	int err;

	err = remote_call(th, t->dlopen, args, t->lib->path, strlen(t->lib->path) + 1, 1u,
			  gs_monotonic_ns() + CALL_TIMEOUT_NS);
	if (err == -ETIMEDOUT) {
		set_result(res, GS_BRIDGE_LOAD_FAILED, err,
			   "dlopen did not return within %llu s: left to finish in thread %d, "
			   "which then goes on by itself",
			   CALL_TIMEOUT_NS / 1000000000ull, th->tid);
		return;
	}
	if (err) {
		set_result(res, GS_BRIDGE_LOAD_FAILED, err, "dlopen failed: %s",
			   err == -EFAULT ? "it faulted (the thread was put back)"
					  : strerror(-err));
		return;
	}
	proc_maps_for_each(t->pid, find_late_start, t);
	if (!t->late_start) {
		dlopen_failed(t, th);
		return;
	}
	start_library(t, th);
}

/* Who holds one of ld.so's locks (0: nobody); -errno said in the result. */
static int ldso_holder(struct target *t, pid_t *holder)
{
	int err = ldso_lock_holder(&t->locks, holder);

	if (err)
		set_result(t->res, GS_BRIDGE_LOAD_SKIPPED, err,
			   "cannot tell whether ld.so's lock is held (%s): not loaded",
			   err == -ENOTSUP ? "no lock recognised in _rtld_global" : strerror(-err));
	return err;
}

static void say_ldso_busy(struct target *t, pid_t holder)
{
	set_result(t->res, GS_BRIDGE_LOAD_SKIPPED, -EBUSY,
		   "ld.so's lock is held by thread %d (a dlopen or a library constructor in "
		   "progress) for longer than %llu ms: not loaded",
		   holder, SAFE_POINT_WAIT_NS / 1000000ull);
}

/* Last checks with the thread held, so that it cannot change under them: its own seccomp
 * state, and nobody (this thread included) in ld.so. -EBUSY: ld.so's lock is held, try again
 * later; -ECANCELED: refused. */
static int check_stopped_thread(struct target *t, pid_t tid)
{
	char dir[48];
	pid_t holder;
	int err;

	snprintf(dir, sizeof(dir), "%d/task/%d", t->pid, tid);
	if (refuse_seccomp(t->res, dir, tid))
		return -ECANCELED;
	err = ldso_holder(t, &holder);
	if (err)
		return -ECANCELED;
	if (holder) {
		say_ldso_busy(t, holder);
		return -EBUSY;
	}
	return 0;
}

/* One thread: stop it at a safe point, load, restore. 0: done (whatever the outcome);
 * -EAGAIN: this thread did not reach a safe point in time, try another. */
static int try_thread(struct target *t, pid_t tid, uint64_t deadline, bridge_inject_hold_fn hold,
		      void *ctx)
{
	struct bridge_inject_result *res = t->res;
	struct remote_thread th;
	int err = remote_attach(&th, t->pid, tid);

	if (err == -EPERM) {
		set_result(res, GS_BRIDGE_LOAD_REFUSED, err, "ptrace not permitted: %s",
			   ptrace_refusal_hint());
		return 0;
	}
	if (err) {
		set_result(res, GS_BRIDGE_LOAD_FAILED, err, "cannot ptrace thread %d: %s", tid,
			   strerror(-err));
		return err == -ESRCH ? -EAGAIN : 0;
	}
	th.restorer = t->restorer;
	err = remote_stop_safely(&th, safe_point, t, deadline);
	if (!err)
		err = check_stopped_thread(t, tid);
	if (!err) {
		res->tid = tid;
		if (hold)
			hold(ctx, tid, true);
		char name[32];

		set_result(res, GS_BRIDGE_LOAD_INJECTED, 0, "dlopen in thread %d, %s %s()", tid,
			   t->safe_entry ? "entering" : "blocked in",
			   gs_syscall_name((unsigned)t->safe_nr, name, sizeof(name)));
		load_in_thread(t, &th);
	} else if (err == -EBUSY || err == -ECANCELED) {
		/* said by check_stopped_thread */
	} else if (err == -EAGAIN) {
		set_result(res, GS_BRIDGE_LOAD_SKIPPED, err, "the process was stopped meanwhile");
	} else if (err == -ETIMEDOUT) {
		set_result(res, GS_BRIDGE_LOAD_FAILED, err,
			   "thread %d reached no safe point (a waiting syscall in libc) in time",
			   tid);
	} else {
		set_result(res, GS_BRIDGE_LOAD_FAILED, err, "thread %d: %s", tid, strerror(-err));
	}
	remote_release(&th);
	if (hold && res->tid == tid)
		hold(ctx, tid, false);
	if (th.stop_ns) {
		res->released_ns = th.resume_ns;
		res->pause_ns = th.resume_ns - th.stop_ns;
		res->wait_ns = (th.safe_ns ?: th.resume_ns) - th.stop_ns;
	}
	if (err == -EBUSY)
		return -EBUSY;
	return err == -ETIMEDOUT || err == -ESRCH ? -EAGAIN : 0;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
			      .tv_nsec = (long)(ns % 1000000000ull)};

	nanosleep(&ts, NULL);
}

/* First, without stopping anything, /proc is sampled for a thread blocked at a safe point
 * (a busy thread that syncs is, now and then); only if none shows up is the main thread
 * followed from syscall to syscall, which slows it (a stop per syscall) and can change what
 * it does: a sync whose kernel is already done when the slowed thread gets there no longer
 * sleeps. */
static void inject_stopping(struct target *t, bridge_inject_hold_fn hold, void *ctx)
{
	uint64_t sample_ns = t->lib->sample_phase_ns ?: SAMPLE_PHASE_NS;
	uint64_t start = gs_monotonic_ns(), deadline = start + SAFE_POINT_WAIT_NS;
	uint64_t follow_at = start + sample_ns;
	pid_t tids[64], holder = 0;
	int err;

	for (;;) {
		size_t n = 0;

		/* without stopping anything first: a load in progress is waited out */
		if (ldso_holder(t, &holder))
			return;
		if (!holder)
			n = blocked_threads(t, tids, 64);
		for (size_t i = 0; i < n; i++) {
			err =
			    try_thread(t, tids[i], gs_monotonic_ns() + BLOCKED_STOP_NS, hold, ctx);
			if (err == -EBUSY)
				break;
			if (err != -EAGAIN)
				return;
		}
		if (gs_monotonic_ns() >= (holder ? deadline : follow_at))
			break;
		sleep_ns(holder ? LDSO_RECHECK_NS : SAMPLE_EVERY_NS);
	}
	if (holder) {
		say_ldso_busy(t, holder);
		return;
	}
	/* at least the follow phase's share of the wait, however long ld.so's lock kept it */
	if (deadline < gs_monotonic_ns() + FOLLOW_PHASE_NS)
		deadline = gs_monotonic_ns() + FOLLOW_PHASE_NS;
	try_thread(t, t->pid, deadline, hold, ctx);
}

void inject_lib_cupti(struct inject_lib *lib, const char *bridge)
{
	static const int32_t not_started;

	*lib = (struct inject_lib){
	    .path = bridge,
	    .entry = "gpuspy_bridge_load_late",
	    .what = "the CUPTI bridge",
	    .cuda = true,
	    .blob = &not_started,
	    .blob_len = sizeof(not_started),
	    .blob_args = 1u, /* gpuspy_bridge_load_late(int32_t *started) */
	};
}

void bridge_inject(pid_t pid, const struct inject_lib *lib, bool named, bridge_inject_hold_fn hold,
		   void *ctx, struct bridge_inject_result *res)
{
	const char *const late[] = {lib->entry};
	const char *bridge = lib->path;
	struct target t = {.pid = pid, .lib = lib, .named = named, .res = res};
	sigset_t chld, old;

	memset(res, 0, sizeof(*res));
	if (stat(bridge, &t.bridge_st)) {
		set_result(res, GS_BRIDGE_LOAD_SKIPPED, -errno, "%s: %s", bridge, strerror(errno));
		return;
	}
	if (elf_find_functions(bridge, late, 1, false, &t.late_start_off) <= 0) {
		set_result(res, GS_BRIDGE_LOAD_SKIPPED, -ENOENT, "%s has no %s()", bridge,
			   lib->entry);
		return;
	}
	if (check_process(&t))
		return;
	if (proc_maps_for_each(pid, scan_mapping, &t) || !t.dlopen) {
		set_result(res, GS_BRIDGE_LOAD_SKIPPED, -ENOENT,
			   "no dlopen() in the process's libc (static, or not glibc)");
		return;
	}
	if (t.late_start) {
		set_result(res, GS_BRIDGE_LOAD_PRESENT, 0, "already loaded");
		return;
	}
	if (!t.restorer) {
		set_result(res, GS_BRIDGE_LOAD_SKIPPED, -ENOENT,
			   "no rt_sigreturn trampoline in the process's libc: a call could not "
			   "return without gpuspy");
		return;
	}
	if (!t.ldso.end || ldso_locks_find(pid, &t.ldso, &t.locks)) {
		set_result(res, GS_BRIDGE_LOAD_SKIPPED, -ENOENT,
			   "no glibc ld.so with _rtld_global in the process: whether its lock is "
			   "held cannot be told");
		return;
	}
	/* every stop of a tracee sends SIGCHLD: remote_call.c sleeps on it */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	inject_stopping(&t, hold, ctx);
	sigprocmask(SIG_SETMASK, &old, NULL);
}
