/* SPDX-License-Identifier: MIT */
/*
 * gpuspy's in-process PyTorch operator observer (build/libgpuspy_torch.so,
 * docs/TORCH_OBSERVER.md) as the loader sees it: which processes map a libtorch it can
 * observe, the four libtorch entry points it needs (resolved here, in gpuspy, from the
 * library's dynamic symbols and the process's maps, and handed to it), and how it is loaded
 * into a running process (bridge_inject.h does the ptrace work, as for the CUPTI bridge).
 * The observer itself checks libtorch's release and layout and refuses what it does not know,
 * with a one-line reason that comes back here.
 */
#ifndef GPUSPY_TORCH_OBSERVER_H
#define GPUSPY_TORCH_OBSERVER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "loader/bridge/bridge_inject.h"

#define TORCH_OBSERVER_NAME "libgpuspy_torch.so"
#define TORCH_WHY_MAX	    200

/* gpuspy_torch_ops_load_late(syms, &result, why, sizeof(why))'s arguments, as copied onto the
 * borrowed thread's stack: struct gpuspy_torch_syms (cupti_bridge/torch_ops.h), then the
 * result and the reason it writes. */
struct torch_load_blob {
	uint64_t syms[4]; /* addGlobalCallback, removeCallback, RecordFunction::name, ::isAsync */
	int32_t result;	  /* 1 started, -1 refused (why), -2 no thread */
	int32_t pad;
	char why[TORCH_WHY_MAX];
};

/* One process's libtorch, and the load that would start the observer in it. */
struct torch_load {
	char libtorch[PATH_MAX]; /* as the process maps it */
	struct torch_load_blob blob;
	struct inject_lib lib;
};

/* The observer next to the gpuspy executable, or $GPUSPY_TORCH_OBSERVER: whether readable. */
bool torch_observer_path(char *path, size_t len);
/* Whether `pid` maps the observer: 0 with its path under /proc/PID/root and a key that tells
 * its file apart for cupti_link_attach() (which attaches to it as to a bridge: it speaks the
 * same protocol); -ENOENT: not mapped; other -errno: the maps could not be read. */
struct torch_mapped {
	char path[PATH_MAX];	       /* as the process maps it */
	char host_path[PATH_MAX + 32]; /* the same under /proc/PID/root */
	uint64_t file_key;
};
int torch_observer_mapped(pid_t pid, struct torch_mapped *out);
/* Looks for a libtorch (libtorch_cpu.so*) in `pid`'s maps and resolves the observer's entry
 * points in it. 0: found, *out ready for bridge_inject() with the observer at `observer`;
 * -ENOENT: no libtorch mapped; -ENOTSUP: a libtorch without the entry points (a reason in
 * why); other -errno: the maps could not be read. */
int torch_observer_prepare(pid_t pid, const char *observer, struct torch_load *out, char *why,
			   size_t why_len);

#endif /* GPUSPY_TORCH_OBSERVER_H */
