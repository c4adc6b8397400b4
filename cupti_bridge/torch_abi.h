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
#include <stdint.h>

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
	size_t callback_off_needs_inputs; /* its needs_inputs_ (bool) */

	/* Input shapes: at::RecordFunction */
	size_t off_needs_inputs; /* step_callbacks_.needs_inputs_ (bool): inputs were boxed */
	size_t off_inputs;	 /* inputs_.data (const c10::IValue *) */
	size_t off_inputs_size;	 /* inputs_.size (size_t) */
	/* c10::IValue */
	size_t ivalue_size;
	size_t off_ivalue_payload; /* as_tensor: the TensorImpl * of a tensor */
	size_t off_ivalue_tag;	   /* Tag (u32) */
	uint32_t tag_tensor;	   /* Tag::Tensor */
	/* c10::TensorImpl */
	size_t off_impl_sizes; /* sizes_and_strides_.size_ (u64), then the sizes' storage */
	size_t
	    sizes_inline_max; /* ranks up to this are inline after size_, larger behind a pointer */
	size_t off_impl_key_set;  /* key_set_ (u64 DispatchKeySet) */
	uint64_t nested_key_mask; /* DispatchKeySet(DispatchKey::NestedTensor): is_nested() */
	size_t off_impl_policy;	  /* the byte holding sizes_strides_policy_ */
	unsigned policy_shift;	  /* its 2 bits: (byte >> shift) & 3, >= 2 CustomSizes */
	size_t off_impl_symbolic; /* the byte holding has_symbolic_sizes_strides_ */
	unsigned symbolic_bit;	  /* its mask in that byte */
	const char *c10_soname;	  /* the library of TensorImpl: libc10 of the release */
};

/* What the input shapes need from libc10 at run time. */
struct torch_tensor_syms {
	const void *undefined_impl; /* c10::UndefinedTensorImpl::_singleton: undefined tensors */
};

/* The entry of the library the symbols point into, or NULL with a one-line reason in why.
 * Reads nothing at an address before it found it inside an executable segment of a loaded
 * object, so a wrong address is refused, never dereferenced. */
const struct torch_abi *torch_abi_find(const struct gpuspy_torch_syms *syms, char *why,
				       size_t why_len);

/* For input shapes: checks that the libtorch holding add_global_callback keeps inputs_ where
 * the table says (its RecordFunction::num_inputs() reads it there), finds the undefined
 * tensor's TensorImpl in the libc10 that libtorch uses, and checks that libc10's layout is the
 * table's (its TensorImpl::sizes_custom() reads the fields at the table's offsets): 0, or -1
 * with a one-line reason (input shapes are then not available; operators are). */
int torch_abi_tensor(const struct torch_abi *abi, const void *add_global_callback,
		     struct torch_tensor_syms *out, char *why, size_t why_len);

#endif
