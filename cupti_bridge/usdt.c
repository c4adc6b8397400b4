// SPDX-License-Identifier: MIT
/*
 * The bridge's two USDT probes, with semaphores. The kernel increments a probe's semaphore in
 * every process that maps this library while a uprobe is attached to the probe (libbpf's
 * bpf_program__attach_usdt passes the semaphore as the uprobe's ref_ctr_offset) and
 * decrements it on detach, so the semaphores are how gpuspy talks to the bridge without any
 * other channel:
 *   gpuspy:records(batch, len)   attached = a recorder wants GPU activity (the gate)
 *   gpuspy:flushed(generation)   attached = deliver everything now, then fire this once
 *   gpuspy:kernels_paused()      attached = no kernel records for now (a live view's
 *                                --gpu-sample duty cycle, between its windows); never fired
 *   gpuspy:call_records()        attached = a recorder wants the records made per CUDA call
 *                                (API, synchronisation, overhead, copies, memsets) and NVTX
 *                                ranges; without it only kernels and devices are recorded, all
 *                                that the live views (top, serve) show. Never fired
 * Each probe has exactly one call site (these noinline functions): with several sites the
 * kernel would count the semaphore once per site, and a recorder would pay for each.
 */
#define _SDT_HAS_SEMAPHORES 1
/*
 * sys/sdt.h names a probe's semaphore <provider>_<probe>_semaphore; the flush probe's is
 * spelled gpuspy_flush_semaphore in gpuspy's documents, so the name sys/sdt.h pastes
 * together is redirected to it (the note only records the address).
 */
#define gpuspy_flushed_semaphore gpuspy_flush_semaphore
#include <sys/sdt.h>

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge.h"

#define NOTE_MAX      65536 /* bytes of a note section read */
#define SITE_WITHIN   64    /* bytes from usdt_fire_records' start the records site must be in */
#define X86_NOP	      0x90  /* what sys/sdt.h puts at a probe site */
#define UNARMED_POLLS 5	    /* see usdt_recorder_ready() */

/* Exported (.dynsym): gpuspy recognises a bridge by its records semaphore's symbol. */
__extension__ BRIDGE_EXPORT unsigned short gpuspy_records_semaphore
    __attribute__((unused, section(".probes")));
__extension__ BRIDGE_EXPORT unsigned short gpuspy_flush_semaphore
    __attribute__((unused, section(".probes")));
__extension__ BRIDGE_EXPORT unsigned short gpuspy_kernels_paused_semaphore
    __attribute__((unused, section(".probes")));
__extension__ BRIDGE_EXPORT unsigned short gpuspy_call_records_semaphore
    __attribute__((unused, section(".probes")));

int usdt_recorder_attached(void)
{
	return __atomic_load_n(&gpuspy_records_semaphore, __ATOMIC_RELAXED) != 0;
}

/* The records probe's site, once found: its address from this library's own .note.stapsdt
 * (not loaded into memory, so read from the file), NULL when it cannot be told. */
static const volatile unsigned char *g_records_site;
static pthread_once_t g_site_once = PTHREAD_ONCE_INIT;

/* The gpuspy:records note's pc in one SHT_NOTE section's bytes, 0 if none. */
static uint64_t records_pc(const unsigned char *notes, size_t len)
{
	size_t at = 0;

	while (at + sizeof(Elf64_Nhdr) <= len) {
		Elf64_Nhdr n;
		size_t name_at, desc_at, next;

		memcpy(&n, notes + at, sizeof(n));
		name_at = at + sizeof(n);
		desc_at = name_at + ((n.n_namesz + 3) & ~3u);
		next = desc_at + ((n.n_descsz + 3) & ~3u);
		if (next > len || next <= at)
			return 0;
		/* desc: pc, base, semaphore (8 bytes each), then provider, name and args */
		if (n.n_type == 3 && n.n_namesz == 8 && !memcmp(notes + name_at, "stapsdt", 8) &&
		    n.n_descsz > 24 + sizeof("gpuspy\0records") &&
		    !memcmp(notes + desc_at + 24, "gpuspy\0records", sizeof("gpuspy\0records"))) {
			uint64_t pc;

			memcpy(&pc, notes + desc_at, sizeof(pc));
			return pc;
		}
		at = next;
	}
	return 0;
}

