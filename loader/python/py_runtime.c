// SPDX-License-Identifier: MIT
/* Finding a process's CPython runtime and its version; py_check.c checks its layout. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "lib/array_grow.h"
#include "lib/key_index.h"
#include "loader/proc/proc_maps.h"
#include "loader/python/py_runtime.h"

enum py_sym {
	SYM_RUNTIME,	/* _PyRuntime: 3.7+ */
	SYM_NONE,	/* _Py_NoneStruct */
	SYM_CODE_TYPE,	/* PyCode_Type */
	SYM_STR_TYPE,	/* PyUnicode_Type */
	SYM_VERSION,	/* Py_Version: 3.11+ */
	SYM_GETVERSION, /* Py_GetVersion: every version, 2.x included */
	SYM_N,
};

static const char *const sym_names[SYM_N] = {
    [SYM_RUNTIME] = "_PyRuntime",    [SYM_NONE] = "_Py_NoneStruct",
    [SYM_CODE_TYPE] = "PyCode_Type", [SYM_STR_TYPE] = "PyUnicode_Type",
    [SYM_VERSION] = "Py_Version",    [SYM_GETVERSION] = "Py_GetVersion",
};

struct py_elf {
	uint64_t dev, ino;
	bool exec_type; /* ET_EXEC: loaded at its link address */
	uint64_t base;	/* p_vaddr of the loadable segment at file offset 0 */
	uint64_t sym[SYM_N];
	char version[16]; /* "3.X.Y" from the file's strings, when found */
};

struct py_elf_cache {
	struct py_elf *v;
	size_t n, cap;
	struct key_index ix; /* (dev, ino) -> v[] */
};

struct py_elf_cache *py_elf_cache_new(void)
{
	return calloc(1, sizeof(struct py_elf_cache));
}

void py_elf_cache_free(struct py_elf_cache *c)
{
	if (!c)
		return;
	free(c->v);
	key_index_free(&c->ix);
	free(c);
}

int py_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	return NULL;
}

/* Values of the symbols of sym_names[] one symbol table defines. */
static void read_symbols(Elf *elf, Elf64_Word type, struct py_elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, type, &sh);
	Elf_Data *data;
	GElf_Sym sym;

	if (!scn || !(data = elf_getdata(scn, NULL)) || !sh.sh_entsize)
		return;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		/* every name sought starts with '_' or 'P': skip the rest cheaply (libtorch) */
		if (!name || (name[0] != '_' && name[0] != 'P'))
			continue;
		for (int k = 0; k < SYM_N; k++)
			if (!e->sym[k] && !strcmp(name, sym_names[k]))
				e->sym[k] = sym.st_value;
	}
}

static bool load_base(Elf *elf, uint64_t *base)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*base = ph.p_vaddr;
			return true;
		}
	return false;
}

/* PY_VERSION ("3.8.18") as a whole string, or the tail of one (the linker merges it into a
 * longer string ending the same way, e.g. the build directory "Python-3.8.18"). */
static bool version_at(const char *s, const char *end, char *out, size_t len)
{
	const char *p = s;

	if (p + 5 > end || (*p != '2' && *p != '3') || p[1] != '.')
		return false;
	p += 2;
	if (!isdigit((unsigned char)*p))
		return false;
	while (p < end && isdigit((unsigned char)*p))
		p++;
	if (p >= end || *p != '.' || !isdigit((unsigned char)p[1]))
		return false;
	for (p++; p < end && isdigit((unsigned char)*p); p++)
		;
	if (p >= end || *p != '\0' || (size_t)(p - s) >= len)
		return false;
	snprintf(out, len, "%.*s", (int)(p - s), s);
	return true;
}

/* The first PY_VERSION-looking string of .rodata, for interpreters without Py_Version. */
static void find_version_string(Elf *elf, struct py_elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name, *p, *end;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".rodata") || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		end = (const char *)d->d_buf + d->d_size;
		for (p = d->d_buf; p < end; p++)
			if ((p == d->d_buf || p[-1] == '\0' || p[-1] == '-' || p[-1] == '/') &&
			    version_at(p, end, e->version, sizeof(e->version)))
				return;
	}
}

static void read_elf(const char *path, struct py_elf *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	GElf_Ehdr eh;
	Elf *elf;

	if (fd < 0)
		return;
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		close(fd);
		return;
	}
	if (elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) && load_base(elf, &e->base)) {
		e->exec_type = eh.e_type == ET_EXEC;
		read_symbols(elf, SHT_DYNSYM, e);
		if (e->sym[SYM_GETVERSION] && !e->sym[SYM_VERSION])
			find_version_string(elf, e);
	}
	elf_end(elf);
	close(fd);
}

