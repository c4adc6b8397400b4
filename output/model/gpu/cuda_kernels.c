// SPDX-License-Identifier: MIT
/* Kernel names: (process, handle) -> mangled name, cuKernelGetFunction aliases, and the
 * resolution of every launch group once the whole trace is read. */
#include <inttypes.h>
#include <stdio.h>
#include "lib/array_grow.h"
#include "lib/demangle.h"
#include "output/model/gpu/cuda_kernels.h"

/* CUfunction -> cudaKernel_t -> host stub, with a runtime pairing on top, needs three */
#define CUDA_ALIAS_HOPS 4

static const struct cuda_name *find_name(const struct cuda_model *cm, uint32_t pid, uint64_t handle)
{
	size_t i;

	return key_index_find(&cm->ix_names, pid, handle, &i) ? &cm->names[i] : NULL;
}

int cuda_kernels_on_name(struct cuda_model *cm, const struct gs_cuda_name *n)
{
	bool elf = n->probe == GS_CUDA_NAME_ELF;
	struct cuda_name *e;
	char *copy;
	size_t i;

	if (!n->handle || !n->name[0])
		return 0;
	if (key_index_find(&cm->ix_names, n->hdr.pid, n->handle, &i)) {
		e = &cm->names[i];
		/* the symbol table names the host stub, the registration names the device
		 * function: they agree for nvcc kernels, and the registration is the authority */
		if (elf && !e->elf)
			return 0;
	} else {
		e = array_grow((void **)&cm->names, &cm->nnames, &cm->names_cap, sizeof(*e));
		if (!e || key_index_put(&cm->ix_names, n->hdr.pid, n->handle, cm->nnames - 1))
			return -1;
		e->pid = n->hdr.pid;
		e->handle = n->handle;
	}
	/* a rebound handle (a module unloaded, another loaded at the same address) keeps the
	 * latest name */
	copy = strdup(n->name);
	if (!copy)
		return -1;
	free(e->mangled);
	e->mangled = copy;
	e->elf = elf;
	return 0;
}

static int put_alias(struct cuda_model *cm, uint32_t pid, uint64_t made, uint64_t from,
		     bool replace)
{
	struct cuda_alias *a;
	size_t i;

	if (!made || made == from)
		return 0;
	if (key_index_find(&cm->ix_aliases, pid, made, &i)) {
		if (replace)
			cm->aliases[i].from = from;
		return 0;
	}
	a = array_grow((void **)&cm->aliases, &cm->naliases, &cm->aliases_cap, sizeof(*a));
	if (!a || key_index_put(&cm->ix_aliases, pid, made, cm->naliases - 1))
		return -1;
	a->from = from;
	return 0;
}

int cuda_kernels_on_alias(struct cuda_model *cm, const struct gs_cuda_call *c)
{
	return put_alias(cm, c->hdr.pid, c->out, c->args[1], true);
}

int cuda_kernels_on_pair(struct cuda_model *cm, uint32_t pid, uint64_t inner, uint64_t func)
{
	/* the driver ran the runtime launch's kernel: its CUfunction is that kernel too, so the
	 * driver launch (and later direct launches of it) get the stub's name. A handle's
	 * own alias from a KERNEL_FUNCTION call is more direct and is kept. */
	return put_alias(cm, pid, inner, func, false);
}

/* A handle's own name, or the name of the handle it was made from: a CUfunction from a
 * CUkernel (cuKernelGetFunction), a runtime kernel from its host stub (__cudaGetKernel). */
static const struct cuda_name *resolve_handle(const struct cuda_model *cm, uint32_t pid,
					      uint64_t handle)
{
	const struct cuda_name *n = find_name(cm, pid, handle);
	size_t i;

	/* bounded: a corrupt or adversarial trace may hold an alias cycle */
	for (int hops = 0; !n && hops < CUDA_ALIAS_HOPS; hops++) {
		if (!key_index_find(&cm->ix_aliases, pid, handle, &i))
			break;
		handle = cm->aliases[i].from;
		n = find_name(cm, pid, handle);
	}
	return n;
}

const struct cuda_name *cuda_model_kernel(const struct cuda_model *cm, uint32_t pid, uint64_t func,
					  uint64_t inner)
{
	const struct cuda_name *n = resolve_handle(cm, pid, func);

	return n || !inner ? n : resolve_handle(cm, pid, inner);
}

void cuda_kernel_placeholder(char *buf, size_t len, bool graph, uint64_t handle)
{
	snprintf(buf, len, graph ? "<graph 0x%" PRIx64 ">" : "<unknown kernel 0x%" PRIx64 ">",
		 handle);
}

int cuda_kernels_finish(struct cuda_model *cm)
{
	for (size_t i = 0; i < cm->nnames; i++) {
		cm->names[i].display = demangle(cm->names[i].mangled);
		if (!cm->names[i].display)
			return -1;
	}
	for (size_t i = 0; i < cm->ngroups; i++) {
		struct cuda_launch_group *g = &cm->groups[i];

		if (g->graph)
			continue;
		g->name = cuda_model_kernel(cm, g->pid, g->func, g->inner);
		if (!g->name)
			cm->unnamed_launches += g->launches;
	}
	return 0;
}

void cuda_kernels_free(struct cuda_model *cm)
{
	for (size_t i = 0; i < cm->nnames; i++) {
		free(cm->names[i].mangled);
		free(cm->names[i].display);
	}
	free(cm->names);
	free(cm->aliases);
	key_index_free(&cm->ix_names);
	key_index_free(&cm->ix_aliases);
}
