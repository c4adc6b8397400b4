// SPDX-License-Identifier: MIT
#include <stdio.h>
#include "lib/syscall_names.h"

const char *gs_syscall_name(unsigned nr, char *buf, size_t len)
{
	if (nr < gs_syscall_table_len && gs_syscall_table[nr])
		return gs_syscall_table[nr];
	snprintf(buf, len, "syscall_%u", nr);
	return buf;
}
