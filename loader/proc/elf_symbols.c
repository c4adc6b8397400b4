// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "loader/proc/elf_symbols.h"

#define VERSYM_HIDDEN 0x8000 /* a non-default version (name@VER rather than name@@VER) */

struct elf_file {
	int fd;
	Elf *elf;
};

static int elf_file_open(const char *path, struct elf_file *f)
{
	f->elf = NULL;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -errno;
	if (elf_version(EV_CURRENT) == EV_NONE ||
	    !(f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL)) || elf_kind(f->elf) != ELF_K_ELF) {
		if (f->elf)
			elf_end(f->elf);
		close(f->fd);
		return -ENOEXEC;
	}
	return 0;
}

static void elf_file_close(struct elf_file *f)
{
	elf_end(f->elf);
	close(f->fd);
}

/* The loadable segment holding `value`, a virtual address or (`is_offset`) a file offset. */
static bool find_segment(Elf *elf, uint64_t value, bool is_offset, GElf_Phdr *ph)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		uint64_t start;

		if (!gelf_getphdr(elf, (int)i, ph) || ph->p_type != PT_LOAD)
			continue;
		start = is_offset ? ph->p_offset : ph->p_vaddr;
		if (value >= start && value < start + ph->p_filesz)
			return true;
	}
	return false;
}

uint64_t elf_vaddr_to_offset(Elf *elf, uint64_t vaddr)
{
	GElf_Phdr ph;

	return find_segment(elf, vaddr, false, &ph) ? vaddr - ph.p_vaddr + ph.p_offset : 0;
}

/* The virtual address of a file offset; 0 when no loadable segment holds it. */
static uint64_t offset_to_vaddr(Elf *elf, uint64_t off)
{
	GElf_Phdr ph;

	return find_segment(elf, off, true, &ph) ? off - ph.p_offset + ph.p_vaddr : 0;
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	return NULL;
}

/* Calls fn for every defined symbol of one symbol table (functions only, unless
 * `any_type`); a nonzero return stops and is returned. */
typedef int (*symbol_fn)(void *ctx, const char *name, const GElf_Sym *sym);

static int for_each_symbol(Elf *elf, Elf64_Word type, bool any_type, symbol_fn fn, void *ctx)
{
	GElf_Shdr sh, vsh;
	Elf_Scn *scn = find_section(elf, type, &sh), *vscn;
	Elf_Data *data, *versyms = NULL;
	GElf_Sym sym;
	GElf_Versym ver;
	int ret = 0;

	if (!scn || !(data = elf_getdata(scn, NULL)) || !sh.sh_entsize)
		return 0;
	if (type == SHT_DYNSYM && (vscn = find_section(elf, SHT_GNU_versym, &vsh)))
		versyms = elf_getdata(vscn, NULL);
	for (size_t i = 0; !ret && i < sh.sh_size / sh.sh_entsize; i++) {
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) ||
		    (!any_type && GELF_ST_TYPE(sym.st_info) != STT_FUNC) ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		if (versyms && gelf_getversym(versyms, (int)i, &ver) && (ver & VERSYM_HIDDEN))
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (name && *name)
			ret = fn(ctx, name, &sym);
	}
	return ret;
}

struct find_ctx {
	Elf *elf;
	const char *const *names;
	size_t n;
	uint64_t *offsets;
	int found;
};

static int match_name(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct find_ctx *c = ctx;

	for (size_t i = 0; i < c->n; i++) {
		if (c->offsets[i] || strcmp(c->names[i], name))
			continue;
		c->offsets[i] = elf_vaddr_to_offset(c->elf, sym->st_value);
		c->found += c->offsets[i] != 0;
	}
	return 0;
}

int elf_find_functions(const char *path, const char *const *names, size_t n, bool use_symtab,
		       uint64_t *offsets)
{
	struct elf_file f;
	struct find_ctx c = {.names = names, .n = n, .offsets = offsets};
	int err = elf_file_open(path, &f);

	memset(offsets, 0, n * sizeof(*offsets));
	if (err)
		return err;
	c.elf = f.elf;
	for_each_symbol(f.elf, SHT_DYNSYM, false, match_name, &c);
	if (use_symtab)
		for_each_symbol(f.elf, SHT_SYMTAB, false, match_name, &c);
	elf_file_close(&f);
	return c.found;
}

