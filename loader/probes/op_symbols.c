// SPDX-License-Identifier: MIT
/*
 * Naming an at::_ops struct the way torch.profiler does. libtorch's generated struct for the
 * overload add.Tensor is add_Tensor, and for the in-place add_.Tensor it is add__Tensor: the
 * operator/overload split cannot be read back from the struct name alone (is relu_ an
 * overload-less in-place op, or relu with an empty overload?). The library's .rodata holds
 * every schema string it registers ("add.Tensor(Tensor self, ...) -> Tensor", sometimes with
 * "aten::" in front), so the split is taken from there: struct name = name + "_" + overload
 * (or name alone) -> "aten::" + name.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/array_grow.h"
#include "loader/probes/op_symbols.h"
#include "loader/proc/elf_symbols.h"

#define OPS_PREFIX  "_ZN2at4_ops"
#define CALL_SUFFIX "4callE"
#define ATEN_PREFIX "aten::"

/* A piece of a string that lives in the ELF file's mapping. */
struct span {
	const char *s;
	uint32_t len;
	uint32_t base_len; /* schema keys: the length of the operator name in it */
};

struct op_schemas {
	struct span *keys; /* "add_Tensor", "relu_", sorted */
	size_t nkeys, keys_cap;
	struct span *bases; /* "add", "relu_": operator names alone, sorted */
	size_t nbases, bases_cap;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	uint32_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static const struct span *find_span(const struct span *v, size_t n, const char *s, uint32_t len)
{
	struct span key = {.s = s, .len = len};

	return n ? bsearch(&key, v, n, sizeof(*v), cmp_span) : NULL;
}

static uint32_t ident_len(const char *s, const char *end, bool first_digit_ok)
{
	const char *p = s;

	for (; p < end; p++) {
		char c = *p;

		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      ((first_digit_ok || p > s) && c >= '0' && c <= '9')))
			break;
	}
	return (uint32_t)(p - s);
}

/* "[aten::]name[.overload](... ) -> ..." at the start of a string ending at `end` (its NUL). */
static int add_schema(struct op_schemas *sc, const char *s, const char *end)
{
	struct span *k, *b;
	uint32_t name, ovl = 0;
	const char *p;

	if ((size_t)(end - s) > strlen(ATEN_PREFIX) && !memcmp(s, ATEN_PREFIX, strlen(ATEN_PREFIX)))
		s += strlen(ATEN_PREFIX);
	name = ident_len(s, end, false);
	p = s + name;
	if (!name || p >= end)
		return 0;
	if (*p == '.') {
		ovl = ident_len(p + 1, end, true);
		p += 1 + ovl;
		if (!ovl || p >= end)
			return 0;
	}
	/* a schema, not a message that happens to start with a word and a parenthesis */
	if (*p != '(' || !memmem(p, (size_t)(end - p), ") -> ", 5))
		return 0;
	k = array_grow((void **)&sc->keys, &sc->nkeys, &sc->keys_cap, sizeof(*k));
	b = k ? array_grow((void **)&sc->bases, &sc->nbases, &sc->bases_cap, sizeof(*b)) : NULL;
	if (!b)
		return -ENOMEM;
	/* the key is name + '_' + overload: contiguous in memory except for the dot, so it is
	 * compared piecewise through base_len */
	*k = (struct span){.s = s, .len = ovl ? name + 1 + ovl : name, .base_len = name};
	*b = (struct span){.s = s, .len = name, .base_len = name};
	return 0;
}

static Elf_Scn *section_named(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* Compares a key "name.ovl" as it sits in .rodata with "name_ovl". */
static int cmp_key(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	uint32_t n = x->len < y->len ? x->len : y->len;

	for (uint32_t i = 0; i < n; i++) {
		char cx = i == x->base_len && x->len > x->base_len ? '_' : x->s[i];
		char cy = i == y->base_len && y->len > y->base_len ? '_' : y->s[i];

		if (cx != cy)
			return (unsigned char)cx < (unsigned char)cy ? -1 : 1;
	}
	return (x->len > y->len) - (x->len < y->len);
}

static int read_schemas(Elf *elf, struct op_schemas *sc)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section_named(elf, ".rodata", &sh);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	const char *p, *end;

	if (!data || !data->d_buf)
		return 0; /* names fall back to the struct names */
	p = data->d_buf;
	end = p + data->d_size;
	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));

		if (!nul)
			break;
		if (nul > p && add_schema(sc, p, nul))
			return -ENOMEM;
		p = nul + 1;
	}
	qsort(sc->keys, sc->nkeys, sizeof(*sc->keys), cmp_key);
	qsort(sc->bases, sc->nbases, sizeof(*sc->bases), cmp_span);
	return 0;
}

