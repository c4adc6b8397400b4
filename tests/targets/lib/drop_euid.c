// SPDX-License-Identifier: MIT
/* A library to LD_PRELOAD into a target started as root so that it runs with effective uid and
 * gid $DROP_EUID (real ids stay root), as a set-user-ID program's do the other way round: its
 * credentials differ from its real ids and it is no longer dumpable (tests/inject.bats). */
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void drop_euid_init(void)
{
	const char *id = getenv("DROP_EUID");

	if (id && (setresgid((gid_t)-1, (gid_t)atoi(id), (gid_t)-1) ||
		   setresuid((uid_t)-1, (uid_t)atoi(id), (uid_t)-1)))
		_exit(111);
}
