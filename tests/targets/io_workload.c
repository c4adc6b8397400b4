// SPDX-License-Identifier: MIT
/*
 * A deterministic file-I/O workload: its syscall counts are compared with `strace -f -c`.
 * usage: io_workload DIR ITERATIONS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096], buf[4096];
	int fd, iterations;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DIR ITERATIONS\n", argv[0]);
		return 2;
	}
	iterations = atoi(argv[2]);
	snprintf(path, sizeof(path), "%s/io_workload.dat", argv[1]);
	memset(buf, 'x', sizeof(buf));
	for (int round = 0; round < 3; round++) {
		fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
		if (fd < 0)
			return 1;
		for (int i = 0; i < iterations; i++)
			if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				return 1;
		fsync(fd);
		lseek(fd, 0, SEEK_SET);
		for (int i = 0; i < iterations; i++)
			if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				return 1;
		close(fd);
	}
	unlink(path);
	printf("io_workload: %d writes, %d reads, 3 fsyncs\n", 3 * iterations, 3 * iterations);
	return 0;
}
