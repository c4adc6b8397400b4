// SPDX-License-Identifier: MIT
/* GPUSPY_BRIDGE_LOAD_DELAY_MS=N: the library's constructor sleeps N ms (at most 60 s). A test
 * hook, off unless the variable is set: it keeps a dlopen of the bridge in progress (ld.so's
 * lock held by the loading thread) long enough for tests/inject.bats to SIGKILL gpuspy in
 * the middle of loading the bridge into a running process, and check that the process goes on.
 * Read with secure_getenv, as every variable the bridge reads. */
#include <stdlib.h>
#include <time.h>

#define DELAY_MAX_MS 60000

__attribute__((constructor)) static void load_delay(void)
{
	const char *v = secure_getenv("GPUSPY_BRIDGE_LOAD_DELAY_MS");
	struct timespec ts;
	char *end;
	long ms;

	if (!v || !*v)
		return;
	ms = strtol(v, &end, 10);
	if (*end || ms <= 0 || ms > DELAY_MAX_MS)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts))
		;
}
