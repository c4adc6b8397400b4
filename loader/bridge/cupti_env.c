// SPDX-License-Identifier: MIT
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/messages.h"
#include "loader/bridge/cupti_env.h"

#define BRIDGE_NAME "libgpuspy_cupti.so"

/* The bridge is built next to gpuspy (build/); an install may put it elsewhere. */
bool gpuspy_library_path(const char *name, const char *env_var, char *path, size_t len)
{
	const char *env = getenv(env_var);
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(path, len, "%s", env);
		return access(path, R_OK) == 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	if ((size_t)snprintf(path, len, "%s/%s", exe, name) >= len)
		return false;
	return access(path, R_OK) == 0;
}

bool cupti_bridge_path(char *path, size_t len)
{
	return gpuspy_library_path(BRIDGE_NAME, "GPUSPY_CUPTI_BRIDGE", path, len);
}

/* Sets `var` unless the user set it; true when it now names gpuspy's bridge. */
static bool set_injection(const char *var, const char *bridge, bool quiet)
{
	const char *old = getenv(var);

	if (old && *old && strcmp(old, bridge)) {
		if (!quiet)
			gs_warn("%s is already set to %s: kept (GPU activity only if that is "
				"gpuspy's bridge)",
				var, old);
		return false;
	}
	return setenv(var, bridge, 1) == 0;
}

bool cupti_env_prepare(bool quiet)
{
	char bridge[PATH_MAX];
	bool ok;

	if (!cupti_bridge_path(bridge, sizeof(bridge))) {
		if (!quiet)
			gs_warn(
			    "CUPTI bridge %s not found next to gpuspy (or $GPUSPY_CUPTI_BRIDGE): "
			    "no GPU activity, CUDA calls are traced with uprobes only",
			    BRIDGE_NAME);
		return false;
	}
	ok = set_injection("CUDA_INJECTION64_PATH", bridge, quiet);
	set_injection("NVTX_INJECTION64_PATH", bridge, quiet);
	return ok;
}
