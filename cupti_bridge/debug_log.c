// SPDX-License-Identifier: MIT
/* GPUSPY_CUPTI_LOG=FILE: the bridge appends one line per CUPTI session change (subscribe,
 * unsubscribe) to FILE, so a test (or a user wondering what the bridge did in a process) can
 * see that nothing happened while no recorder was attached. Off unless the variable is set. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "bridge.h"

void debug_log(const char *fmt, ...)
{
	static int fd = -2;
	char line[256];
	va_list ap;
	int n;

	if (fd == -2) {
		const char *path = secure_getenv("GPUSPY_CUPTI_LOG");

		fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)
				   : -1;
	}
	if (fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* one write per line: O_APPEND keeps lines whole */
	if (write(fd, line, (size_t)n) < 0)
		return;
}
