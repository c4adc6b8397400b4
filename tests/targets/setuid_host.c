// SPDX-License-Identifier: MIT
/* Loads a library that is meant to be injected (gpuspy's CUPTI bridge) the way gpuspy loads it
 * into a running process, from a program the tests make set-user-ID root and run as another
 * user (tests/inject.bats): the bridge must not act on that user's environment.
 * Usage: setuid_host LIBRARY   Prints "started=N euid=E", exits 0; 1 on failure. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int (*late)(int *);
	int started = 0;
	void *lib;

	if (argc != 2) {
		fprintf(stderr, "usage: setuid_host LIBRARY\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		printf("FAIL %s\n", dlerror());
		return 1;
	}
	*(void **)&late = dlsym(lib, "gpuspy_bridge_load_late");
	if (!late) {
		printf("FAIL no gpuspy_bridge_load_late\n");
		return 1;
	}
	late(&started);
	printf("started=%d euid=%d\n", started, (int)geteuid());
	return 0;
}
