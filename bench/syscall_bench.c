// SPDX-License-Identifier: MIT
/*
 * A syscall-heavy workload for overhead benchmarks: N iterations of getppid + an 8-byte
 * read of /dev/zero + an 8-byte write to /dev/null (3 syscalls each). Prints the wall time
 * and the time per syscall, measured inside the process so start-up is excluded.
 * With THREADS > 1, that many threads each run the N iterations at once (a sustained-rate
 * workload): seconds is from their common start to the last one's end, ns_per_syscall that
 * wall time per syscall of all threads together.
 * usage: syscall_bench ITERATIONS [THREADS]
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static long iterations;
static int zero, null;
static pthread_barrier_t start;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int loop(void)
{
	char buf[8];

	for (long i = 0; i < iterations; i++) {
		syscall(SYS_getppid);
		if (read(zero, buf, sizeof(buf)) != sizeof(buf) ||
		    write(null, buf, sizeof(buf)) != sizeof(buf))
			return 1;
	}
	return 0;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	return (void *)(long)loop();
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1, err = 0;
	pthread_t tids[MAX_THREADS];
	double t0, secs;

	iterations = argc > 1 ? atol(argv[1]) : 200000;
	zero = open("/dev/zero", O_RDONLY);
	null = open("/dev/null", O_WRONLY);
	if (zero < 0 || null < 0 || iterations <= 0 || threads < 1 || threads > MAX_THREADS)
		return 1;
	if (threads == 1) {
		t0 = now_s();
		err = loop();
	} else {
		pthread_barrier_init(&start, NULL, (unsigned)threads);
		for (int t = 1; t < threads; t++)
			if (pthread_create(&tids[t], NULL, worker, NULL))
				return 1;
		pthread_barrier_wait(&start);
		t0 = now_s();
		err = loop();
		for (int t = 1; t < threads; t++) {
			void *ret;

			pthread_join(tids[t], &ret);
			err |= (int)(long)ret;
		}
	}
	secs = now_s() - t0;
	if (err)
		return 1;
	printf("syscalls=%ld seconds=%.6f ns_per_syscall=%.1f\n", iterations * 3 * threads, secs,
	       secs * 1e9 / (double)(iterations * 3 * threads));
	return 0;
}
