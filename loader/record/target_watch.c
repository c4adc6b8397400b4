// SPDX-License-Identifier: MIT
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "loader/record/target_watch.h"

int target_watch_open(struct target_watch *w, const pid_t *pids, size_t n)
{
	w->fds = calloc(n, sizeof(*w->fds));
	w->n = 0;
	if (!w->fds)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int fd = (int)syscall(SYS_pidfd_open, pids[i], 0);

		if (fd < 0)
			return -1;
		w->fds[w->n++] = fd;
	}
	return 0;
}

/* A pidfd turns readable when its process exits, zombie or reaped. */
bool target_watch_all_exited(struct target_watch *w)
{
	for (size_t i = 0; i < w->n; i++) {
		struct pollfd p = {.fd = w->fds[i], .events = POLLIN};

		if (poll(&p, 1, 0) <= 0)
			return false;
	}
	return w->n > 0;
}

void target_watch_close(struct target_watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		close(w->fds[i]);
	free(w->fds);
	w->fds = NULL;
	w->n = 0;
}
