// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/exit_codes.h"
#include "lib/messages.h"
#include "loader/proc/procfs.h"
#include "loader/session/privileges.h"

#define CAP_PERFMON_BIT	  38
#define CAP_BPF_BIT	  39
#define CAP_SYS_ADMIN_BIT 21

int privileges_check(void)
{
	unsigned long long caps = procfs_status_field("self", "CapEff", 16);
	unsigned long long bpf_perfmon = (1ULL << CAP_BPF_BIT) | (1ULL << CAP_PERFMON_BIT);

	if (geteuid() == 0 || (caps & bpf_perfmon) == bpf_perfmon ||
	    caps & (1ULL << CAP_SYS_ADMIN_BIT))
		return 0;
	gs_error("recording needs root or CAP_BPF and CAP_PERFMON (try sudo)");
	return GS_EXIT_PERMISSION;
}

const char *privileges_btf_path(void)
{
	const char *p = getenv("GPUSPY_BTF_PATH");

	return p && *p ? p : "/sys/kernel/btf/vmlinux";
}

int privileges_check_btf(void)
{
	const char *path = privileges_btf_path();

	if (access(path, R_OK) == 0)
		return 0;
	gs_error(
	    "kernel BTF not found at %s: gpuspy needs a kernel built with CONFIG_DEBUG_INFO_BTF",
	    path);
	return GS_EXIT_UNSUPPORTED;
}
