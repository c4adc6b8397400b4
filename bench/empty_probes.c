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
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "empty_probes.skel.h"

/* The macro may gain arguments: only the symbol name matters here. */
#define CUDA_PROBE(lib, sym, ...) #sym,
static const char *const probe_syms[] = {
#include "cuda_probe_list.h"
};
#undef CUDA_PROBE

#define NSYMS (sizeof(probe_syms) / sizeof(probe_syms[0]))

static bool verbose;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return verbose ? vfprintf(stderr, fmt, ap) : 0;
}

static void error(const char *fmt, ...)
{
	va_list ap;

	fputs("empty_probes: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ELF symbol names may carry a version ("cudaMalloc@@libcudart.so.13" in .symtab). */
static bool sym_matches(const char *elf_name, const char *want)
{
	size_t n = strlen(want);

	return strncmp(elf_name, want, n) == 0 && (elf_name[n] == '\0' || elf_name[n] == '@');
}

/*
 * Marks in defined[] the probe symbols `path` defines as functions, from .dynsym and .symtab.
 * Deciding this here rather than from the attach error keeps "the library lacks it" (skipped)
 * apart from a real attach failure (fatal).
 */
static int find_defined(const char *path, bool *defined)
{
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		error("cannot open %s: %s", path, strerror(-err));
		return err;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -EINVAL;
		error("%s: not an ELF file", path);
		goto cleanup;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t i, count;

		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_DYNSYM && shdr.sh_type != SHT_SYMTAB) || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		count = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < count; i++) {
			GElf_Sym sym;
			const char *name;
			int type;
			size_t k;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (!name)
				continue;
			for (k = 0; k < NSYMS; k++)
				if (!defined[k] && sym_matches(name, probe_syms[k]))
					defined[k] = true;
		}
	}
cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

static bool listed_before(size_t k)
{
	size_t j;

	for (j = 0; j < k; j++)
		if (strcmp(probe_syms[j], probe_syms[k]) == 0)
			return true;
	return false;
}

/* Entry and return probes on every listed function `path` defines, appended to links[]. */
static int attach_library(struct empty_probes_bpf *skel, const char *path, struct bpf_link **links,
			  size_t *nlinks)
{
	bool defined[NSYMS] = {false};
	size_t k;
	int err;

	err = find_defined(path, defined);
	if (err)
		return err;
	for (k = 0; k < NSYMS; k++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = probe_syms[k]);
		struct bpf_program *progs[2] = {skel->progs.empty_entry, skel->progs.empty_return};
		int r;

		if (listed_before(k))
			continue;
		if (!defined[k]) {
			if (verbose)
				error("skipped %s: not in %s", probe_syms[k], path);
			continue;
		}
		for (r = 0; r < 2; r++) {
			opts.retprobe = r == 1;
			links[*nlinks] =
			    bpf_program__attach_uprobe_opts(progs[r], -1, path, 0, &opts);
			if (!links[*nlinks]) {
				err = -errno;
				error("cannot attach %s to %s in %s: %s",
				      r ? "uretprobe" : "uprobe", probe_syms[k], path,
				      strerror(-err));
				return err;
			}
			(*nlinks)++;
		}
	}
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
	struct bpf_link **links = NULL;
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t block, old;
	size_t nlinks = 0, i;
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
	if (elf_version(EV_CURRENT) == EV_NONE) {
		error("cannot initialise libelf: %s", elf_errmsg(-1));
		return 1;
	}

	/* Blocked until sigsuspend: a signal during attach is then not lost, nor fatal. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	links = calloc((size_t)(argc - optind) * NSYMS * 2, sizeof(*links));
	if (!links) {
		err = -ENOMEM;
		error("out of memory");
		goto cleanup;
	}
	skel = empty_probes_bpf__open_and_load();
	if (!skel) {
		err = -errno;
		error("cannot load the BPF programs: %s", strerror(-err));
		goto cleanup;
	}
	for (lib = optind; lib < argc; lib++) {
		if (seen_before(argv, optind, lib)) {
			if (verbose)
				error("skipped %s: same file as an earlier argument", argv[lib]);
			continue;
		}
		err = attach_library(skel, argv[lib], links, &nlinks);
		if (err)
			goto cleanup;
	}
	error("attached %zu probes", nlinks);

	while (!stop)
		sigsuspend(&old);

cleanup:
	for (i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	free(links);
	empty_probes_bpf__destroy(skel);
	return err ? 1 : 0;
}
