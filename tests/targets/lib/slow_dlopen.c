// SPDX-License-Identifier: MIT
/*
 * A library to LD_PRELOAD into a target so that one of its threads is inside a dlopen() whose
 * constructor sleeps, holding ld.so's load lock (tests/inject.bats). Loaded by LD_PRELOAD, its
 * constructor starts a thread that waits for the file $SLOW_TRIGGER, then sets SLOW_CTOR_NOW
 * and dlopen()s $SLOW_LIB (a copy of this very file). That copy's constructor sees
 * SLOW_CTOR_NOW, creates $SLOW_MARK (so the test knows the lock is held now), sleeps
 * $SLOW_CTOR_MS ms and returns; the thread then creates $SLOW_MARK.done and exits.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void touch(const char *path, const char *suffix)
{
	char name[4096];
	int fd;

	snprintf(name, sizeof(name), "%s%s", path, suffix);
	fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts))
		;
}

static void *loader_thread(void *arg)
{
	const char *trigger = getenv("SLOW_TRIGGER"), *lib = getenv("SLOW_LIB");
	const char *mark = getenv("SLOW_MARK");

	(void)arg;
	while (access(trigger, F_OK))
		sleep_ms(10);
	setenv("SLOW_CTOR_NOW", "1", 1);
	if (!dlopen(lib, RTLD_NOW))
		fprintf(stderr, "slow_dlopen: %s\n", dlerror());
	touch(mark, ".done");
	return NULL;
}

__attribute__((constructor)) static void slow_dlopen_init(void)
{
	const char *ms = getenv("SLOW_CTOR_MS"), *mark = getenv("SLOW_MARK");
	pthread_t t;

	if (getenv("SLOW_CTOR_NOW")) { /* the copy, loaded by the thread: hold the lock */
		touch(mark, "");
		sleep_ms(ms ? atol(ms) : 1000);
		return;
	}
	if (getenv("SLOW_TRIGGER") && getenv("SLOW_LIB") && mark &&
	    !pthread_create(&t, NULL, loader_thread, NULL))
		pthread_detach(t);
}
