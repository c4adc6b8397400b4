// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cuda.skel.h"
#include "lib/array_grow.h"
#include "lib/clocks.h"
#include "lib/key_index.h"
#include "lib/messages.h"
#include "lib/pid_list.h"
#include "loader/bridge/cupti_link.h"
#include "loader/probes/cuda_probes.h"
#include "loader/proc/elf_symbols.h"
#include "loader/proc/proc_maps.h"
#include "loader/session/link_batch.h"
#include "loader/session/uprobe_multi.h"
#include "output/trace/cuda_api.h"
#include "output/trace/trace_writer.h"

#define NOT_CUDA SIZE_MAX - 1 /* examined: no CUDA entry points (key_index value) */

struct probed_lib {
	uint32_t roles;
	uint32_t probes;
};

struct cuda_probes {
	struct cuda_bpf *skel;
	struct cupti_link *bridge; /* NULL: CUPTI bridges are left alone (--no-cupti) */
	bool bridge_everywhere;	   /* -a: turn bridges on in every process, not per target */
	struct trace_writer *w;
	bool quiet, detached;
	bool live;		 /* the live views' probe set (cuda_probes_set_live) */
	struct bpf_link **links; /* ld.so watches */
	size_t nlinks, links_cap;
	int *fds; /* uprobe_multi links on CUDA libraries */
	size_t nfds, fds_cap;
	struct probed_lib *libs;
	size_t nlibs, libs_cap;
	struct key_index files;	   /* (dev, ino) -> index in libs, or NOT_CUDA */
	struct key_index reported; /* (pid, lib index) already written */
	struct key_index ldso;	   /* (dev, ino) of the ld.so copies watched */
	const char *names[];	   /* gs_cuda_probes' names, for elf_find_functions() */
};

int cuda_probes_new(struct cuda_bpf *skel, struct trace_writer *w, bool quiet,
		    struct cuda_probes **out)
{
	struct cuda_probes *cp = calloc(1, sizeof(*cp) + gs_cuda_nprobes * sizeof(cp->names[0]));

	if (!cp)
		return -ENOMEM;
	cp->skel = skel;
	cp->w = w;
	cp->quiet = quiet;
	for (unsigned i = 0; i < gs_cuda_nprobes; i++)
		cp->names[i] = gs_cuda_probes[i].name;
	*out = cp;
	return 0;
}

/* Appends to a growable array of links or fds; the caller undoes `item` on failure. */
static int keep(void **items, size_t *n, size_t *cap, const void *item, size_t size)
{
	void *slot = array_grow(items, n, cap, size);

	if (!slot)
		return -ENOMEM;
	memcpy(slot, item, size);
	return 0;
}

static int keep_link(struct cuda_probes *cp, struct bpf_link *link)
{
	int err = keep((void **)&cp->links, &cp->nlinks, &cp->links_cap, &link, sizeof(link));

	if (err)
		bpf_link__destroy(link);
	return err;
}

static int attach_uprobe(struct cuda_probes *cp, struct bpf_program *prog, const char *path,
			 uint64_t offset, uint64_t cookie, bool retprobe)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie, .retprobe = retprobe);
	struct bpf_link *link;

	/* pid -1: the file's every mapping, in processes that map it later too */
	link = bpf_program__attach_uprobe_opts(prog, -1, path, (size_t)offset, &opts);
	if (!link)
		return -errno;
	return keep_link(cp, link);
}

static int keep_fd(struct cuda_probes *cp, int fd)
{
	int err = keep((void **)&cp->fds, &cp->nfds, &cp->fds_cap, &fd, sizeof(fd));

	if (err)
		close(fd);
	return err;
}

