// SPDX-License-Identifier: MIT
/*
 * Which libtorch the observer is in, and whether its layout is one the observer knows.
 *
 * The release is read from the library itself: the DT_SONAME of the object whose executable
 * segment holds at::addGlobalCallback (Debian's libtorch_cpu.so.1.13 carries the release in
 * it; a pip wheel's plain libtorch_cpu.so does not, and is refused). The soname alone could
 * be shared by a rebuild with other options, so the layout is checked too: the exported
 * RecordFunction::name() and ::isAsync() read fn_'s variant index and is_async_ at fixed
 * displacements, and their first bytes must be the instructions that do so with the offsets
 * of the table. Any difference refuses the library.
 *
 * Input shapes read RecordFunction::inputs_, pinned by the code of RecordFunction::num_inputs(),
 * and c10::IValue and c10::TensorImpl, which live in libc10: the undefined tensor's TensorImpl
 * and TensorImpl::sizes_custom() are looked up in the libtorch's own dependencies (dlopen of
 * the loaded object, RTLD_NOLOAD), must lie in libc10 of the same release, and
 * sizes_custom()'s code must read the table's offsets; else shapes are refused and operators
 * still recorded.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "torch_abi.h"

/* Bytes expected at a symbol's address + off. */
struct code_check {
	int sym; /* 0 name(), 1 isAsync() */
	size_t off;
	unsigned char len;
	unsigned char bytes[12];
};

/*
 * torch 1.13.1 (Debian's 1.13.1+dfsg), offsets from aten/src/ATen/record_function.h of that
 * release, confirmed by compiling its accessors against Debian's libtorch-dev headers and by
 * disassembling libtorch_cpu.so.1.13 (docs/TORCH_OBSERVER.md).
 */
static const struct code_check checks_1_13[] = {
    /* name(): mov 0xc0(%rdi),%eax (fn_.index_) */
    {0, 0x00, 6, {0x8b, 0x87, 0xc0, 0x00, 0x00, 0x00}},
    /* name(), std::string alternative: mov 0xa0(%rdi),%rax; ret (fn_'s storage) */
    {0, 0x20, 8, {0x48, 0x8b, 0x87, 0xa0, 0x00, 0x00, 0x00, 0xc3}},
    /* isAsync(): movzbl 0x108(%rdi),%eax; ret (is_async_) */
    {1, 0x00, 8, {0x0f, 0xb6, 0x87, 0x08, 0x01, 0x00, 0x00, 0xc3}},
};

/*
 * libc10.so.1.13's c10::TensorImpl::sizes_custom() const (c10/core/TensorImpl.cpp: the
 * python-dispatch test, then sizes_default(): the symbolic-shapes check, then
 * sizes_and_strides_.sizes_arrayref()), whose code reads every TensorImpl field the shapes use.
 */
static const struct code_check checks_c10_1_13[] = {
    /* movzbl 0xb7(%rdi),%eax: the byte of sizes_strides_policy_ */
    {0, 0x01, 7, {0x0f, 0xb6, 0x87, 0xb7, 0x00, 0x00, 0x00}},
    /* shr $3,%al; and $3,%eax; cmp $1,%al: its two bits, CustomSizes (2) and up */
    {0, 0x0b, 8, {0xc0, 0xe8, 0x03, 0x83, 0xe0, 0x03, 0x3c, 0x01}},
    /* mov 0xb8(%rdi),%rdx: key_set_ */
    {0, 0x15, 7, {0x48, 0x8b, 0x97, 0xb8, 0x00, 0x00, 0x00}},
    /* testb $0x10,0xb6(%rdi): has_symbolic_sizes_strides_ */
    {0, 0x48, 7, {0xf6, 0x87, 0xb6, 0x00, 0x00, 0x00, 0x10}},
    /* mov 0x48(%rdi),%rdx; cmp $5,%rdx: sizes_and_strides_.size_, inline up to 5 */
    {0, 0x51, 8, {0x48, 0x8b, 0x57, 0x48, 0x48, 0x83, 0xfa, 0x05}},
    /* lea 0x50(%rdi),%rax; pop %rbx; ret: the inline storage */
    {0, 0x5b, 6, {0x48, 0x8d, 0x47, 0x50, 0x5b, 0xc3}},
    /* mov 0x50(%rdi),%rax; pop %rbx; ret: the out-of-line pointer */
    {0, 0xb0, 6, {0x48, 0x8b, 0x47, 0x50, 0x5b, 0xc3}},
};

