/* SPDX-License-Identifier: MIT */
/*
 * The libtorch releases the observer knows: for each, how to recognise it (its soname, and
 * the machine code of two exported accessors, which encodes the at::RecordFunction field
 * offsets) and the offsets of the fields the observer reads directly (their accessors are
 * inline in torch's headers, so there is no symbol to call). Facts and sources:
 * docs/TORCH_OBSERVER.md.
 */
#ifndef GPUSPY_TORCH_ABI_H
#define GPUSPY_TORCH_ABI_H

#include <stddef.h>

#include "torch_ops.h"

struct torch_abi {
	const char *soname;  /* DT_SONAME of the library that defines the entry points */
	const char *release; /* for messages */
	/* at::RecordFunction fields, bytes from the object's start */
	size_t off_fn_index; /* fn_'s variant index (u32): 0 std::string, 1 schema, ~0 none */
	size_t off_scope;    /* step_callbacks_.scope_ (u8) */
	size_t off_seq_nr;   /* sequence_nr_ (i64) */
	size_t off_fwd_tid;  /* fwd_thread_id_ (u64) */
	size_t off_is_async; /* is_async_ (bool) */
	/* at::RecordFunctionCallback as passed to addGlobalCallback, bytes */
	size_t callback_size;
};

/* The entry of the library the symbols point into, or NULL with a one-line reason in why.
 * Reads nothing at an address before it found it inside an executable segment of a loaded
 * object, so a wrong address is refused, never dereferenced. */
const struct torch_abi *torch_abi_find(const struct gpuspy_torch_syms *syms, char *why,
				       size_t why_len);

#endif