/* One uprobe_multi link for the probes of `offsets` that `want` selects (0 offsets: none). */
static int attach_group(struct cuda_probes *cp, struct bpf_program *prog, const char *path,
			const uint64_t *offsets, bool retprobe,
			bool (*want)(const struct gs_cuda_probe *p, uint32_t cap))
{
	uint64_t addrs[gs_cuda_nprobes], cookies[gs_cuda_nprobes];
	uint32_t n = 0;
	int fd;

	for (unsigned i = 0; i < gs_cuda_nprobes; i++) {
		uint32_t cap = cuda_probe_capture(&gs_cuda_probes[i]);

		if (!offsets[i] || !want(&gs_cuda_probes[i], cap))
			continue;
		addrs[n] = offsets[i];
		cookies[n++] = i | (uint64_t)cap << GS_CUDA_COOKIE_SHIFT;
	}
	if (!n)
		return 0;
	fd = uprobe_multi_attach(bpf_program__fd(prog), path, addrs, cookies, n, retprobe);
	return fd < 0 ? fd : keep_fd(cp, fd);
}

static bool any_probe(const struct gs_cuda_probe *p, uint32_t cap)
{
	(void)p;
	(void)cap;
	return true;
}

static bool plain_return(const struct gs_cuda_probe *p, uint32_t cap)
{
	(void)p;
	return !(cap & GS_CUDA_CAP_NAME);
}

static bool naming_return(const struct gs_cuda_probe *p, uint32_t cap)
{
	(void)p;
	return cap & GS_CUDA_CAP_NAME;
}

/*
 * The live views' probe set. top and serve show, per process: launches, API calls, errors
 * and time, copy and memset bytes, GPU memory, and (from the CUPTI bridge, where loaded)
 * kernels and GPU time. The cheapest source of each:
 *   launches       one entry probe on the driver's launch functions (cuLaunchKernel*,
 *                  cuGraphLaunch*), counted per process in a BPF map: every runtime launch
 *                  reaches one of them, so the runtime's launch functions are not probed, nor
 *                  cuKernelGetFunction, which the runtime calls inside each launch
 *   API calls      those launches, plus the calls below
 *   copies, memsets, allocations, frees, synchronisations: entry and return as in a
 *                  recording (sizes and directions at entry, the outcome at return, time for
 *                  the API time and top's wait column); rare next to launches, or blocking
 *   kernel names   not shown: the naming calls are not probed
 * A launch's own time and failure would need a return probe, which nearly doubles the trap
 * cost of the hottest call: API time and errors leave launches out.
 */
static bool live_launch(const struct gs_cuda_probe *p, uint32_t cap)
{
	(void)cap;
	return p->cls == GS_CUDA_LAUNCH_DRV || p->cls == GS_CUDA_LAUNCH_EX ||
	       p->cls == GS_CUDA_GRAPH_LAUNCH;
}

static bool live_call(const struct gs_cuda_probe *p, uint32_t cap)
{
	return p->cls != GS_CUDA_LAUNCH_RT && !live_launch(p, cap) &&
	       p->cls != GS_CUDA_KERNEL_FUNCTION && !(cap & GS_CUDA_CAP_NAME);
}

static int attach_live(struct cuda_probes *cp, const char *path, const uint64_t *offsets)
{
	struct cuda_bpf *skel = cp->skel;
	int err =
	    attach_group(cp, skel->progs.cuda_launch_count, path, offsets, false, live_launch);

	err = err ?: attach_group(cp, skel->progs.cuda_entry, path, offsets, false, live_call);
	return err ?: attach_group(cp, skel->progs.cuda_return, path, offsets, true, live_call);
}

/* Entry probes on every function found, returns split between the plain program and the
 * sleepable one that copies kernel names. */
static int attach_library(struct cuda_probes *cp, const char *path, const uint64_t *offsets)
{
	struct cuda_bpf *skel = cp->skel;
	int err;

	if (cp->live) {
		err = attach_live(cp, path, offsets);
	} else {
		err = attach_group(cp, skel->progs.cuda_entry, path, offsets, false, any_probe);
		err = err
			  ?: attach_group(cp, skel->progs.cuda_return, path, offsets, true,
					  plain_return);
		err = err
			  ?: attach_group(cp, skel->progs.cuda_return_naming, path, offsets, true,
					  naming_return);
	}
	if (err == -EINVAL || err == -EOPNOTSUPP)
		gs_warn("cannot probe %s: this kernel has no uprobe_multi links (Linux 6.6+)",
			path);
	else if (err)
		gs_warn("cannot probe %s: %s", path, strerror(-err));
	for (unsigned i = 0; i < gs_cuda_nprobes && !err; i++)
		if (offsets[i])
			gs_debug("probed %s at file offset 0x%llx", gs_cuda_probes[i].name,
				 (unsigned long long)offsets[i]);
	return err;
}