static const struct torch_abi known[] = {
    {
	.soname = "libtorch_cpu.so.1.13",
	.release = "1.13",
	.off_fn_index = 0xc0,
	.off_scope = 96,
	.off_seq_nr = 200,
	.off_fwd_tid = 248,
	.off_is_async = 264,
	.callback_size = 40,
	.callback_off_needs_inputs = 34,
	/* input shapes: record_function.h, c10/core/TensorImpl.h, impl/SizesAndStrides.h,
	 * ATen/core/ivalue.h and DispatchKeySet.h of 1.13.1, compiled (rf_layout.cpp) and
	 * pinned by checks_c10_1_13 */
	.off_needs_inputs = 97,
	.off_inputs = 208,
	.off_inputs_size = 216,
	.ivalue_size = 16,
	.off_ivalue_payload = 0,
	.off_ivalue_tag = 8,
	.tag_tensor = 1,
	.off_impl_sizes = 72,
	.sizes_inline_max = 5,
	.off_impl_key_set = 184,
	.nested_key_mask = 0x2000000,
	.off_impl_policy = 0xb7,
	.policy_shift = 3,
	.off_impl_symbolic = 0xb6,
	.symbolic_bit = 0x10,
	.c10_soname = "libc10.so.1.13",
    },
};
/* libtorch_cpu.so.1.13's at::RecordFunction::num_inputs() const (record_function.cpp:566): for
 * a name held as a string it returns inputs_.size(), which pins inputs_ (data, size). */
static const struct code_check checks_inputs_1_13[] = {
    /* mov 0xc0(%rdi),%eax: fn_.index_, as in name() */
    {0, 0x00, 6, {0x8b, 0x87, 0xc0, 0x00, 0x00, 0x00}},
    /* mov 0xd8(%rdi),%rax; ret: inputs_.size_ (its data at 0xd0) */
    {0, 0x38, 8, {0x48, 0x8b, 0x87, 0xd8, 0x00, 0x00, 0x00, 0xc3}},
};

#define NCHECKS(a) (sizeof(a) / sizeof((a)[0]))
static const struct {
	const struct code_check *checks, *c10_checks, *inputs_checks;
	size_t n, c10_n, inputs_n;
} known_checks[] = {{checks_1_13, checks_c10_1_13, checks_inputs_1_13, NCHECKS(checks_1_13),
		     NCHECKS(checks_c10_1_13), NCHECKS(checks_inputs_1_13)}};

struct search {
	const struct gpuspy_torch_syms *syms;
	int found;	     /* the object holding add_global_callback was seen */
	int all_in;	     /* every symbol is in one of its executable segments */
	char soname[128];    /* its DT_SONAME, "" if none */
	char path[256];	     /* its file, for messages */
	size_t room[4];	     /* readable bytes after each symbol in its segment */
	const void *addr[4]; /* the symbols, in gpuspy_torch_syms order */
};

/* Bytes from p to the end of the executable PT_LOAD segment holding it, 0 if none does. */
static size_t exec_room(const struct dl_phdr_info *info, const void *p)
{
	uintptr_t a = (uintptr_t)p;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && a >= lo &&
		    a < lo + ph->p_memsz)
			return lo + ph->p_memsz - a;
	}
	return 0;
}

/* Whether [p, p+n) lies inside one PT_LOAD segment of the object. */
static int mapped(const struct dl_phdr_info *info, uintptr_t p, size_t n)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && p >= lo && p + n <= lo + ph->p_memsz && p + n >= p)
			return 1;
	}
	return 0;
}

/* glibc relocates the d_ptr entries of a loaded object's dynamic section in place on x86-64;
 * an unrelocated one is an offset from the load bias. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

static void read_soname(const struct dl_phdr_info *info, struct search *s)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t strtab = 0;
	size_t strsz = 0, soname = (size_t)-1, n;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_STRTAB)
			strtab = dyn_addr(info, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRSZ)
			strsz = dyn->d_un.d_val;
		else if (dyn->d_tag == DT_SONAME)
			soname = dyn->d_un.d_val;
	}
	if (!strtab || soname >= strsz || !mapped(info, strtab, strsz))
		return;
	n = strnlen((const char *)strtab + soname, strsz - soname);
	if (n >= sizeof(s->soname) || soname + n >= strsz)
		return;
	memcpy(s->soname, (const char *)strtab + soname, n + 1);
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct search *s = arg;
	int i;

	(void)size;
	if (!exec_room(info, s->addr[0]))
		return 0;
	s->found = 1;
	snprintf(s->path, sizeof(s->path), "%s", info->dlpi_name ? info->dlpi_name : "?");
	s->all_in = 1;
	for (i = 0; i < 4; i++) {
		s->room[i] = exec_room(info, s->addr[i]);
		if (!s->room[i])
			s->all_in = 0;
	}
	read_soname(info, s);
	return 1;
}

static int code_matches(const struct search *s, const struct code_check *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int k = c[i].sym ? 3 : 2; /* rf_name, rf_is_async in gpuspy_torch_syms order */

		if (s->room[k] < c[i].off + c[i].len ||
		    memcmp((const unsigned char *)s->addr[k] + c[i].off, c[i].bytes, c[i].len))
			return 0;
	}
	return 1;
}

