// SPDX-License-Identifier: MIT
/*
 * Process churn for the statistics tests: forks N short-lived children one after another;
 * each makes three syscalls (getppid, getpid, an 8-byte write to /dev/null) and exits.
 * usage: spawner N
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void child(int null_fd)
{
	char buf[8] = "spawned";

	syscall(SYS_getppid);
	syscall(SYS_getpid);
	_exit(write(null_fd, buf, sizeof(buf)) == sizeof(buf) ? 0 : 1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0, failed = 0;
	int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC), status;

	if (n <= 0 || null_fd < 0) {
		fprintf(stderr, "usage: spawner N\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0)
			child(null_fd);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	printf("spawned %ld children, %ld failed\n", n, failed);
	return failed ? 1 : 0;
}
