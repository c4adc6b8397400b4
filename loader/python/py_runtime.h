/* SPDX-License-Identifier: MIT */
/*
 * Finding and checking the CPython interpreter of a process, without touching it: the object
 * that defines _PyRuntime among its mappings (the executable for Debian's static python3.X,
 * libpython for shared builds), its version, and a layout check against py_offsets.h, all read
 * from its files and /proc/PID/mem. The result is the struct gs_py_offsets BPF walks with.
 */
#ifndef GPUSPY_PY_RUNTIME_H
#define GPUSPY_PY_RUNTIME_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/records.h"
#include "loader/python/py_offsets.h"

enum py_runtime_state {
	PY_RUNTIME_NONE,      /* no CPython runtime mapped (yet) */
	PY_RUNTIME_FOUND,     /* found and its offsets filled, not checked yet: py_check() next */
	PY_RUNTIME_READY,     /* checked: `off` is what BPF needs */
	PY_RUNTIME_NOT_READY, /* mapped, not initialised yet or caught mid-change: try again */
	PY_RUNTIME_REFUSED,   /* a version or build gpuspy cannot read: `message` says why */
};

struct py_runtime {
	enum py_runtime_state state;
	char path[PATH_MAX]; /* the runtime object, as the process maps it */
	char version[32];    /* "3.11.2"; "3.8" when the patch level is unknown */
	uint32_t version_hex;
	const struct py_layout *layout;
	struct gs_py_offsets off;
	uint64_t code_type;	      /* &PyCode_Type */
	uint64_t unicode_type;	      /* &PyUnicode_Type */
	char message[PATH_MAX + 256]; /* how it was checked; or why refused or not ready */
};

/* Per-file ELF facts (symbols, load address), shared by every process mapping the file. */
struct py_elf_cache;
struct py_elf_cache *py_elf_cache_new(void);
void py_elf_cache_free(struct py_elf_cache *c);

/* Looks for the interpreter of `pid` and reads its offsets; 0 with rt->state set (FOUND: the
 * caller checks it next with py_check()), or -errno (-ENOENT: the process is gone; -ENOMEM). */
int py_runtime_probe(struct py_elf_cache *c, pid_t pid, struct py_runtime *rt);

/* `len` bytes of `pid`'s memory at `addr`: 0, or -errno (-EFAULT: not all mapped). */
int py_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif /* GPUSPY_PY_RUNTIME_H */