/* The pc of gpuspy:records in the ELF file open on fd, 0 if not found. */
static uint64_t file_records_pc(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	uint64_t pc = 0;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(sh))
		return 0;
	for (unsigned i = 0; i < eh.e_shnum && !pc; i++) {
		unsigned char *notes;

		if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + (uint64_t)i * sizeof(sh))) !=
			(ssize_t)sizeof(sh) ||
		    sh.sh_type != SHT_NOTE || sh.sh_size > NOTE_MAX)
			continue;
		notes = malloc(sh.sh_size);
		if (notes &&
		    pread(fd, notes, sh.sh_size, (off_t)sh.sh_offset) == (ssize_t)sh.sh_size)
			pc = records_pc(notes, sh.sh_size);
		free(notes);
	}
	return pc;
}

static void find_records_site(void)
{
	const unsigned char *fn = (const unsigned char *)(uintptr_t)usdt_fire_records;
	const unsigned char *site;
	Dl_info info;
	uint64_t pc;
	int fd;

	if (!dladdr((void *)(uintptr_t)usdt_fire_records, &info) || !info.dli_fname)
		return;
	fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	pc = file_records_pc(fd);
	close(fd);
	/* a shared object linked at 0: its load base plus the note's address; trusted only
	 * where it falls inside the probe's own function */
	site = (const unsigned char *)info.dli_fbase + pc;
	if (pc && site >= fn && site < fn + SITE_WITHIN)
		g_records_site = site;
}

int usdt_records_armed(void)
{
	pthread_once(&g_site_once, find_records_site);
	/* the kernel raises the semaphore a moment before it writes the breakpoint: until
	 * the site's nop is replaced, a firing would reach nobody */
	return !g_records_site || *g_records_site != X86_NOP;
}

int usdt_recorder_ready(void)
{
	static int unarmed; /* polls that saw the semaphore up and the site still a nop */

	if (!usdt_recorder_attached()) {
		__atomic_store_n(&unarmed, 0, __ATOMIC_RELAXED);
		return 0;
	}
	if (usdt_records_armed())
		return 1;
	/* raised without a breakpoint after a while: by hand (a test harness writes the
	 * semaphore), or a kernel that patches the site otherwise; go on then */
	return __atomic_add_fetch(&unarmed, 1, __ATOMIC_RELAXED) > UNARMED_POLLS;
}

int usdt_flush_requested(void)
{
	return __atomic_load_n(&gpuspy_flush_semaphore, __ATOMIC_RELAXED) != 0;
}

int usdt_kernels_paused(void)
{
	return __atomic_load_n(&gpuspy_kernels_paused_semaphore, __ATOMIC_RELAXED) != 0;
}

int usdt_call_records(void)
{
	return __atomic_load_n(&gpuspy_call_records_semaphore, __ATOMIC_RELAXED) != 0;
}

__attribute__((noinline)) void usdt_fire_records(const void *batch, size_t len)
{
	DTRACE_PROBE2(gpuspy, records, batch, len);
}

__attribute__((noinline)) void usdt_fire_flushed(unsigned long generation)
{
	DTRACE_PROBE1(gpuspy, flushed, generation);
}

/* Only its semaphore is used: the site exists because a USDT probe (and so the note gpuspy
 * attaches by) needs one. `used` keeps it although nothing calls it. */
__attribute__((noinline, used)) void usdt_kernels_paused_site(void)
{
	DTRACE_PROBE(gpuspy, kernels_paused);
}

/* The same: only its semaphore is used. */
__attribute__((noinline, used)) void usdt_call_records_site(void)
{
	DTRACE_PROBE(gpuspy, call_records);
}
