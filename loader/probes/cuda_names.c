// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "lib/clocks.h"
#include "lib/key_index.h"
#include "lib/pid_list.h"
#include "loader/probes/cuda_names.h"
#include "loader/proc/elf_symbols.h"
#include "loader/proc/proc_maps.h"
#include "output/trace/cuda_api.h"
#include "output/trace/trace_writer.h"

struct cuda_names {
	struct key_index known;	  /* (pid, handle): named, or an ELF lookup was tried */
	struct key_index scanned; /* (pid, 0): its launch-handle statics were read */
};

struct cuda_names *cuda_names_new(void)
{
	return calloc(1, sizeof(struct cuda_names));
}

void cuda_names_free(struct cuda_names *n)
{
	if (!n)
		return;
	key_index_free(&n->known);
	key_index_free(&n->scanned);
	free(n);
}

static int remember(struct cuda_names *n, uint32_t pid, uint64_t handle)
{
	return key_index_put(&n->known, pid, handle, 0) ? -ENOMEM : 0;
}

static int write_name(struct trace_writer *w, const struct gs_hdr *like, uint64_t handle,
		      uint32_t probe, const char *name)
{
	struct gs_cuda_name rec = {.hdr = *like, .handle = handle, .probe = probe};

	rec.hdr.type = GS_REC_CUDA_NAME;
	rec.hdr.flags = 0;
	return trace_writer_append_tail(w, &rec.hdr, sizeof(rec), name, GS_KERNEL_NAME_MAX);
}

int cuda_names_from_bpf(struct cuda_names *n, struct trace_writer *w,
			const struct gs_cuda_name *rec)
{
	size_t room = rec->hdr.size > sizeof(*rec) ? rec->hdr.size - sizeof(*rec) : 0;
	int err;

	/* BPF's fixed buffer: a name must be terminated inside it to be used */
	if (!room || !memchr(rec->name, '\0', room) || !rec->name[0])
		return 0;
	err = write_name(w, &rec->hdr, rec->handle, rec->probe, rec->name);
	return err ?: remember(n, rec->hdr.pid, rec->handle);
}

/* The ELF symbol at a code address of a running process; false when it cannot be told. */
static bool symbol_at(uint32_t pid, uint64_t addr, char *name, size_t len)
{
	struct proc_mapping m;
	char path[PATH_MAX + 32];

	if (proc_maps_find((pid_t)pid, addr, &m))
		return false;
	proc_maps_host_path((pid_t)pid, m.path, path, sizeof(path));
	return !elf_function_at(path, addr - m.start + m.offset, name, len);
}

struct handle_scan {
	struct cuda_names *n;
	struct trace_writer *w;
	const struct gs_hdr *like;
	int mem_fd;
	struct key_index files; /* (dev, ino) read already */
	int err;
};

static int on_stub_handle(void *ctx, const char *kernel, uint64_t addr)
{
	struct handle_scan *s = ctx;
	uint64_t handle = 0;
	size_t dummy;

	if (pread(s->mem_fd, &handle, sizeof(handle), (off_t)addr) != sizeof(handle) || !handle ||
	    key_index_find(&s->n->known, s->like->pid, handle, &dummy))
		return 0; /* that kernel was never launched: no handle yet */
	s->err = remember(s->n, s->like->pid, handle);
	s->err = s->err ?: write_name(s->w, s->like, handle, GS_CUDA_NAME_ELF, kernel);
	return s->err ? -1 : 0;
}

static int scan_mapping(void *ctx, const struct proc_mapping *m)
{
	struct handle_scan *s = ctx;
	char path[PATH_MAX + 32];
	size_t dummy;

	if (!m->exec || key_index_find(&s->files, m->dev, m->ino, &dummy))
		return 0;
	if (key_index_put(&s->files, m->dev, m->ino, 0))
		return -ENOMEM;
	proc_maps_host_path((pid_t)s->like->pid, m->path, path, sizeof(path));
	elf_stub_handles(path, m->start, m->offset, on_stub_handle, s);
	return s->err;
}

/* Launch handles that nvcc's stubs got before gpuspy attached sit in their statics: read
 * them all from the process's memory, once per process, and name them. */
static int name_stub_handles(struct cuda_names *n, struct trace_writer *w,
			     const struct gs_hdr *like)
{
	struct handle_scan s = {.n = n, .w = w, .like = like};
	char mem[64];
	size_t dummy;
	int err;

	if (key_index_find(&n->scanned, like->pid, 0, &dummy))
		return 0;
	if (key_index_put(&n->scanned, like->pid, 0, 0))
		return -ENOMEM;
	snprintf(mem, sizeof(mem), "/proc/%u/mem", like->pid);
	s.mem_fd = open(mem, O_RDONLY | O_CLOEXEC);
	if (s.mem_fd < 0)
		return 0;
	err = proc_maps_for_each((pid_t)like->pid, scan_mapping, &s);
	close(s.mem_fd);
	key_index_free(&s.files);
	return err == -ENOMEM || s.err ? (s.err ?: err) : 0;
}

int cuda_names_scan_process(struct cuda_names *n, struct trace_writer *w, pid_t pid)
{
	struct gs_hdr like = {.pid = (uint32_t)pid, .tid = (uint32_t)pid, .ts = gs_monotonic_ns()};

	return name_stub_handles(n, w, &like);
}

int cuda_names_note_call(struct cuda_names *n, struct trace_writer *w,
			 const struct gs_cuda_call *call)
{
	const struct gs_cuda_probe *p = cuda_probe(call->probe);
	char name[GS_KERNEL_NAME_MAX];
	size_t dummy;
	int err;

	if (!p || p->cls != GS_CUDA_LAUNCH_RT || (call->hdr.flags & GS_CUDA_NESTED) ||
	    key_index_find(&n->known, call->hdr.pid, call->args[0], &dummy))
		return 0;
	/* a host stub (cudaLaunchKernel's argument) is code: its symbol is the kernel's name */
	if (symbol_at(call->hdr.pid, call->args[0], name, sizeof(name))) {
		err = remember(n, call->hdr.pid, call->args[0]);
		return err ?: write_name(w, &call->hdr, call->args[0], GS_CUDA_NAME_ELF, name);
	}
	err = name_stub_handles(n, w, &call->hdr);
	return err ?: remember(n, call->hdr.pid, call->args[0]);
}

void cuda_names_forget(struct cuda_names *n, const struct pid_list *dead)
{
	if (!n)
		return;
	key_index_drop_pids(&n->known, dead, 1);
	key_index_drop_pids(&n->scanned, dead, 1);
}

size_t cuda_names_tracked(const struct cuda_names *n)
{
	return n ? n->known.n + n->scanned.n : 0;
}