/* Which roles the file's defined functions give it; probes found are kept in `offsets`. */
static uint32_t library_roles(const uint64_t *offsets)
{
	uint32_t roles = 0;

	for (unsigned i = 0; i < gs_cuda_nprobes; i++)
		if (offsets[i])
			roles |=
			    gs_cuda_probes[i].runtime ? GS_CUDA_LIB_RUNTIME : GS_CUDA_LIB_DRIVER;
	return roles;
}

static bool symtab_worth_reading(pid_t pid, const char *path)
{
	char exe_link[64], exe[PATH_MAX];
	const char *base = strrchr(path, '/');
	ssize_t n;

	/* .symtab is where a statically linked runtime's symbols are: in the executable, or in a
	 * library named for CUDA (reading every big library's .symtab would cost seconds) */
	if (strstr(base ? base : path, "cuda"))
		return true;
	snprintf(exe_link, sizeof(exe_link), "/proc/%d/exe", pid);
	n = readlink(exe_link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	return !strcmp(exe, path);
}

/* Examines a file not seen before: returns its index in libs, NOT_CUDA, or SIZE_MAX on
 * allocation failure. */
static size_t examine_file(struct cuda_probes *cp, pid_t pid, const struct proc_mapping *m)
{
	uint64_t *offsets = calloc(gs_cuda_nprobes, sizeof(*offsets));
	char path[PATH_MAX + 32];
	struct probed_lib *lib;
	size_t idx = NOT_CUDA;
	uint32_t roles;

	if (!offsets)
		return SIZE_MAX;
	proc_maps_host_path(pid, m->path, path, sizeof(path));
	/* a bridge is turned on per process (report_lib), not for the file */
	if (cp->bridge && cupti_link_is_bridge(path)) {
		roles = GS_CUDA_LIB_BRIDGE;
		goto add;
	}
	if (elf_find_functions(path, cp->names, gs_cuda_nprobes, symtab_worth_reading(pid, m->path),
			       offsets) <= 0 ||
	    !(roles = library_roles(offsets)))
		goto out;
add:
	if (!roles)
		goto out;
	lib = array_grow((void **)&cp->libs, &cp->nlibs, &cp->libs_cap, sizeof(*lib));
	if (!lib) {
		idx = SIZE_MAX;
		goto out;
	}
	lib->roles = roles;
	if (roles == GS_CUDA_LIB_BRIDGE)
		lib->probes = 1; /* its gpuspy:records USDT probe */
	else if (!attach_library(cp, path, offsets))
		for (unsigned i = 0; i < gs_cuda_nprobes; i++)
			lib->probes += offsets[i] != 0;
	idx = cp->nlibs - 1;
out:
	free(offsets);
	return idx;
}

static int write_lib_record(struct cuda_probes *cp, pid_t pid, const struct proc_mapping *m,
			    const struct probed_lib *lib)
{
	struct gs_cuda_lib rec = {
	    .hdr = {.type = GS_REC_CUDA_LIB,
		    .pid = (uint32_t)pid,
		    .tid = (uint32_t)pid,
		    .ts = gs_monotonic_ns()},
	    .dev = m->dev,
	    .ino = m->ino,
	    .roles = lib->roles,
	    .probes = lib->probes,
	};

	return trace_writer_append_tail(cp->w, &rec.hdr, sizeof(rec), m->path, sizeof(m->path));
}

static const char *roles_name(uint32_t roles)
{
	if (roles == (GS_CUDA_LIB_RUNTIME | GS_CUDA_LIB_DRIVER))
		return "runtime+driver";
	return roles & GS_CUDA_LIB_RUNTIME ? "runtime" : "driver";
}

static int report_lib(struct cuda_probes *cp, pid_t pid, const struct proc_mapping *m, size_t idx)
{
	const struct probed_lib *lib = &cp->libs[idx];
	size_t dummy;

	if (key_index_find(&cp->reported, (uint64_t)pid, idx, &dummy))
		return 0;
	if (key_index_put(&cp->reported, (uint64_t)pid, idx, idx))
		return -ENOMEM;
	if (lib->roles == GS_CUDA_LIB_BRIDGE) {
		char path[PATH_MAX + 32];

		proc_maps_host_path(pid, m->path, path, sizeof(path));
		if (cupti_link_attach(cp->bridge, path, idx, cp->bridge_everywhere ? -1 : pid))
			return 0; /* said why; the process is traced by uprobes only */
		if (!cp->quiet)
			fprintf(stderr, "gpuspy: CUPTI bridge in pid %d: %s: turned on\n", pid,
				m->path);
	} else if (!cp->quiet)
		fprintf(stderr, "gpuspy: probing CUDA %s in pid %d: %s (%u functions)\n",
			roles_name(lib->roles), pid, m->path, lib->probes);
	return write_lib_record(cp, pid, m, lib);
}

static int watch_ldso(struct cuda_probes *cp, pid_t pid, const struct proc_mapping *m)
{
	static const char *const names[] = {"_dl_debug_state", "_r_debug"};
	uint64_t offsets[2];
	char path[PATH_MAX + 32];
	size_t dummy;
	int err;

	if (key_index_find(&cp->ldso, m->dev, m->ino, &dummy))
		return 0;
	if (key_index_put(&cp->ldso, m->dev, m->ino, 0))
		return -ENOMEM;
	proc_maps_host_path(pid, m->path, path, sizeof(path));
	/* _r_debug is data, not a function: find _dl_debug_state, then the distance to it */
	err = elf_find_functions(path, names, 1, false, offsets);
	if (err <= 0) {
		gs_warn("cannot watch %s for new libraries: no _dl_debug_state", m->path);
		return 0;
	}
	err = elf_symbol_distance(path, names[0], names[1], &offsets[1], NULL);
	if (err) {
		gs_warn("cannot watch %s for new libraries: no _r_debug", m->path);
		return 0;
	}
	err = attach_uprobe(cp, cp->skel->progs.ldso_debug_state, path, offsets[0], offsets[1],
			    false);
	if (err)
		gs_warn("cannot watch %s for new libraries: %s", m->path, strerror(-err));
	else
		gs_debug("watching %s for new libraries", m->path);
	return 0;
}

struct scan_ctx {
	struct cuda_probes *cp;
	pid_t pid;
	bool ldso_only;
	uint32_t roles; /* of the CUDA libraries found */
};

static int on_mapping(void *ctx, const struct proc_mapping *m)
{
	struct scan_ctx *c = ctx;
	struct cuda_probes *cp = c->cp;
	size_t idx;

	if (!m->exec)
		return 0;
	if (proc_maps_is_ldso(m->path))
		return watch_ldso(cp, c->pid, m);
	if (c->ldso_only)
		return 0;
	if (!key_index_find(&cp->files, m->dev, m->ino, &idx)) {
		idx = examine_file(cp, c->pid, m);
		if (idx == SIZE_MAX || key_index_put(&cp->files, m->dev, m->ino, idx))
			return -ENOMEM;
	}
	if (idx == NOT_CUDA)
		return 0;
	c->roles |= cp->libs[idx].roles;
	return report_lib(cp, c->pid, m, idx);
}

/* Libraries are opened through /proc/PID/root, which needs ptrace access even where the maps
 * file is readable (no CAP_SYS_PTRACE against a process with more capabilities). */
static bool root_refused(pid_t pid)
{
	char root[64];

	snprintf(root, sizeof(root), "/proc/%d/root/", pid);
	return access(root, X_OK) && (errno == EACCES || errno == EPERM);
}

int cuda_probes_scan(struct cuda_probes *cp, pid_t pid)
{
	struct scan_ctx c = {.cp = cp, .pid = pid};
	int err;

	if (cp->detached)
		return 0;
	if (root_refused(pid))
		return -EACCES;
	err = proc_maps_for_each_exec(pid, on_mapping, &c);
	return err ? err : (int)c.roles;
}

void cuda_probes_exempt_thread(struct cuda_probes *cp, pid_t tid, bool exempt)
{
	__u32 key = (__u32)tid;
	__u8 one = 1;
	int fd;

	if (!cp)
		return;
	fd = bpf_map__fd(cp->skel->maps.ldso_exempt);
	if (exempt)
		bpf_map_update_elem(fd, &key, &one, BPF_ANY);
	else
		bpf_map_delete_elem(fd, &key);
}

int cuda_probes_watch_ldso(struct cuda_probes *cp, pid_t pid)
{
	struct scan_ctx c = {.cp = cp, .pid = pid, .ldso_only = true};

	return proc_maps_for_each_exec(pid, on_mapping, &c);
}

void cuda_probes_libs_changed(struct cuda_probes *cp, pid_t pid)
{
	int err = cuda_probes_scan(cp, pid);

	if (err < 0 && err != -ENOENT)
		gs_warn("cannot probe new libraries of pid %d: %s", pid, strerror(-err));
}

void cuda_probes_set_live(struct cuda_probes *cp)
{
	if (cp)
		cp->live = true;
}

int cuda_probes_read_launches(struct cuda_probes *cp,
			      bool (*fn)(void *ctx, uint32_t pid, uint64_t launches), void *ctx)
{
	int fd = bpf_map__fd(cp->skel->maps.live_launches);
	__u32 key, next, gone[1024];
	unsigned ngone = 0;
	__u64 n;
	int err;

	if (!cp->live)
		return 0;
	/* deleting while walking would restart the walk: the processes gone are removed after */
	for (err = bpf_map_get_next_key(fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &n))
			continue;
		if (fn(ctx, key, n) && ngone < sizeof(gone) / sizeof(gone[0]))
			gone[ngone++] = key;
	}
	for (unsigned i = 0; i < ngone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	return err == -ENOENT ? 0 : err;
}

void cuda_probes_use_bridge(struct cuda_probes *cp, struct cupti_link *cl, bool everywhere)
{
	cp->bridge = cl;
	cp->bridge_everywhere = everywhere;
}

void cuda_probes_forget(struct cuda_probes *cp, const struct pid_list *dead)
{
	if (cp)
		key_index_drop_pids(&cp->reported, dead, 1);
}

size_t cuda_probes_tracked(const struct cuda_probes *cp)
{
	return cp ? cp->reported.n : 0;
}

void cuda_probes_detach_watches(struct cuda_probes *cp, struct link_batch *batch)
{
	if (!cp)
		return;
	for (size_t i = 0; i < cp->nlinks; i++)
		link_batch_add(batch, cp->links[i], NULL);
	cp->nlinks = 0;
}

void cuda_probes_detach(struct cuda_probes *cp, struct link_batch *batch)
{
	if (!cp)
		return;
	cuda_probes_detach_watches(cp, batch);
	for (size_t i = 0; i < cp->nfds; i++)
		link_batch_add_fd(batch, cp->fds[i]);
	cp->nfds = 0;
	cp->detached = true;
}

void cuda_probes_free(struct cuda_probes *cp)
{
	struct link_batch batch;

	if (!cp)
		return;
	link_batch_init(&batch);
	cuda_probes_detach(cp, &batch);
	link_batch_free(&batch);
	free(cp->links);
	free(cp->fds);
	free(cp->libs);
	key_index_free(&cp->files);
	key_index_free(&cp->reported);
	key_index_free(&cp->ldso);
	free(cp);
}
