// SPDX-License-Identifier: MIT
/*
 * A CUDA injection library that only starts one idle thread: the baseline for the CUPTI
 * bridge's untraced cost. Loaded but not attached, the bridge's only footprint is its poller
 * thread, and a process that gains a second thread loses glibc's single-thread fast paths
 * (uncontended locks become atomics), which the simulated CUDA stack, taking a mutex per call,
 * feels; NVIDIA's real driver starts threads of its own at cuInit. bench/cupti_bench.sh
 * measures the bridge against this as well as against no injection at all.
 */
#include <pthread.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, idle, NULL))
		return 0;
	pthread_detach(t);
	return 1;
}
