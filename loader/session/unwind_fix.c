// SPDX-License-Identifier: MIT
/* Return addresses put back before an exception unwinds a held thread (unwind_fix.h). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include "loader/session/unwind_fix.h"

unsigned unwind_fix(const struct gs_op_unwind *u)
{
	char path[64];
	unsigned fixed = 0;
	int fd;

	if (!u->trampoline)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/mem", u->hdr.pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	for (uint32_t i = 0; fd >= 0 && i < u->n && i < GS_OP_UNWIND_MAX; i++) {
		const struct gs_op_unwind_slot *s = &u->slots[i];
		uint64_t now;

		/* only where the kernel's trampoline address still is: the thread is stopped,
		 * and nothing else writes it */
		if (s->orig == u->trampoline ||
		    pread(fd, &now, sizeof(now), (off_t)s->slot) != sizeof(now) ||
		    now != u->trampoline)
			continue;
		if (pwrite(fd, &s->orig, sizeof(s->orig), (off_t)s->slot) == sizeof(s->orig))
			fixed++;
	}
	if (fd >= 0)
		close(fd);
	return fixed;
}
