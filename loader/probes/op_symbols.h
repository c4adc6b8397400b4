/* SPDX-License-Identifier: MIT */
/*
 * The PyTorch operators a library defines: every at::_ops::<op>::call in its .dynsym (the
 * wrapper libtorch generates for each operator overload, which enters the dispatcher where
 * torch.profiler's RecordFunction fires), with the name torch.profiler shows for it
 * ("aten::add" for the struct add_Tensor). Recognised by the symbols, not the file name.
 */
#ifndef GPUSPY_OP_SYMBOLS_H
#define GPUSPY_OP_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct op_symbol {
	uint64_t offset; /* file offset of the function: where the uprobe goes */
	char *name;	 /* "aten::add" */
};

/* Reads the operators of the ELF file at `path` into a malloc'ed array (*out, *n; nothing
 * allocated when there are none). Returns how many, or -errno (not an ELF file: -ENOEXEC). */
int op_symbols_read(const char *path, struct op_symbol **out, size_t *n);
void op_symbols_free(struct op_symbol *syms, size_t n);

#endif /* GPUSPY_OP_SYMBOLS_H */
