// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_api.h"
#include "cuda_names.h"
#include "elf_symbols.h"
#include "key_index.h"
#include "proc_maps.h"
#include "trace_writer.h"

struct cuda_names {
	struct key_index known; /* (pid, handle): named, or an ELF lookup was tried */
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
	free(n);
}

static int remember(struct cuda_names *n, uint32_t pid, uint64_t handle)
{
	return key_index_put(&n->known, pid, handle, 0) ? -ENOMEM : 0;
}

static int write_name(struct trace_writer *w, const struct gs_hdr *like, uint64_t handle,
		      uint32_t probe, const char *name)
{
	union {
		struct gs_cuda_name rec;
		unsigned char bytes[sizeof(struct gs_cuda_name) + GS_KERNEL_NAME_MAX + 8];
	} u;
	size_t len = strnlen(name, GS_KERNEL_NAME_MAX - 1);

	memset(&u, 0, sizeof(u));
	u.rec.hdr = *like;
	u.rec.hdr.type = GS_REC_CUDA_NAME;
	u.rec.hdr.size = (uint16_t)gs_align8(sizeof(u.rec) + len + 1);
	u.rec.hdr.flags = 0;
	u.rec.handle = handle;
	u.rec.probe = probe;
	memcpy(u.rec.name, name, len);
	return trace_writer_append(w, &u.rec.hdr);
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
	err = remember(n, call->hdr.pid, call->args[0]);
	if (err || !symbol_at(call->hdr.pid, call->args[0], name, sizeof(name)))
		return err;
	return write_name(w, &call->hdr, call->args[0], GS_CUDA_NAME_ELF, name);
}
