// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "loader/record/launch.h"
#include "loader/record/run_as.h"

/* The file execvp() would run for `name`, found before tracing starts: execvp's own PATH
 * search makes one failing execve per directory tried, which would count as the command's.
 * False when none is found (execvp then reports why). */
static bool resolve_in_path(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH"), *dir, *end;
	struct stat st;

	if (strchr(name, '/'))
		return false; /* run as given */
	for (dir = path && *path ? path : "/usr/local/bin:/bin:/usr/bin"; dir;
	     dir = end ? end + 1 : NULL) {
		int dirlen;

		end = strchr(dir, ':');
		dirlen = end ? (int)(end - dir) : (int)strlen(dir);
		if ((size_t)snprintf(out, len, "%.*s%s%s", dirlen, dir, dirlen ? "/" : "", name) >=
		    len)
			continue;
		if (!stat(out, &st) && S_ISREG(st.st_mode) && !access(out, X_OK))
			return true;
	}
	return false;
}

static void child_wait_and_exec(char *const argv[], const char *resolved, const struct run_as *user,
				int go_fd, int exec_fd)
{
	char go;
	int err;

	/* EOF without the byte: gpuspy gave up (attach failed); never run untraced */
	if (read(go_fd, &go, 1) != 1)
		_exit(127);
	close(go_fd);
	/* after the go: until then the child only waits, and BPF counts nothing before exec */
	err = user ? run_as_apply(user) : 0;
	if (!err) {
		if (resolved)
			execv(resolved, argv);
		else
			execvp(argv[0], argv);
		err = errno;
	}
	if (write(exec_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

int launch_prepare(char *const argv[], const struct run_as *user, struct launched_cmd *out)
{
	char resolved[PATH_MAX];
	bool found = resolve_in_path(argv[0], resolved, sizeof(resolved));
	int go[2], ex[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ex, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		return err;
	}
	if (pid == 0) {
		close(go[1]);
		close(ex[0]);
		signal(SIGPIPE, SIG_DFL);
		child_wait_and_exec(argv, found ? resolved : NULL, user, go[0], ex[1]);
	}
	close(go[0]);
	close(ex[1]);
	out->pid = pid;
	out->go_fd = go[1];
	out->exec_fd = ex[0];
	return 0;
}

int launch_release(struct launched_cmd *cmd)
{
	char go = 1;
	int child_errno = 0;
	ssize_t n;

	if (write(cmd->go_fd, &go, 1) != 1)
		return errno ? errno : EIO;
	close(cmd->go_fd);
	cmd->go_fd = -1;
	do
		n = read(cmd->exec_fd, &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(cmd->exec_fd);
	cmd->exec_fd = -1;
	return n == sizeof(child_errno) ? child_errno : 0;
}

void launch_abort(struct launched_cmd *cmd)
{
	if (cmd->go_fd >= 0)
		close(cmd->go_fd); /* the child sees EOF and exits without exec */
	if (cmd->exec_fd >= 0)
		close(cmd->exec_fd);
	cmd->go_fd = cmd->exec_fd = -1;
	if (cmd->pid > 0)
		waitpid(cmd->pid, NULL, 0);
	cmd->pid = 0;
}

int launch_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
