// SPDX-License-Identifier: MIT
/* A library to LD_PRELOAD into a target so that it makes itself not dumpable at start, as
 * programs holding secrets do (prctl(PR_SET_DUMPABLE, 0)): /proc/PID then belongs to root
 * whatever its uid (tests/safety.bats). */
#include <sys/prctl.h>
#include <unistd.h>

__attribute__((constructor)) static void no_dump_init(void)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		_exit(111);
}
