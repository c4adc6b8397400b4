// SPDX-License-Identifier: MIT
/* The process that resumes what gpuspy held when gpuspy cannot (hold_watchdog.h). */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "loader/proc/procfs.h"
#include "loader/session/hold_watchdog.h"
#include "loader/session/unwind_fix.h"

#define WATCHDOG_HELD_FD 3
#define WATCHDOG_PIDFD	 4
#define WATCHDOG_FD_PARK 64

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void key_of(const struct gs_hdr *rec, struct gs_hold_key *k)
{
	memset(k, 0, sizeof(*k));
	k->tgid = rec->pid;
	k->tid = rec->tid;
	k->ts = rec->ts;
}

bool hold_watchdog_holding(int held_fd, const struct gs_hdr *rec)
{
	static struct gs_op_unwind v; /* the loader's thread only */
	struct gs_hold_key k;

	key_of(rec, &k);
	return held_fd < 0 || !bpf_map_lookup_elem(held_fd, &k, &v);
}

/* The process is stopped (or traced-stopped), or the SIGSTOP BPF sent its thread is still
 * pending: that thread is on its way back to user space, where the stop takes effect. */
static bool stop_in_effect(const struct gs_hdr *rec)
{
	const unsigned long long stop_bit = 1ull << (SIGSTOP - 1);
	char dir[48], state[32];

	snprintf(dir, sizeof(dir), "%u", rec->pid);
	if (procfs_status_text(dir, "State", state, sizeof(state)) &&
	    (state[0] == 'T' || state[0] == 't'))
		return true;
	snprintf(dir, sizeof(dir), "%u/task/%u", rec->pid, rec->tid);
	return ((procfs_status_field(dir, "SigPnd", 16) | procfs_status_field(dir, "ShdPnd", 16)) &
		stop_bit) != 0;
}

bool hold_watchdog_stopped(const struct gs_hdr *rec)
{
	/* between taking the SIGSTOP and the group stop neither shows: look once more */
	const struct timespec settle = {0, 1000000};

	if (stop_in_effect(rec))
		return true;
	nanosleep(&settle, NULL);
	return stop_in_effect(rec);
}

bool hold_watchdog_done(int held_fd, const struct gs_hdr *rec)
{
	struct gs_hold_key k;

	key_of(rec, &k);
	return held_fd < 0 || !bpf_map_delete_elem(held_fd, &k) || errno != ENOENT;
}

/* Resumes the holds older than `max_age_ns` (all of them with 0), as the loader would have;
 * returns the time of the oldest hold left (0: none). */
static uint64_t sweep(int fd, uint64_t max_age_ns)
{
	struct gs_hold_key k, next;
	struct gs_op_unwind v;
	bool first = true;
	uint64_t now = monotonic_ns(), oldest = 0;

	/* a deleted key makes the walk start over: those left are each seen again, once */
	while (!bpf_map_get_next_key(fd, first ? NULL : &k, &next)) {
		first = false;
		k = next;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		/* not now - k.ts: a hold made during the walk is younger than `now` */
		if (max_age_ns && k.ts + max_age_ns > now) {
			if (!oldest || k.ts < oldest)
				oldest = k.ts;
			continue;
		}
		if (v.hdr.type == GS_REC_OP_UNWIND && hold_watchdog_stopped(&v.hdr))
			unwind_fix(&v);
		kill((pid_t)k.tgid, SIGCONT);
		bpf_map_delete_elem(fd, &k);
	}
	return oldest;
}

/* Until the oldest hold left reaches the bound; with none, a whole bound, since a hold made
 * meanwhile reaches it no sooner. The loader ends nearly every hold within milliseconds, so
 * an idle host wakes the watchdog every GS_HOLD_MAX_NS, not every few milliseconds. */
static int wait_ms(uint64_t oldest)
{
	uint64_t now = monotonic_ns(),
		 due = oldest ? oldest + GS_HOLD_MAX_NS : now + GS_HOLD_MAX_NS;

	return due <= now ? 0 : (int)((due - now + 999999) / 1000000);
}

/* The watchdog's life: resume what outlasts the bound, and everything once gpuspy is gone. */
static void __attribute__((noreturn)) watch(void)
{
	struct pollfd p = {.fd = WATCHDOG_PIDFD, .events = POLLIN};
	uint64_t oldest = 0;

	for (;;) {
		int n = poll(&p, 1, wait_ms(oldest));

		if (n > 0 || (n < 0 && errno != EINTR)) {
			sweep(WATCHDOG_HELD_FD, 0);
			_exit(0);
		}
		oldest = sweep(WATCHDOG_HELD_FD, GS_HOLD_MAX_NS);
	}
}

/* In the child: only the map and the parent's pidfd stay open, nothing that could keep a BPF
 * program attached or an output open after gpuspy is gone; no terminal, no job-control or
 * terminal signals, and the OOM killer takes anything else first. */
static void become_watchdog(int held_fd, pid_t parent)
{
	int pidfd = (int)syscall(SYS_pidfd_open, parent, 0), null;
	sigset_t all;
	int fd;

	if (pidfd < 0 || getppid() != parent) { /* gone already */
		sweep(held_fd, 0);
		_exit(0);
	}
	/* above the fds they go to first: either may be one of them already */
	held_fd = fcntl(held_fd, F_DUPFD, WATCHDOG_FD_PARK);
	pidfd = fcntl(pidfd, F_DUPFD, WATCHDOG_FD_PARK);
	if (held_fd < 0 || pidfd < 0 || dup2(held_fd, WATCHDOG_HELD_FD) < 0 ||
	    dup2(pidfd, WATCHDOG_PIDFD) < 0)
		_exit(1);
	null = open("/dev/null", O_RDWR);
	for (int i = 0; i < 3 && null >= 0; i++)
		dup2(null, i);
	syscall(SYS_close_range, WATCHDOG_PIDFD + 1, ~0u, 0);
	setsid();
	prctl(PR_SET_NAME, "gpuspy-watchdog");
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		/* where it is not allowed, it stays a small target anyway */
		ssize_t n = write(fd, "-1000", 5);

		(void)n;
		close(fd);
	}
	watch();
}

int hold_watchdog_start(int held_fd, pid_t *pid)
{
	pid_t parent = getpid(), child;

	fflush(NULL);
	child = fork();
	if (child < 0)
		return -errno;
	if (!child)
		become_watchdog(held_fd, parent);
	*pid = child;
	return 0;
}