struct at_ctx {
	uint64_t vaddr;
	char *name;
	size_t len;
	bool found;
};

static int match_address(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct at_ctx *c = ctx;
	uint64_t end = sym->st_value + (sym->st_size ? sym->st_size : 1);

	if (c->vaddr < sym->st_value || c->vaddr >= end)
		return 0;
	snprintf(c->name, c->len, "%s", name);
	c->found = true;
	return 1;
}

int elf_function_at(const char *path, uint64_t file_offset, char *name, size_t len)
{
	struct elf_file f;
	struct at_ctx c = {.name = name, .len = len};
	int err = elf_file_open(path, &f);

	if (err)
		return err;
	c.vaddr = offset_to_vaddr(f.elf, file_offset);
	if (c.vaddr && !for_each_symbol(f.elf, SHT_SYMTAB, false, match_address, &c))
		for_each_symbol(f.elf, SHT_DYNSYM, false, match_address, &c);
	elf_file_close(&f);
	return c.found ? 0 : -ENOENT;
}

struct vaddr_ctx {
	const char *name;
	uint64_t vaddr;
	uint64_t size;
};

static int match_vaddr(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct vaddr_ctx *c = ctx;

	if (strcmp(c->name, name))
		return 0;
	c->vaddr = sym->st_value;
	c->size = sym->st_size;
	return 1;
}

int elf_symbol_distance(const char *path, const char *from, const char *to, uint64_t *delta,
			uint64_t *to_size)
{
	struct vaddr_ctx a = {.name = from}, b = {.name = to};
	struct elf_file f;
	int err = elf_file_open(path, &f);

	if (err)
		return err;
	for_each_symbol(f.elf, SHT_DYNSYM, true, match_vaddr, &a);
	for_each_symbol(f.elf, SHT_DYNSYM, true, match_vaddr, &b);
	elf_file_close(&f);
	if (!a.vaddr || !b.vaddr)
		return -ENOENT;
	*delta = b.vaddr - a.vaddr;
	if (to_size)
		*to_size = b.size;
	return 0;
}

struct stub_ctx {
	elf_stub_fn fn;
	void *ctx;
	uint64_t bias; /* run-time address - link-time address */
};

/* nvcc keeps each kernel's launch handle in a static of its device stub:
 * _ZZ<n>__device_stub__<kernel's mangled name without the leading '_'><params>E8__handle.
 * The stub's own name, after the prefix, is the kernel's name ("Z11tick_kernelPj", or an
 * extern "C" kernel's plain name). */
static int match_stub_handle(void *ctx, const char *name, const GElf_Sym *sym)
{
	static const char prefix[] = "__device_stub__";
	struct stub_ctx *c = ctx;
	char kernel[512];
	const char *p;
	char *end;
	unsigned long len;

	if (strncmp(name, "_ZZ", 3) || GELF_ST_TYPE(sym->st_info) != STT_OBJECT ||
	    sym->st_size != sizeof(uint64_t) || !strstr(name, "E8__handle"))
		return 0;
	len = strtoul(name + 3, &end, 10);
	p = end;
	if (len <= sizeof(prefix) - 1 || strlen(p) < len || strncmp(p, prefix, sizeof(prefix) - 1))
		return 0;
	p += sizeof(prefix) - 1;
	len -= sizeof(prefix) - 1;
	snprintf(kernel, sizeof(kernel), "%s%.*s",
		 p[0] == 'Z' && p[1] >= '0' && p[1] <= '9' ? "_" : "", (int)len, p);
	return c->fn(c->ctx, kernel, sym->st_value + c->bias);
}

int elf_stub_handles(const char *path, uint64_t map_start, uint64_t map_offset, elf_stub_fn fn,
		     void *ctx)
{
	struct stub_ctx c = {.fn = fn, .ctx = ctx};
	struct elf_file f;
	int err = elf_file_open(path, &f);

	if (err)
		return err;
	c.bias = map_start - offset_to_vaddr(f.elf, map_offset);
	err = for_each_symbol(f.elf, SHT_SYMTAB, true, match_stub_handle, &c);
	elf_file_close(&f);
	return err < 0 ? err : 0;
}
