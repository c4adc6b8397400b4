// SPDX-License-Identifier: MIT
/*
 * A process that names itself as any local user can: prctl(PR_SET_NAME) with raw bytes, of
 * which the kernel keeps 15, cutting a multibyte character that straddles the end. For the
 * tests of what gpuspy's outputs make of such names (tests/names.bats). Once named it
 * creates READY_FILE, then calls getppid every 10 ms (so a live view sees it active) until
 * its stdin reaches EOF.
 * usage: badname READY_FILE NAME
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
	char buf[256];
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s READY_FILE NAME\n", argv[0]);
		return 2;
	}
	if (prctl(PR_SET_NAME, argv[2], 0, 0, 0)) {
		perror("prctl");
		return 1;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	close(fd);
	for (;;) {
		getppid();
		if (poll(&pfd, 1, 10) > 0 && read(STDIN_FILENO, buf, sizeof(buf)) <= 0)
			return 0;
	}
}
