// SPDX-License-Identifier: MIT
/*
 * The floor for CUDA API tracing benchmarks: attaches an empty BPF program as an entry uprobe
 * and another as a return uprobe to every function of loader/cuda_probe_list.h that each given
 * library defines, in every process (pid -1), and holds them until SIGINT or SIGTERM.
 * usage: empty_probes [-v] LIB [LIB...]
 *
 * Prints "empty_probes: attached N probes" (N counts entry and return probes separately) on
 * stderr once every probe is live; bench/cuda_bench.sh waits for that line.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "elf_symbols.h"
#include "empty_probes.skel.h"
#include "uprobe_multi.h"

#define BENCH_TOOL_NAME "empty_probes"
#include "bench_tool.h"

/* The macro may gain arguments: only the symbol name matters here. */
#define CUDA_PROBE(lib, sym, ...) #sym,
static const char *const probe_syms[] = {
#include "cuda_probe_list.h"
};
#undef CUDA_PROBE

#define NSYMS (sizeof(probe_syms) / sizeof(probe_syms[0]))

/* Entry and return probes on every listed function `path` defines: one uprobe_multi link
 * each, attached the way gpuspy attaches its own (loader/uprobe_multi.c), so the floor pays
 * the same kernel path. The link fds go to fds[]; the probe count to *nprobes. */
static int attach_library(struct empty_probes_bpf *skel, const char *path, int *fds, size_t *nfds,
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
		if (offsets[k])
			addrs[n++] = offsets[k];
		else if (verbose)
			error("skipped %s: not in %s", probe_syms[k], path);
	}
	if (!n)
		return 0;
	for (int r = 0; r < 2; r++) {
		int prog = bpf_program__fd(r ? skel->progs.empty_return : skel->progs.empty_entry);
		int fd = uprobe_multi_attach(prog, path, addrs, cookies, n, r == 1);

		if (fd < 0) {
			error("cannot attach %s probes in %s: %s", r ? "return" : "entry", path,
			      strerror(-fd));
			return fd;
		}
		fds[(*nfds)++] = fd;
	}
	*nprobes += 2 * (size_t)n;
	return 0;
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

int main(int argc, char **argv)
{
	struct empty_probes_bpf *skel = NULL;
	int *fds = NULL;
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t block, old;
	size_t nfds = 0, nprobes = 0, i;
	int opt, lib, err = 0;

	while ((opt = getopt(argc, argv, "v")) != -1) {
		if (opt != 'v') {
			error("usage: empty_probes [-v] LIB [LIB...]");
			return 1;
		}
		verbose = true;
	}
	if (optind >= argc) {
		error("usage: empty_probes [-v] LIB [LIB...]");
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

	fds = calloc((size_t)(argc - optind) * 2, sizeof(*fds));
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
	bpf_program__set_expected_attach_type(skel->progs.empty_entry, GS_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(skel->progs.empty_return, GS_BPF_TRACE_UPROBE_MULTI);
	err = empty_probes_bpf__load(skel);
	if (err) {
		error("cannot load the BPF programs: %s", strerror(-err));
		goto cleanup;
	}
	for (lib = optind; lib < argc; lib++) {
		if (seen_before(argv, optind, lib)) {
			if (verbose)
				error("skipped %s: same file as an earlier argument", argv[lib]);
			continue;
		}
		err = attach_library(skel, argv[lib], fds, &nfds, &nprobes);
		if (err)
			goto cleanup;
	}
	error("attached %zu probes", nprobes);

	while (!stop)
		sigsuspend(&old);

cleanup:
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	free(fds);
	empty_probes_bpf__destroy(skel);
	return err ? 1 : 0;
}
