// SPDX-License-Identifier: MIT
/*
 * Benchmark floors: empty BPF programs attached where gpuspy attaches its own, held until SIGINT
 * or SIGTERM. One mode per run:
 *   empty_probes [-v] LIB [LIB...]      an entry and a return uprobe on every function of
 *                                       output/trace/cuda_probe_list.h that each library defines,
 * in every process (pid -1): the CUDA API floor empty_probes [-v] --ops LIB [...]   a uprobe
 * session program (entry and return) on every at::_ops::<op>::call the libraries define, found as
 *                                       gpuspy finds them: the PyTorch operator floor
 *   empty_probes [-v] --launch LIB [...] one entry uprobe, no return, on each driver launch
 *                                       function (cuLaunchKernel*, cuGraphLaunch*) the libraries
 *                                       define: the live views' launch floor
 *   empty_probes [-v] --syscalls        tp_btf sys_enter and sys_exit: the syscall floor
 *   empty_probes [-v] --sched           tp_btf sched_switch: the context switch floor
 * With --count --syscalls, sys_enter alone counts each call per (process, thread, syscall) in a
 * hash map, and nothing is attached to sys_exit: exact counts without durations.
 * With --filter --syscalls, sys_enter and sys_exit each only ask which process they run in (one
 * helper call): what any tracer of some processes pays on every syscall of the others.
 * With --timer (any mode) the programs time each call, as little as that can be done: a clock
 * read at both ends, the start kept in the thread's task storage, a per-thread total. What a
 * tracer of exact per-call durations pays at the least.
 *
 * Prints "empty_probes: attached N probes" (N counts entry and return probes, or tracepoint
 * programs, separately) on stderr once every probe is live; the bench scripts wait for that line.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <getopt.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "empty_probes.skel.h"
#include "loader/probes/op_symbols.h"
#include "loader/proc/elf_symbols.h"
#include "loader/session/uprobe_multi.h"

#define BENCH_TOOL_NAME "empty_probes"
#include "bench_tool.h"

/* The macro may gain arguments: only the symbol name matters here. */
#define CUDA_PROBE(lib, sym, ...) #sym,
static const char *const probe_syms[] = {
#include "output/trace/cuda_probe_list.h"
};
#undef CUDA_PROBE

#define NSYMS (sizeof(probe_syms) / sizeof(probe_syms[0]))

/* The programs of this run, one per hook: the empty ones, or the timer ones (--timer). */
struct floor_progs {
	struct bpf_program *entry, *ret, *session, *sys_enter, *sys_exit, *sched_switch;
};

static struct floor_progs floor_programs(struct empty_probes_bpf *skel, bool timer, bool count,
					 bool filter)
{
	if (count)
		return (struct floor_progs){.sys_enter = skel->progs.count_sys_enter};
	if (filter)
		return (struct floor_progs){.sys_enter = skel->progs.filter_sys_enter,
					    .sys_exit = skel->progs.filter_sys_exit};
	if (timer)
		return (struct floor_progs){
		    skel->progs.timer_entry,	skel->progs.timer_return,
		    skel->progs.timer_session,	skel->progs.timer_sys_enter,
		    skel->progs.timer_sys_exit, skel->progs.timer_sched_switch};
	return (struct floor_progs){skel->progs.empty_entry,	skel->progs.empty_return,
				    skel->progs.empty_session,	skel->progs.empty_sys_enter,
				    skel->progs.empty_sys_exit, skel->progs.empty_sched_switch};
}

static bool launch_only; /* --launch */

/* The driver's launch functions: what gpuspy's live views probe, entry only, on a launch. */
static bool is_driver_launch(const char *sym)
{
	return !strncmp(sym, "cuLaunchKernel", 14) || !strncmp(sym, "cuGraphLaunch", 13);
}

/* Entry and return probes on every listed function `path` defines: one uprobe_multi link
 * each, attached the way gpuspy attaches its own (loader/session/uprobe_multi.c), so the floor pays
 * the same kernel path (--launch: entry probes on the driver's launch functions only). The link
 * fds go to fds[]; the probe count to *nprobes. */
