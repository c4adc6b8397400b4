/* SPDX-License-Identifier: MIT */
/*
 * The CUDA part of the trace model: what the CUDA reports need, gathered in the model's one
 * pass. Only outermost calls are counted (a runtime call and the driver calls it makes are one
 * API call); kernel names are resolved once the whole file is read, because the loader names
 * host stubs lazily and its name records may follow the launches that use them.
 *
 * The structures only: cuda_model.c fills them (cuda_model.h), and cuda_kernels.c, which it
 * calls, names the kernels in them (cuda_kernels.h).
 */
#ifndef GPUSPY_CUDA_MODEL_TYPES_H
#define GPUSPY_CUDA_MODEL_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/key_index.h"
#include "output/model/gpu/cuda_nesting.h"
#include "output/model/gpu/gpu_mem.h"
#include "output/trace/cuda_api.h"
#include "output/trace/trace_format.h"

#define CUDA_MAX_SHAPES 32 /* distinct grid or block shapes kept per kernel */

/* A kernel handle of a process bound to its name. */
struct cuda_name {
	uint32_t pid;
	bool elf; /* from the ELF symbol table: a naming call's name replaces it */
	uint64_t handle;
	char *mangled;
	char *display; /* demangled, once the model is loaded */
};

/* A handle made from another by a KERNEL_FUNCTION call (cuKernelGetFunction: a CUfunction
 * from a CUkernel; __cudaGetKernel: a runtime kernel from a host stub), or the CUfunction a
 * runtime launch's driver launch ran; keyed by the made one. */
struct cuda_alias {
	uint64_t from;
};

struct cuda_dims {
	uint32_t d[3];
	uint64_t first; /* launch sequence number of its first use, for first-seen order */
};

struct cuda_shapes {
	struct cuda_dims v[CUDA_MAX_SHAPES];
	uint32_t n;
	bool more; /* distinct shapes beyond CUDA_MAX_SHAPES were seen */
};

/* Successful outermost launches with the same process, function, handle and nested driver
 * launch handle: one kernel, unless a handle was rebound. */
struct cuda_launch_group {
	uint32_t pid;
	uint16_t probe;
	bool graph;
	uint64_t func;	/* host stub, CUfunction, CUkernel or CUgraphExec */
	uint64_t inner; /* the CUfunction of the driver launch inside a runtime launch, or 0 */
	uint64_t launches, total_ns;
	struct cuda_shapes grids, blocks;
	size_t next; /* the next group with this (pid, probe, func) and another inner */
	const struct cuda_name *name; /* resolved at the end of the load; NULL: unknown */
};

/* Outermost calls of one probed function. */
struct cuda_api_stat {
	uint64_t *durs; /* every duration, sorted once the model is loaded */
	size_t n, cap;
	uint64_t total_ns, errors;
};

struct cuda_api_error {
	uint16_t probe;
	int32_t code;
	uint64_t calls;
};

struct cuda_copy_stat {
	uint64_t count, bytes, total_ns;
};

struct cuda_lib_info {
	uint32_t pid, roles, probes;
	uint64_t dev, ino;
	char *path;
};

struct cuda_model {
	uint64_t calls;		   /* outermost API calls */
	uint64_t launches;	   /* successful outermost kernel launches (graphs excluded) */
	uint64_t graph_launches;   /* successful outermost graph launches */
	uint64_t unnamed_launches; /* launches whose kernel name is unknown */
	uint64_t libs_probed;	   /* distinct libraries (dev, ino) with probes attached */

	struct cuda_api_stat *api; /* gs_cuda_nprobes entries, allocated at the first call */
	struct cuda_api_error *errors;
	size_t nerrors, errors_cap;
	struct cuda_copy_stat copies[GS_COPY_NKINDS], memsets;
	struct cuda_launch_group *groups;
	size_t ngroups, groups_cap;
	uint64_t launch_seq;
	struct cuda_name *names;
	size_t nnames, names_cap;
	struct cuda_alias *aliases;
	size_t naliases, aliases_cap;
	struct cuda_lib_info *libs;
	size_t nlibs, libs_cap;

	struct gpu_mem mem;	     /* successful outermost allocations and frees */
	struct cuda_nesting nesting; /* pairs runtime launches with their driver launches */
	struct key_index ix_errors, ix_groups, ix_names, ix_aliases;
};

#endif /* GPUSPY_CUDA_MODEL_TYPES_H */
