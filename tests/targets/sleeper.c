// SPDX-License-Identifier: MIT
/*
 * Long and short syscalls for span-threshold tests: SLEEPS nanosleeps of 5 ms (always above
 * a 1 ms threshold) and SHORTS getppid calls (always far below it), then it idles in
 * 100 ms sleeps for LINGER_MS so a recorder can be interrupted mid-run.
 * usage: sleeper SLEEPS SHORTS [LINGER_MS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int sleeps, shorts;
	long linger;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SLEEPS SHORTS [LINGER_MS]\n", argv[0]);
		return 2;
	}
	sleeps = atoi(argv[1]);
	shorts = atoi(argv[2]);
	linger = argc > 3 ? atol(argv[3]) : 0;
	for (int i = 0; i < sleeps; i++)
		sleep_ms(5);
	for (int i = 0; i < shorts; i++)
		syscall(SYS_getppid);
	for (long waited = 0; waited < linger; waited += 100)
		sleep_ms(100);
	printf("sleeper: %d sleeps, %d short calls\n", sleeps, shorts);
	return 0;
}
