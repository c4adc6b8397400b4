// SPDX-License-Identifier: MIT
/*
 * An attach target. It announces itself by creating READY_FILE, then waits for a line on
 * stdin before each phase, so a test can attach first and then drive it:
 *   line 1 ("go"):   7 getppid in the main thread, a new thread doing 11 gettid, a forked
 *                    child doing 13 getppid and exiting 5
 *   line 2 / EOF:    print "forker: done" and exit 0
 * usage: forker READY_FILE
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *thread_body(void *arg)
{
	(void)arg;
	for (int i = 0; i < 11; i++)
		syscall(SYS_gettid);
	return NULL;
}

static int run_phase(void)
{
	pthread_t thread;
	int status;
	pid_t child;

	for (int i = 0; i < 7; i++)
		syscall(SYS_getppid);
	if (pthread_create(&thread, NULL, thread_body, NULL))
		return 1;
	pthread_join(thread, NULL);
	child = fork();
	if (child == 0) {
		for (int i = 0; i < 13; i++)
			syscall(SYS_getppid);
		_exit(5);
	}
	if (child < 0 || waitpid(child, &status, 0) != child)
		return 1;
	printf("forker: child %d exited %d\n", child, WEXITSTATUS(status));
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	char line[64];
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s READY_FILE\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	close(fd);
	if (fgets(line, sizeof(line), stdin) && run_phase())
		return 1;
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
	printf("forker: done\n");
	return 0;
}