static int attach_library(const struct floor_progs *progs, const char *path, int *fds, size_t *nfds,
			  size_t *nprobes)
{
	uint64_t offsets[NSYMS], addrs[NSYMS], cookies[NSYMS] = {0};
	uint32_t n = 0;
	int found = elf_find_functions(path, probe_syms, NSYMS, true, offsets);

	if (found < 0) {
		error("cannot read %s: %s", path, strerror(-found));
		return found;
	}
	for (size_t k = 0; k < NSYMS; k++) {
		if (offsets[k] && (!launch_only || is_driver_launch(probe_syms[k])))
			addrs[n++] = offsets[k];
		else if (verbose)
			error("skipped %s: not in %s", probe_syms[k], path);
	}
	if (!n)
		return 0;
	for (int r = 0; r < (launch_only ? 1 : 2); r++) {
		int prog = bpf_program__fd(r ? progs->ret : progs->entry);
		int fd = uprobe_multi_attach(prog, path, addrs, cookies, n, r == 1);

		if (fd < 0) {
			error("cannot attach %s probes in %s: %s", r ? "return" : "entry", path,
			      strerror(-fd));
			return fd;
		}
		fds[(*nfds)++] = fd;
	}
	*nprobes += (launch_only ? 1 : 2) * (size_t)n;
	return 0;
}

/* The empty session program on every PyTorch operator `path` defines (none: nothing attached),
 * one link, as loader/probes/op_probes.c attaches gpuspy's op_call. */
static int attach_ops_library(const struct floor_progs *progs, const char *path, int *fds,
			      size_t *nfds, size_t *nprobes)
{
	struct op_symbol *syms = NULL;
	uint64_t *offsets = NULL, *cookies = NULL;
	size_t n = 0, k;
	int err = op_symbols_read(path, &syms, &n), fd;

	if (err < 0) {
		error("cannot read %s: %s", path, strerror(-err));
		return err;
	}
	if (!n) {
		if (verbose)
			error("skipped %s: no PyTorch operators", path);
		return 0;
	}
	offsets = calloc(n, sizeof(*offsets));
	cookies = calloc(n, sizeof(*cookies));
	if (!offsets || !cookies) {
		err = -ENOMEM;
		error("out of memory");
		goto out;
	}
	for (k = 0; k < n; k++)
		offsets[k] = syms[k].offset;
	fd = uprobe_session_attach(bpf_program__fd(progs->session), path, offsets, cookies,
				   (uint32_t)n);
	if (fd < 0) {
		err = fd;
		error("cannot attach session probes in %s: %s", path, strerror(-fd));
		goto out;
	}
	fds[(*nfds)++] = fd;
	*nprobes += 2 * n;
	err = 0;
out:
	free(offsets);
	free(cookies);
	op_symbols_free(syms, n);
	return err;
}

