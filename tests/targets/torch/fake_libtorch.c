// SPDX-License-Identifier: MIT
/*
 * A stand-in for another libtorch (tests/torch_observer.bats): the four entry points the
 * in-process observer is given, under their mangled names, in a library the test links with
 * the soname it wants (-Wl,-soname,...). The observer must refuse it without calling or
 * reading past any of them; they abort if it ever calls one.
 */
#include <stdlib.h>

unsigned long _ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE(void);
void _ZN2at14removeCallbackEm(unsigned long handle);
const char *_ZNK2at14RecordFunction4nameEv(const void *rf);
int _ZNK2at14RecordFunction7isAsyncEv(const void *rf);

unsigned long _ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE(void)
{
	abort();
}

void _ZN2at14removeCallbackEm(unsigned long handle)
{
	(void)handle;
	abort();
}

const char *_ZNK2at14RecordFunction4nameEv(const void *rf)
{
	(void)rf;
	abort();
}

int _ZNK2at14RecordFunction7isAsyncEv(const void *rf)
{
	(void)rf;
	abort();
}
