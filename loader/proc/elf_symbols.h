/* SPDX-License-Identifier: MIT */
/*
 * Function symbols of an ELF file, for probing: file offsets of named functions (what a uprobe
 * attaches to) and the function at a file offset (naming a kernel's host stub). Versioned
 * names resolve to their default version; .symtab is read only when asked, because it is
 * large in big libraries and only needed for objects that link CUDA statically.
 */
#ifndef GPUSPY_ELF_SYMBOLS_H
#define GPUSPY_ELF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

/* Looks up `n` function names; offsets[i] is the file offset of names[i], or 0 when the file
 * does not define it. Returns how many were found, or -errno (not an ELF file: -ENOEXEC). */
int elf_find_functions(const char *path, const char *const *names, size_t n, bool use_symtab,
		       uint64_t *offsets);
/* The function whose code holds `file_offset` (.symtab first, then .dynsym) into `name`.
 * Returns 0, -ENOENT when no symbol covers it, or -errno. */
int elf_function_at(const char *path, uint64_t file_offset, char *name, size_t len);

/* The file offset of virtual address `vaddr` through the loadable segments of an open ELF;
 * 0 when no segment holds it in the file (no code or data lives at offset 0, the ELF header). */
uint64_t elf_vaddr_to_offset(Elf *elf, uint64_t vaddr);

/* vaddr(to) - vaddr(from) for two exported symbols of any type (the load bias cancels, so
 * this is also their distance in memory), and the size of `to` if to_size is not NULL. 0,
 * -ENOENT, or -errno. */
int elf_symbol_distance(const char *path, const char *from, const char *to, uint64_t *delta,
			uint64_t *to_size);

/* Called with a kernel's mangled name and the run-time address of the static where nvcc's
 * stub caches its launch handle; a negative return stops and is returned. */
typedef int (*elf_stub_fn)(void *ctx, const char *kernel, uint64_t addr);
/* Every nvcc launch-handle static in .symtab, for the file mapped at `map_start` from file
 * offset `map_offset`. 0 or -errno. */
int elf_stub_handles(const char *path, uint64_t map_start, uint64_t map_offset, elf_stub_fn fn,
		     void *ctx);

#endif /* GPUSPY_ELF_SYMBOLS_H */
