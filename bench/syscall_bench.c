// SPDX-License-Identifier: MIT
/*
 * A syscall-heavy workload for overhead benchmarks: N iterations of getppid + an 8-byte
 * read of /dev/zero + an 8-byte write to /dev/null (3 syscalls each). Prints the wall time
 * and the time per syscall, measured inside the process so start-up is excluded.
 * usage: syscall_bench ITERATIONS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long iterations = argc > 1 ? atol(argv[1]) : 200000;
	int zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_WRONLY);
	char buf[8];
	double start, secs;

	if (zero < 0 || null < 0 || iterations <= 0)
		return 1;
	start = now_s();
	for (long i = 0; i < iterations; i++) {
		syscall(SYS_getppid);
		if (read(zero, buf, sizeof(buf)) != sizeof(buf) ||
		    write(null, buf, sizeof(buf)) != sizeof(buf))
			return 1;
	}
	secs = now_s() - start;
	printf("syscalls=%ld seconds=%.6f ns_per_syscall=%.1f\n", iterations * 3, secs,
	       secs * 1e9 / (double)(iterations * 3));
	return 0;
}
