// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include "bpf/records.h"
#include "loader/proc/procfs.h"
#include "loader/session/bpf_session.h"
#include "loader/session/thread_now.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9's <linux/pidfd.h>: a pidfd for one thread */
#endif

/* A task-storage entry by pidfd: 1 found, 0 none (the thread has not had that event since the
 * attach), -errno. */
static int lookup(int map_fd, int pidfd, void *value)
{
	if (map_fd < 0)
		return 0;
	if (!bpf_map_lookup_elem(map_fd, &pidfd, value))
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

/* No syscall entered since the attach: /proc says whether it is in one that began before. */
static void syscall_from_proc(pid_t pid, pid_t tid, struct thread_now *now)
{
	long nr;

	if (!procfs_thread_syscall(pid, tid, &nr) && nr >= 0) {
		now->in_syscall = true;
		now->nr = (uint32_t)nr;
	}
}

/* Not switched out since the attach: off CPU now means off since before it. */
static void offcpu_from_proc(pid_t pid, pid_t tid, struct thread_now *now)
{
	char dir[40], state[32];

	snprintf(dir, sizeof(dir), "%d/task/%d", pid, tid);
	if (!procfs_status_text(dir, "State", state, sizeof(state)))
		return;
	if (state[0] == 'S' || state[0] == 'D') {
		now->off_cpu = true;
		now->reason = state[0] == 'D' ? GS_OFFCPU_BLOCKED : GS_OFFCPU_SLEEPING;
	}
}

static int read_entries(struct bpf_session *s, int pidfd, pid_t pid, pid_t tid,
			struct thread_now *now)
{
	struct gs_syscall_inflight sc;
	struct gs_offcpu_inflight off;
	struct gs_cuda_thread cuda;
	int sc_fd, off_fd, cuda_fd, found;

	bpf_session_task_maps(s, &sc_fd, &off_fd, &cuda_fd);
	found = lookup(sc_fd, pidfd, &sc);
	if (found < 0)
		return found;
	if (found && sc.nr >= 0) {
		now->in_syscall = true;
		now->nr = (uint32_t)sc.nr;
		now->syscall_start = sc.start_ns;
	} else if (!found) {
		syscall_from_proc(pid, tid, now);
	}
	found = lookup(off_fd, pidfd, &off);
	if (found < 0)
		return found;
	if (found && off.valid) {
		now->off_cpu = true;
		now->reason = off.reason;
		now->off_since = off.ts;
	} else if (!found) {
		offcpu_from_proc(pid, tid, now);
	}
	/* a CUDA call that began before the attach has no frame: it is seen when it returns */
	found = lookup(cuda_fd, pidfd, &cuda);
	if (found < 0)
		return found;
	if (found && cuda.depth) {
		now->in_cuda = true;
		now->cuda_probe = (uint16_t)cuda.frames[0].cookie;
		now->cuda_start = cuda.frames[0].ts;
	}
	return 0;
}

int thread_now_read(struct bpf_session *s, pid_t pid, pid_t tid, struct thread_now *now)
{
	int pidfd, err;

	memset(now, 0, sizeof(*now));
	pidfd = (int)syscall(SYS_pidfd_open, tid, tid == pid ? 0 : PIDFD_THREAD);
	if (pidfd < 0)
		return -errno;
	err = read_entries(s, pidfd, pid, tid, now);
	close(pidfd);
	return err;
}