static const struct py_elf *elf_info(struct py_elf_cache *c, pid_t pid,
				     const struct proc_mapping *m)
{
	char host[PATH_MAX + 32];
	struct py_elf *e;
	size_t i;

	if (key_index_find(&c->ix, m->dev, m->ino, &i))
		return &c->v[i];
	e = array_grow((void **)&c->v, &c->n, &c->cap, sizeof(*e));
	if (!e || key_index_put(&c->ix, m->dev, m->ino, c->n - 1))
		return NULL;
	e->dev = m->dev;
	e->ino = m->ino;
	proc_maps_host_path(pid, m->path, host, sizeof(host));
	read_elf(host, e);
	return e;
}

struct find_ctx {
	struct py_elf_cache *cache;
	pid_t pid;
	struct py_elf found;
	struct proc_mapping map; /* the mapping at file offset 0 of what was found */
	bool have, oom;
};

static bool is_libpython(const char *path)
{
	const char *base = strrchr(path, '/');

	return strstr(base ? base + 1 : path, "libpython") != NULL;
}

/* Keeps the object defining _PyRuntime (or, for 2.x-3.6, Py_GetVersion); libpython wins over an
 * executable that also defines them (a static python that loaded a libpython anyway). */
static int consider(void *ctx, const struct proc_mapping *m)
{
	struct find_ctx *c = ctx;
	const struct py_elf *e;

	if (m->offset != 0)
		return 0;
	e = elf_info(c->cache, c->pid, m);
	if (!e) {
		c->oom = true;
		return 1;
	}
	if (!e->sym[SYM_RUNTIME] && !e->sym[SYM_GETVERSION])
		return 0;
	if (c->have && (e->dev != c->found.dev || e->ino != c->found.ino) &&
	    (is_libpython(c->map.path) || !is_libpython(m->path)))
		return 0;
	if (c->have && e->dev == c->found.dev && e->ino == c->found.ino)
		return 0; /* the same file mapped again: keep the first (lowest) mapping */
	c->found = *e;
	c->map = *m;
	c->have = true;
	return 0;
}

/* "3.X" from "python3.X" / "libpython3.Xm.so": the minor, and the ABI flags after it. */
static bool version_from_path(const char *path, unsigned *major, unsigned *minor, char *flags,
			      size_t len)
{
	const char *base = strrchr(path, '/'), *p;
	char *end;

	base = base ? base + 1 : path;
	p = strstr(base, "python");
	if (!p || !isdigit((unsigned char)p[6]) || p[7] != '.')
		return false;
	*major = (unsigned)(p[6] - '0');
	*minor = (unsigned)strtoul(p + 8, &end, 10);
	if (end == p + 8)
		return false;
	snprintf(flags, len, "%.*s", (int)strcspn(end, ".-_"), end);
	return true;
}

static uint32_t version_hex_of(const char *version)
{
	unsigned major = 0, minor = 0, micro = 0;

	if (sscanf(version, "%u.%u.%u", &major, &minor, &micro) < 2)
		return 0;
	return major << 24 | minor << 16 | micro << 8 | 0xf0;
}

static void version_from_hex(struct py_runtime *rt)
{
	uint32_t v = rt->version_hex;
	static const char levels[] = {[0xa] = 'a', [0xb] = 'b', [0xc] = 'c'};
	unsigned level = v >> 4 & 15;

	if (level == 0xf || level < 0xa)
		snprintf(rt->version, sizeof(rt->version), "%u.%u.%u", v >> 24, v >> 16 & 255,
			 v >> 8 & 255);
	else
		snprintf(rt->version, sizeof(rt->version), "%u.%u.%u%s%c%u", v >> 24, v >> 16 & 255,
			 v >> 8 & 255, level == 0xc ? "r" : "", levels[level], v & 15);
}

static void refuse(struct py_runtime *rt, const char *fmt, const char *arg)
{
	rt->state = PY_RUNTIME_REFUSED;
	snprintf(rt->message, sizeof(rt->message), fmt, arg);
}