const struct torch_abi *torch_abi_find(const struct gpuspy_torch_syms *syms, char *why,
				       size_t why_len)
{
	struct search s = {.syms = syms};
	size_t i;

	s.addr[0] = syms->add_global_callback;
	s.addr[1] = syms->remove_callback;
	s.addr[2] = syms->rf_name;
	s.addr[3] = syms->rf_is_async;
	for (i = 0; i < 4; i++)
		if (!s.addr[i]) {
			snprintf(why, why_len, "libtorch entry point %zu not given", i);
			return NULL;
		}
	dl_iterate_phdr(visit, &s);
	if (!s.found) {
		snprintf(why, why_len, "at::addGlobalCallback is in no loaded library");
		return NULL;
	}
	if (!s.all_in) {
		snprintf(why, why_len, "libtorch entry points are not all in %s", s.path);
		return NULL;
	}
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(s.soname, known[i].soname))
			continue;
		if (!code_matches(&s, known_checks[i].checks, known_checks[i].n)) {
			snprintf(why, why_len,
				 "%s (%s) is not the torch %s build gpuspy knows: "
				 "RecordFunction's layout differs",
				 s.soname, s.path, known[i].release);
			return NULL;
		}
		return &known[i];
	}
	snprintf(why, why_len, "%s (%s) is not a libtorch the in-process observer knows (%s only)",
		 s.soname[0] ? s.soname : "a library without a soname", s.path, known[0].soname);
	return NULL;
}

/* The object holding two addresses: its soname, and the room after each (the first in an
 * executable segment, the second in any loaded one). */
struct sym_search {
	const void *code, *data;
	int found;
	size_t code_room, data_room;
	struct search names; /* soname and path only */
};

static size_t load_room(const struct dl_phdr_info *info, const void *p)
{
	uintptr_t a = (uintptr_t)p;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz)
			return lo + ph->p_memsz - a;
	}
	return 0;
}

static int visit_sym(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct sym_search *s = arg;

	(void)size;
	s->code_room = exec_room(info, s->code);
	if (!s->code_room)
		return 0;
	s->found = 1;
	s->data_room = load_room(info, s->data);
	snprintf(s->names.path, sizeof(s->names.path), "%s",
		 info->dlpi_name ? info->dlpi_name : "?");
	read_soname(info, &s->names);
	return 1;
}

/* Whether the code at s->code (found by visit_sym) starts with the checks' bytes. */
static int code_at(const struct sym_search *s, const struct code_check *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s->code_room < c[i].off + c[i].len ||
		    memcmp((const unsigned char *)s->code + c[i].off, c[i].bytes, c[i].len))
			return 0;
	return 1;
}

/* The address of sym among the libtorch's dependencies, NULL if none. */
static void *lookup(const char *libtorch, const char *sym)
{
	void *h = dlopen(libtorch, RTLD_NOLOAD | RTLD_LAZY);
	void *p;

	if (!h)
		return NULL;
	p = dlsym(h, sym); /* searches the object and what it depends on: its libc10 */
	dlclose(h);	   /* only the reference RTLD_NOLOAD took */
	return p;
}

int torch_abi_tensor(const struct torch_abi *abi, const void *add_global_callback,
		     struct torch_tensor_syms *out, char *why, size_t why_len)
{
	struct sym_search s = {0}, in = {0};
	size_t k = (size_t)(abi - known);
	Dl_info where;

	memset(out, 0, sizeof(*out));
	if (k >= sizeof(known) / sizeof(known[0]) || !dladdr(add_global_callback, &where) ||
	    !where.dli_fname) {
		snprintf(why, why_len, "the libtorch holding at::addGlobalCallback was not found");
		return -1;
	}
	/* inputs_: num_inputs(), in the libtorch itself */
	in.code = lookup(where.dli_fname, "_ZNK2at14RecordFunction10num_inputsEv");
	if (in.code)
		dl_iterate_phdr(visit_sym, &in);
	if (!in.found || strcmp(in.names.soname, abi->soname) ||
	    !code_at(&in, known_checks[k].inputs_checks, known_checks[k].inputs_n)) {
		snprintf(why, why_len,
			 "%s is not the torch %s build gpuspy knows: "
			 "RecordFunction's inputs differ",
			 where.dli_fname, abi->release);
		return -1;
	}
	s.code = lookup(where.dli_fname, "_ZNK3c1010TensorImpl12sizes_customEv");
	s.data = lookup(where.dli_fname, "_ZN3c1019UndefinedTensorImpl10_singletonE");
	if (!s.code || !s.data) {
		snprintf(why, why_len, "c10::TensorImpl's symbols are not in %s's libraries",
			 where.dli_fname);
		return -1;
	}
	dl_iterate_phdr(visit_sym, &s);
	if (!s.found || strcmp(s.names.soname, abi->c10_soname)) {
		snprintf(why, why_len, "c10::TensorImpl is in %s (%s), not %s",
			 s.names.soname[0] ? s.names.soname : "a library without a soname",
			 s.found ? s.names.path : "?", abi->c10_soname);
		return -1;
	}
	if (s.data_room < abi->off_impl_key_set + 8) {
		snprintf(why, why_len, "the undefined tensor is not inside %s", s.names.path);
		return -1;
	}
	if (!code_at(&s, known_checks[k].c10_checks, known_checks[k].c10_n)) {
		snprintf(why, why_len,
			 "%s (%s) is not the torch %s build gpuspy knows: "
			 "TensorImpl's layout differs",
			 s.names.soname, s.names.path, abi->release);
		return -1;
	}
	out->undefined_impl = s.data;
	return 0;
}
