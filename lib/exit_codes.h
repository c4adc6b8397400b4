/* SPDX-License-Identifier: MIT */
/* gpuspy's exit codes, documented in README ("Exit codes"). A launched command's own status
 * passes through. */
#ifndef GPUSPY_EXIT_CODES_H
#define GPUSPY_EXIT_CODES_H

enum gs_exit_code {
	GS_EXIT_OK = 0,
	GS_EXIT_FAILURE = 1,	 /* a runtime failure: attach, write, ... */
	GS_EXIT_USAGE = 2,	 /* bad option or option value */
	GS_EXIT_BAD_TRACE = 3,	 /* unreadable, corrupt or foreign trace file */
	GS_EXIT_PERMISSION = 4,	 /* not root and no CAP_BPF + CAP_PERFMON */
	GS_EXIT_UNSUPPORTED = 5, /* kernel lacks BTF or a needed BPF feature */
	GS_EXIT_NO_TARGET = 6,	 /* a -p pid does not exist */
	GS_EXIT_WINDOW = 7, /* record --steps stopped before its window's steps were all seen */
	GS_EXIT_EXEC_FAILED = 127,
};

#endif /* GPUSPY_EXIT_CODES_H */
