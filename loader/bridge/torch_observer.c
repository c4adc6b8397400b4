// SPDX-License-Identifier: MIT
/* The in-process PyTorch operator observer as the loader sees it (torch_observer.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "loader/bridge/cupti_env.h"
#include "loader/bridge/torch_observer.h"
#include "loader/proc/elf_symbols.h"
#include "loader/proc/proc_maps.h"
#include "output/trace/trace_format.h"

#define LIBTORCH_PREFIX "libtorch_cpu.so"
#define NSYMS		4

/* libtorch's exported entry points, in struct gpuspy_torch_syms's order
 * (cupti_bridge/torch_ops.h) */
static const char *const torch_syms[NSYMS] = {
    "_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE",
    "_ZN2at14removeCallbackEm",
    "_ZNK2at14RecordFunction4nameEv",
    "_ZNK2at14RecordFunction7isAsyncEv",
};

bool torch_observer_path(char *path, size_t len)
{
	return gpuspy_library_path(TORCH_OBSERVER_NAME, "GPUSPY_TORCH_OBSERVER", path, len);
}

struct scan {
	pid_t pid;
	struct torch_load *out;
	bool found;	     /* a libtorch mapping was seen */
	uint64_t dev, ino;   /* its file */
	uint64_t off[NSYMS]; /* the symbols' file offsets, 0: not defined */
	int looked_up;	     /* elf_find_functions()'s answer */
	unsigned addr_found; /* bits: run-time addresses found */
};

/* Every mapping of the libtorch file: the one holding a symbol's offset gives its address. */
static int scan_mapping(void *ctx, const struct proc_mapping *m)
{
	struct scan *s = ctx;
	char host[PATH_MAX + 32];

	if (!s->found) {
		if (strncmp(proc_maps_file_name(m->path), LIBTORCH_PREFIX, strlen(LIBTORCH_PREFIX)))
			return 0;
		s->found = true;
		s->dev = m->dev;
		s->ino = m->ino;
		snprintf(s->out->libtorch, sizeof(s->out->libtorch), "%s", m->path);
		proc_maps_host_path(s->pid, m->path, host, sizeof(host));
		s->looked_up = elf_find_functions(host, torch_syms, NSYMS, false, s->off);
	}
	if (m->dev != s->dev || m->ino != s->ino || !m->exec)
		return 0;
	for (int i = 0; i < NSYMS; i++)
		if (s->off[i] && s->off[i] >= m->offset &&
		    s->off[i] - m->offset < m->end - m->start) {
			s->out->blob.syms[i] = m->start + (s->off[i] - m->offset);
			s->addr_found |= 1u << i;
		}
	return 0;
}

static void fill_lib(struct torch_load *out, const char *observer)
{
	out->lib = (struct inject_lib){
	    .path = observer,
	    .entry = "gpuspy_torch_ops_load_late",
	    .what = "the PyTorch observer",
	    .blob = &out->blob,
	    .blob_len = sizeof(out->blob),
	    /* (syms, &result, why, sizeof(why)): the first three point into the blob */
	    .args = {0, offsetof(struct torch_load_blob, result),
		     offsetof(struct torch_load_blob, why), sizeof(out->blob.why)},
	    .blob_args = 7u,
	    .started_off = offsetof(struct torch_load_blob, result),
	    .why_off = offsetof(struct torch_load_blob, why),
	    .why_len = sizeof(out->blob.why),
	    .refused_outcome = GS_BRIDGE_LOAD_SKIPPED,
	};
}

int torch_observer_prepare(pid_t pid, const char *observer, struct torch_load *out, char *why,
			   size_t why_len)
{
	struct scan s = {.pid = pid, .out = out};
	int err;

	memset(out, 0, sizeof(*out));
	why[0] = '\0';
	err = proc_maps_for_each(pid, scan_mapping, &s);
	if (err)
		return err;
	if (!s.found)
		return -ENOENT;
	if (s.looked_up < 0) {
		snprintf(why, why_len, "%s: cannot read its symbols: %s", out->libtorch,
			 strerror(-s.looked_up));
		return -ENOTSUP;
	}
	if (s.addr_found != (1u << NSYMS) - 1) {
		for (int i = 0; i < NSYMS; i++)
			if (!(s.addr_found & (1u << i))) {
				snprintf(why, why_len, "%s does not export %s", out->libtorch,
					 torch_syms[i]);
				break;
			}
		return -ENOTSUP;
	}
	fill_lib(out, observer);
	return 0;
}

struct mapped {
	pid_t pid;
	struct torch_mapped *out;
	bool found;
};

static int find_observer(void *ctx, const struct proc_mapping *m)
{
	struct mapped *s = ctx;

	if (s->found || !m->exec || strcmp(proc_maps_file_name(m->path), TORCH_OBSERVER_NAME))
		return 0;
	s->found = true;
	snprintf(s->out->path, sizeof(s->out->path), "%s", m->path);
	proc_maps_host_path(s->pid, m->path, s->out->host_path, sizeof(s->out->host_path));
	/* apart from the CUPTI bridge's keys (small indexes of cuda_probes.c's libraries) */
	s->out->file_key = 1ull << 63 | (m->dev & 0x7fffff) << 40 | (m->ino & ((1ull << 40) - 1));
	return 0;
}

int torch_observer_mapped(pid_t pid, struct torch_mapped *out)
{
	struct mapped s = {.pid = pid, .out = out};
	int err = proc_maps_for_each(pid, find_observer, &s);

	if (err)
		return err;
	return s.found ? 0 : -ENOENT;
}
