// SPDX-License-Identifier: MIT
/*
 * A context-switch workload for overhead benchmarks: two threads pinned to one CPU hand a turn
 * back and forth through a futex ROUNDS times, so every handoff is a context switch from one to
 * the other. Timing is measured inside the process, and the switches are counted by the kernel
 * (getrusage RUSAGE_THREAD of both threads, voluntary + involuntary), not assumed.
 *
 * The handoffs also make futex syscalls, which a tracer's syscall hooks see. So that a syscall
 * tracer's cost can be taken out of the per-switch figure, the same two calls are first timed
 * without any switch (FUTEX_WAKE with no waiter, FUTEX_WAIT on a value that does not match:
 * both return at once) and printed as ns_per_syscall, with the ping-pong's syscalls per switch:
 * a tracer's cost per switch, less its syscall side, is
 *   (ns_per_switch - base) - syscalls_per_switch * (ns_per_syscall - base_syscall).
 *
 * usage: ctxswitch_bench [-c CPU] [ROUNDS]   (default: the last CPU, 100000 rounds)
 * prints: rounds= switches= syscalls= seconds= ns_per_switch= syscalls_per_switch=
 *         ns_per_syscall=
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct player {
	int me;
	long rounds;
	long calls;	/* futex syscalls made */
	long switches;	/* this thread's context switches (out), from getrusage */
	long switches0; /* the same before the ping-pong */
};

static _Atomic int turn;
static pthread_barrier_t start;

static long futex(_Atomic int *uaddr, int op, int val)
{
	return syscall(SYS_futex, uaddr, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static void *play(void *arg)
{
	struct player *p = arg;
	int other = !p->me;

	p->switches0 = thread_switches();
	pthread_barrier_wait(&start);
	for (long i = 0; i < p->rounds; i++) {
		while (atomic_load(&turn) != p->me) {
			futex(&turn, FUTEX_WAIT, other); /* sleeps while it is the other's turn */
			p->calls++;
		}
		atomic_store(&turn, other);
		futex(&turn, FUTEX_WAKE, 1);
		p->calls++;
	}
	p->switches = thread_switches() - p->switches0;
	return NULL;
}

/* ns per futex call, without switching: a wake nobody waits for and a wait that does not sleep */
static double syscall_ns(long calls)
{
	_Atomic int word = 0;
	double t0 = now_s();

	for (long i = 0; i < calls / 2; i++) {
		futex(&word, FUTEX_WAKE, 1);
		futex(&word, FUTEX_WAIT, 1); /* word is 0: EAGAIN */
	}
	return (now_s() - t0) * 1e9 / (double)(calls / 2 * 2);
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), rounds = 100000;
	int cpu = ncpu > 0 ? (int)ncpu - 1 : 0, opt;
	struct player a = {.me = 0}, b = {.me = 1};
	pthread_t tb;
	cpu_set_t set;
	double t0, secs, sc_ns;
	long switches, calls;

	while ((opt = getopt(argc, argv, "c:")) != -1) {
		if (opt != 'c') {
			fprintf(stderr, "usage: ctxswitch_bench [-c CPU] [ROUNDS]\n");
			return 2;
		}
		cpu = atoi(optarg);
	}
	if (optind < argc)
		rounds = atol(argv[optind]);
	if (rounds <= 0) {
		fprintf(stderr, "ctxswitch_bench: ROUNDS must be positive\n");
		return 2;
	}
	/* both threads on one CPU (the second inherits it): each handoff switches that CPU */
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "ctxswitch_bench: cannot pin to CPU %d: %s\n", cpu,
			strerror(errno));
		return 1;
	}
	a.rounds = b.rounds = rounds;
	sc_ns = syscall_ns(2 * rounds);
	pthread_barrier_init(&start, NULL, 2);
	if (pthread_create(&tb, NULL, play, &b)) {
		fprintf(stderr, "ctxswitch_bench: cannot start a thread\n");
		return 1;
	}
	t0 = now_s();
	play(&a); /* meets b at the barrier first */
	pthread_join(tb, NULL);
	secs = now_s() - t0;
	switches = a.switches + b.switches;
	calls = a.calls + b.calls;
	if (switches <= 0) {
		fprintf(stderr, "ctxswitch_bench: no context switch counted\n");
		return 1;
	}
	printf("rounds=%ld cpu=%d switches=%ld syscalls=%ld seconds=%.6f ns_per_switch=%.1f "
	       "syscalls_per_switch=%.3f ns_per_syscall=%.1f\n",
	       rounds, cpu, switches, calls, secs, secs * 1e9 / (double)switches,
	       (double)calls / (double)switches, sc_ns);
	return 0;
}