/* Two paths to one file (a symlink, a repeat) would stack two probes on each function. */
static bool seen_before(char **paths, int first, int i)
{
	struct stat a, b;
	int j;

	if (stat(paths[i], &a))
		return false; /* find_defined reports it */
	for (j = first; j < i; j++)
		if (!stat(paths[j], &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return true;
	return false;
}

enum mode { MODE_CUDA, MODE_OPS, MODE_SYSCALLS, MODE_SCHED };

#define USAGE                                                                                      \
	"usage: empty_probes [-v] [--timer] [--ops|--launch] LIB [LIB...] | [-v] [--timer] "       \
	"[--count|--filter] --syscalls | "                                                         \
	"[-v] [--timer] --sched"

/* Only the mode's programs of this run are loaded: the others would need their attach types
 * set up. */
static void select_programs(struct empty_probes_bpf *skel, const struct floor_progs *p,
			    enum mode mode)
{
	struct bpf_program *prog;
	struct {
		struct bpf_program *prog;
		bool on;
	} wanted[] = {
	    {p->entry, mode == MODE_CUDA},	  {p->ret, mode == MODE_CUDA},
	    {p->session, mode == MODE_OPS},	  {p->sys_enter, mode == MODE_SYSCALLS},
	    {p->sys_exit, mode == MODE_SYSCALLS}, {p->sched_switch, mode == MODE_SCHED},
	};

	for (prog = bpf_object__next_program(skel->obj, NULL); prog;
	     prog = bpf_object__next_program(skel->obj, prog))
		bpf_program__set_autoload(prog, false);
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (wanted[i].prog) /* --count has no programs but sys_enter's */
			bpf_program__set_autoload(wanted[i].prog, wanted[i].on);
	if (!p->entry)
		return;
	bpf_program__set_expected_attach_type(p->entry, GS_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->ret, GS_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(p->session, GS_BPF_TRACE_UPROBE_SESSION);
}

/* tp_btf programs: attached by their section name; the links go to links[]. */
static int attach_tracepoints(const struct floor_progs *p, enum mode mode, struct bpf_link **links,
			      size_t *nlinks, size_t *nprobes)
{
	struct bpf_program *progs[2];
	size_t n = 0;

	if (mode == MODE_SYSCALLS) {
		progs[n++] = p->sys_enter;
		progs[n++] = p->sys_exit;
	} else {
		progs[n++] = p->sched_switch;
	}
	for (size_t i = 0; i < n; i++) {
		struct bpf_link *link;

		if (!progs[i]) /* --count: no sys_exit program */
			continue;
		link = bpf_program__attach(progs[i]);

		if (!link) {
			int err = -errno;

			error("cannot attach %s: %s", bpf_program__name(progs[i]), strerror(-err));
			return err;
		}
		links[(*nlinks)++] = link;
		(*nprobes)++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"ops", no_argument, NULL, 'o'},
	    {"syscalls", no_argument, NULL, 's'},
	    {"sched", no_argument, NULL, 'S'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"timer", no_argument, NULL, 't'},
	    {"launch", no_argument, NULL, 'l'},
	    {"count", no_argument, NULL, 'c'},
	    {"filter", no_argument, NULL, 'f'},
	    {NULL, 0, NULL, 0}, /* end */
	};
	struct empty_probes_bpf *skel = NULL;
	struct floor_progs progs;
	struct bpf_link *links[2] = {NULL, NULL};
	int *fds = NULL;
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t block, old;
	size_t nfds = 0, nlinks = 0, nprobes = 0, i;
	enum mode mode = MODE_CUDA;
	int opt, lib, err = 0;
	bool tracepoints, timer = false, count = false, filter = false;

	while ((opt = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		switch (opt) {
		case 'v':
			verbose = true;
			break;
		case 'o':
			mode = MODE_OPS;
			break;
		case 's':
			mode = MODE_SYSCALLS;
			break;
		case 'S':
			mode = MODE_SCHED;
			break;
		case 't':
			timer = true;
			break;
		case 'l':
			launch_only = true;
			break;
		case 'c':
			count = true;
			break;
		case 'f':
			filter = true;
			break;
		default:
			error(USAGE);
			return 1;
		}
	}
	tracepoints = mode == MODE_SYSCALLS || mode == MODE_SCHED;
	if (tracepoints != (optind >= argc) ||
	    ((count || filter) && (mode != MODE_SYSCALLS || timer || (count && filter)))) {
		error(USAGE);
		return 1;
	}
	libbpf_set_print(libbpf_print);

	/* Blocked until sigsuspend: a signal during attach is then not lost, nor fatal. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	fds = calloc((size_t)(argc - optind) * 2 + 1, sizeof(*fds));
	if (!fds) {
		err = -ENOMEM;
		error("out of memory");
		goto cleanup;
	}
	skel = empty_probes_bpf__open();
	if (!skel) {
		err = -errno;
		error("cannot open the BPF programs: %s", strerror(-err));
		goto cleanup;
	}
	progs = floor_programs(skel, timer, count, filter);
	select_programs(skel, &progs, mode);
	err = empty_probes_bpf__load(skel);
	if (err) {
		error("cannot load the BPF programs: %s", strerror(-err));
		goto cleanup;
	}
	if (tracepoints) {
		err = attach_tracepoints(&progs, mode, links, &nlinks, &nprobes);
		if (err)
			goto cleanup;
	}
	for (lib = optind; lib < argc; lib++) {
		if (seen_before(argv, optind, lib)) {
			if (verbose)
				error("skipped %s: same file as an earlier argument", argv[lib]);
			continue;
		}
		if (mode == MODE_OPS)
			err = attach_ops_library(&progs, argv[lib], fds, &nfds, &nprobes);
		else
			err = attach_library(&progs, argv[lib], fds, &nfds, &nprobes);
		if (err)
			goto cleanup;
	}
	error("attached %zu probes", nprobes);

	while (!stop)
		sigsuspend(&old);

cleanup:
	for (i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	free(fds);
	empty_probes_bpf__destroy(skel);
	return err ? 1 : 0;
}