static const struct span *find_key(const struct op_schemas *sc, const char *s, uint32_t len)
{
	/* a probe key never has a dot: base_len == len makes cmp_key compare it as it is */
	struct span key = {.s = s, .len = len, .base_len = len};

	return sc->nkeys ? bsearch(&key, sc->keys, sc->nkeys, sizeof(key), cmp_key) : NULL;
}

/*
 * The operator name of struct `op`. Without a schema string for it (a library that registers
 * its schemas some other way, or a struct whose schema is generated at run time), the longest
 * operator name known from the other schemas that `op` starts with, followed by "_" (add_out
 * -> add), is taken; failing that, the struct name itself, which is right for every overload-
 * less operator.
 */
static void name_op(const struct op_schemas *sc, const char *op, uint32_t len, char *buf,
		    size_t buflen)
{
	const struct span *k = find_key(sc, op, len);
	uint32_t base = len;

	if (k) {
		base = k->base_len;
	} else if (!find_span(sc->bases, sc->nbases, op, len)) {
		/* an overload is never empty: "transpose_" is an operator of its own */
		for (uint32_t i = len - 1; i-- > 1;)
			if (op[i] == '_' && find_span(sc->bases, sc->nbases, op, i)) {
				base = i;
				break;
			}
	}
	snprintf(buf, buflen, ATEN_PREFIX "%.*s", (int)base, op);
}

/* The struct name inside _ZN2at4_ops<len><name>4callE...; 0 when `sym` is not one. */
static uint32_t op_struct(const char *sym, const char **name)
{
	const char *p = sym + strlen(OPS_PREFIX);
	unsigned long len;
	char *end;

	if (strncmp(sym, OPS_PREFIX, strlen(OPS_PREFIX)) || *p < '1' || *p > '9')
		return 0;
	len = strtoul(p, &end, 10);
	if (len == 0 || len > 4096 || strnlen(end, len) < len ||
	    strncmp(end + len, CALL_SUFFIX, strlen(CALL_SUFFIX)))
		return 0;
	*name = end;
	return (uint32_t)len;
}

struct op_list {
	struct op_symbol *v;
	size_t n, cap;
};

static int add_op(struct op_list *l, const struct op_schemas *sc, Elf *elf, const GElf_Sym *sym,
		  const char *op, uint32_t len)
{
	uint64_t off = elf_vaddr_to_offset(elf, sym->st_value);
	struct op_symbol *o;
	char name[512];

	if (!off)
		return 0;
	name_op(sc, op, len, name, sizeof(name));
	o = array_grow((void **)&l->v, &l->n, &l->cap, sizeof(*o));
	if (!o || !(o->name = strdup(name)))
		return -ENOMEM;
	o->offset = off;
	return 0;
}

/* Calls add_op for each at::_ops::<op>::call defined in .dynsym; with no schemas at hand
 * (sc NULL) only says whether there is one. */
static int scan_dynsym(Elf *elf, const struct op_schemas *sc, struct op_list *l, bool *any)
{
	GElf_Shdr sh;
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Sym sym;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			break;
	if (!scn || !(data = elf_getdata(scn, NULL)) || !sh.sh_entsize)
		return 0;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		const char *name, *op;
		uint32_t len;
		int err;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !(len = op_struct(name, &op)))
			continue;
		*any = true;
		if (!sc)
			return 0;
		err = add_op(l, sc, elf, &sym, op, len);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_offset(const void *a, const void *b)
{
	const struct op_symbol *x = a, *y = b;

	return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Identical code folding could give two structs one address: a link takes each offset once. */
static void dedupe(struct op_list *l)
{
	size_t w = 0;

	qsort(l->v, l->n, sizeof(*l->v), cmp_offset);
	for (size_t r = 0; r < l->n; r++) {
		if (w && l->v[w - 1].offset == l->v[r].offset) {
			free(l->v[r].name);
			continue;
		}
		l->v[w++] = l->v[r];
	}
	l->n = w;
}

static int read_ops(Elf *elf, struct op_list *l)
{
	struct op_schemas sc = {0};
	bool any = false;
	int err = scan_dynsym(elf, NULL, l, &any);

	/* most mapped libraries have no operators: .rodata is only read for those that do */
	if (err || !any)
		return err;
	err = read_schemas(elf, &sc);
	err = err ?: scan_dynsym(elf, &sc, l, &any);
	free(sc.keys);
	free(sc.bases);
	if (!err)
		dedupe(l);
	return err;
}

int op_symbols_read(const char *path, struct op_symbol **out, size_t *n)
{
	struct op_list l = {0};
	Elf *elf = NULL;
	int fd, err;

	*out = NULL;
	*n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) ||
	    elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	err = read_ops(elf, &l);
	if (err) {
		op_symbols_free(l.v, l.n);
		goto out;
	}
	*out = l.v;
	*n = l.n;
	err = (int)l.n;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

void op_symbols_free(struct op_symbol *syms, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(syms[i].name);
	free(syms);
}
