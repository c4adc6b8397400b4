// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "launch.h"

static void child_wait_and_exec(char *const argv[], int go_fd, int exec_fd)
{
	char go;
	int err;

	/* EOF without the byte: gpuspy gave up (attach failed); never run untraced */
	if (read(go_fd, &go, 1) != 1)
		_exit(127);
	close(go_fd);
	execvp(argv[0], argv);
	err = errno;
	if (write(exec_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

int launch_prepare(char *const argv[], struct launched_cmd *out)
{
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
		child_wait_and_exec(argv, go[0], ex[1]);
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
