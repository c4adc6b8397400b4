// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "lib/demangle.h"

/* libstdc++'s demangler (the program links -lstdc++); declared here because its header is
 * C++ only. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *demangle(const char *name)
{
	int status = -1;
	char *out;

	/* only _Z names are mangled: anything else (a plain `main` or `noop_kernel`) would come
	 * back as a demangled *type* name */
	if (strncmp(name, "_Z", 2))
		return strdup(name);
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (status == 0 && out)
		return out;
	free(out);
	return strdup(name);
}
