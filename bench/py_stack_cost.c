// SPDX-License-Identifier: MIT
/*
 * Attaches one program of bench/py_stack_cost.bpf.c for one Python process — `empty`
 * (nothing) or `stack` (gpuspy's Python stack walker and emit) as an entry uprobe on getppid in
 * its libc; `empty-sys` or `stack-sys` on the sys_enter tracepoint, for its getppid calls — with
 * its interpreter checked and put in py_procs exactly as gpuspy does (loader/python/py_runtime.c),
 * and drains the ring buffer until SIGINT or SIGTERM. usage: py_stack_cost [-v]
 * empty|stack|empty-sys|stack-sys PID
 *
 * Prints "py_stack_cost: attached" on stderr once the probe is live (bench/py_stack_cost.sh
 * waits for it), and at the end on stdout:
 *   records=N frames_avg=F truncated=N losses=N
 * so the bench can check that every call produced a stack of the expected depth.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader/python/py_check.h"
#include "loader/python/py_runtime.h"
#include "py_stack_cost.skel.h"

#define BENCH_TOOL_NAME "py_stack_cost"
#include "bench_tool.h"

#define RING_BYTES (64u << 20)

static unsigned long long records, frames, truncated;

static int on_record(void *ctx, void *data, size_t size)
{
	const struct gs_py_stack *s = data;

	(void)ctx;
	if (size < sizeof(*s) || s->hdr.type != GS_REC_PY_STACK)
		return 0;
	records++;
	frames += s->nframes;
	if (s->hdr.flags & GS_PY_TRUNCATED)
		truncated++;
	return 0;
}

/* The libc the process maps, as a path through its root (the process's view of the file). */
static int find_libc(pid_t pid, char *out, size_t len)
{
	char maps[64], line[4096];
	FILE *f;
	int err = -ENOENT;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');
		char *base;

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		base = strrchr(path, '/') + 1;
		if (strncmp(base, "libc.so", 7) && strncmp(base, "libc-", 5))
			continue;
		snprintf(out, len, "/proc/%d/root%s", pid, path);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

static unsigned long long sum_losses(int fd)
{
	int ncpu = libbpf_num_possible_cpus();
	unsigned long long total = 0;
	__u64 *vals;

	if (ncpu <= 0)
		return 0;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	for (__u32 k = 0; k < GS_LOSS_NKINDS; k++)
		if (!bpf_map_lookup_elem(fd, &k, vals))
			for (int c = 0; c < ncpu; c++)
				total += vals[c];
	free(vals);
	return total;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uopts, .func_name = "getppid");
	struct py_stack_cost_bpf *skel = NULL;
	struct py_elf_cache *cache = NULL;
	struct ring_buffer *rb = NULL;
	struct bpf_program *prog, *progs[4];
	struct bpf_link *link = NULL;
	struct py_runtime rt;
	char libc[PATH_MAX + 64], *end;
	static const char *const modes[4] = {"empty", "stack", "empty-sys", "stack-sys"};
	int mode = -1;
	bool stack, sys;
	long pid;
	int err = 0, argi = 1;

	if (argi < argc && !strcmp(argv[argi], "-v")) {
		verbose = true;
		argi++;
	}
	for (int i = 0; argc - argi == 2 && i < 4; i++)
		if (!strcmp(argv[argi], modes[i]))
			mode = i;
	if (mode < 0) {
		fprintf(stderr, "usage: py_stack_cost [-v] empty|stack|empty-sys|stack-sys PID\n");
		return 2;
	}
	stack = mode == 1 || mode == 3;
	sys = mode >= 2;
	errno = 0;
	pid = strtol(argv[argi + 1], &end, 10);
	if (errno || *end || pid <= 0 || pid > 4194304) {
		error("bad pid '%s'", argv[argi + 1]);
		return 2;
	}
	libbpf_set_print(libbpf_print);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	cache = py_elf_cache_new();
	if (!cache) {
		err = -ENOMEM;
		error("out of memory");
		goto cleanup;
	}
	err = py_runtime_probe(cache, (pid_t)pid, &rt);
	if (!err && rt.state == PY_RUNTIME_FOUND)
		err = py_check((pid_t)pid, &rt);
	if (err) {
		error("cannot read the interpreter of pid %ld: %s", pid, strerror(-err));
		goto cleanup;
	}
	if (rt.state != PY_RUNTIME_READY) {
		err = -EINVAL;
		error("pid %ld: no usable Python runtime: %s", pid, rt.message);
		goto cleanup;
	}
	err = find_libc((pid_t)pid, libc, sizeof(libc));
	if (err) {
		error("pid %ld maps no libc", pid);
		goto cleanup;
	}

	skel = py_stack_cost_bpf__open();
	if (!skel) {
		err = -errno;
		error("cannot open the BPF object: %s", strerror(-err));
		goto cleanup;
	}
	skel->rodata->py_stacks = stack;
	skel->rodata->target_tgid = (__u32)pid;
	progs[0] = skel->progs.empty_probe;
	progs[1] = skel->progs.stack_probe;
	progs[2] = skel->progs.empty_sys;
	progs[3] = skel->progs.stack_sys;
	prog = progs[mode];
	err = bpf_map__set_max_entries(skel->maps.events, RING_BYTES);
	for (int i = 0; !err && i < 4; i++)
		err = bpf_program__set_autoload(progs[i], i == mode);
	if (!err)
		err = py_stack_cost_bpf__load(skel);
	if (err) {
		error("cannot load the BPF object: %s", strerror(-err));
		goto cleanup;
	}
	__u32 key = (__u32)pid;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.py_procs), &key, &rt.off, BPF_ANY)) {
		err = -errno;
		error("cannot fill py_procs: %s", strerror(-err));
		goto cleanup;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, NULL, NULL);
	if (!rb) {
		err = -errno;
		error("cannot open the ring buffer: %s", strerror(-err));
		goto cleanup;
	}
	if (sys)
		link = bpf_program__attach(prog);
	else
		link = bpf_program__attach_uprobe_opts(prog, (pid_t)pid, libc, 0, &uopts);
	if (!link) {
		err = -errno;
		error("cannot attach %s: %s", modes[mode], strerror(-err));
		goto cleanup;
	}
	fprintf(stderr, "py_stack_cost: attached %s for pid %ld (Python %s)\n", modes[mode], pid,
		rt.version);
	while (!stop) {
		err = ring_buffer__poll(rb, 100);
		if (err < 0 && err != -EINTR) {
			error("ring buffer poll failed: %s", strerror(-err));
			goto cleanup;
		}
	}
	bpf_link__destroy(link);
	link = NULL;
	ring_buffer__consume(rb);
	printf("records=%llu frames_avg=%.1f truncated=%llu losses=%llu\n", records,
	       records ? (double)frames / (double)records : 0.0, truncated,
	       sum_losses(bpf_map__fd(skel->maps.losses)));
	err = 0;

cleanup:
	bpf_link__destroy(link);
	ring_buffer__free(rb);
	py_stack_cost_bpf__destroy(skel);
	py_elf_cache_free(cache);
	return err ? 1 : 0;
}