/* The version: Py_Version where it exists (3.11+), else the file's name and strings. */
static int identify(pid_t pid, const struct find_ctx *c, uint64_t bias, struct py_runtime *rt)
{
	unsigned major = 0, minor = 0;
	char flags[8] = "";
	uint64_t hex;
	int err;

	if (c->found.sym[SYM_VERSION]) {
		err = py_mem_read(pid, bias + c->found.sym[SYM_VERSION], &hex, sizeof(hex));
		if (err)
			return err;
		rt->version_hex = (uint32_t)hex;
		version_from_hex(rt);
	} else if (c->found.version[0]) {
		snprintf(rt->version, sizeof(rt->version), "%s", c->found.version);
		rt->version_hex = version_hex_of(rt->version);
	}
	if (version_from_path(c->map.path, &major, &minor, flags, sizeof(flags))) {
		if (!rt->version_hex) {
			snprintf(rt->version, sizeof(rt->version), "%u.%u", major, minor);
			rt->version_hex = major << 24 | minor << 16;
		}
		/* "m" (pymalloc, 3.7 and older) changes nothing the walker reads */
		if (strchr(flags, 'd'))
			refuse(rt, "a debug build (%s): its objects have another layout", flags);
		else if (strchr(flags, 't'))
			refuse(rt, "a free-threaded build (%s) is not supported", flags);
	}
	if (!rt->version_hex)
		refuse(rt, "%s", "cannot tell its version");
	return 0;
}

/* The bytes of a frame that hold every field read, so one read per frame gets them all and
 * stays clear of the end of a small frame's memory. */
static uint32_t frame_read_size(const struct py_layout *l)
{
	int end = l->fr_back + 8;

	if (l->fr_code + 8 > end)
		end = l->fr_code + 8;
	if (l->fr_instr + (l->instr_is_ptr ? 8 : 4) > end)
		end = l->fr_instr + (l->instr_is_ptr ? 8 : 4);
	if (l->fr_owner + 1 > end)
		end = l->fr_owner + 1;
	return (uint32_t)(end + 7) / 8 * 8;
}

static void fill_offsets(struct py_runtime *rt, uint64_t bias, const struct py_elf *e)
{
	const struct py_layout *l = rt->layout;
	struct gs_py_offsets *o = &rt->off;

	memset(o, 0, sizeof(*o));
	o->runtime = bias + e->sym[SYM_RUNTIME];
	o->none = e->sym[SYM_NONE] ? bias + e->sym[SYM_NONE] : 0;
	o->minor = l->minor;
	o->tsd_key = (uint32_t)l->rt_autotss + 4;
	o->tsd_block = PY_GLIBC_TSD_BLOCK;
	o->ts_frame = l->ts_frame;
	o->ts_cframe = l->ts_cframe;
	o->cframe_cur = l->cframe_current;
	o->ts_thread_id = l->ts_thread_id;
	o->fr_back = l->fr_back;
	o->fr_code = l->fr_code;
	o->fr_instr = l->fr_instr;
	o->fr_owner = l->fr_owner;
	o->instr_is_ptr = l->instr_is_ptr;
	o->lasti_bytes = l->lasti_bytes;
	o->co_code_adaptive = l->instr_is_ptr ? (uint32_t)l->code_basicsize : 0;
	o->co_filename = (uint32_t)l->co_filename;
	o->fr_size = frame_read_size(l);
	rt->code_type = bias + e->sym[SYM_CODE_TYPE];
	rt->unicode_type = bias + e->sym[SYM_STR_TYPE];
}

static int examine(pid_t pid, const struct find_ctx *c, struct py_runtime *rt)
{
	const struct py_elf *e = &c->found;
	uint64_t bias = e->exec_type ? 0 : c->map.start - e->base;
	int err;

	snprintf(rt->path, sizeof(rt->path), "%s", c->map.path);
	err = identify(pid, c, bias, rt);
	if (err || rt->state == PY_RUNTIME_REFUSED)
		return err;
	rt->layout = py_layout_find(rt->version_hex >> 16 & 255);
	if (rt->version_hex >> 24 != 3 || !rt->layout) {
		refuse(rt, "python %s is not supported (gpuspy reads 3.8 to 3.13)", rt->version);
		return 0;
	}
	if (!e->sym[SYM_RUNTIME] || !e->sym[SYM_CODE_TYPE] || !e->sym[SYM_STR_TYPE] ||
	    !e->sym[SYM_NONE]) {
		refuse(rt, "%s", "its runtime symbols are not exported");
		return 0;
	}
	fill_offsets(rt, bias, e);
	rt->state = PY_RUNTIME_FOUND;
	return 0;
}

int py_runtime_probe(struct py_elf_cache *cache, pid_t pid, struct py_runtime *rt)
{
	struct find_ctx c = {.cache = cache, .pid = pid};
	int err;

	memset(rt, 0, sizeof(*rt));
	err = proc_maps_for_each(pid, consider, &c);
	if (err < 0)
		return err;
	if (c.oom)
		return -ENOMEM;
	if (!c.have) {
		rt->state = PY_RUNTIME_NONE;
		return 0;
	}
	return examine(pid, &c, rt);
}
