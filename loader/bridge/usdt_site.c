// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>
#include "loader/bridge/usdt_site.h"
#include "loader/proc/elf_symbols.h"

/* The note section, and the address of .stapsdt.base (0: none), which a prelinked file's
 * note addresses are relative to. */
static Elf_Scn *note_section(Elf *elf, uint64_t *base)
{
	Elf_Scn *scn = NULL, *notes = NULL;
	size_t shstr;
	GElf_Shdr sh;

	*base = 0;
	if (elf_getshdrstrndx(elf, &shstr))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh)) {
			const char *name = elf_strptr(elf, shstr, sh.sh_name);

			if (name && !strcmp(name, ".stapsdt.base"))
				*base = sh.sh_addr;
			else if (name && sh.sh_type == SHT_NOTE && !strcmp(name, ".note.stapsdt"))
				notes = scn;
		}
	return notes;
}

/* One SystemTap SDT v3 note: location, base and semaphore addresses, then provider, name and
 * argument strings. */
static void take_note(Elf *elf, uint64_t base, const char *desc, size_t len, const char *provider,
		      const char *const *names, struct usdt_site *sites, unsigned n)
{
	uint64_t addr[3];
	const char *end = desc + len, *prov = desc + sizeof(addr), *probe, *args;

	if (len <= sizeof(addr) || end[-1] != '\0')
		return;
	memcpy(addr, desc, sizeof(addr));
	probe = prov + strlen(prov) + 1;
	args = probe < end ? probe + strlen(probe) + 1 : end;
	if (args >= end || strcmp(prov, provider))
		return;
	if (base && addr[1])
		addr[0] += base - addr[1]; /* prelinked */
	for (unsigned i = 0; i < n; i++) {
		struct usdt_site *s = &sites[i];

		if (strcmp(probe, names[i]) || s->found)
			continue;
		s->off = elf_vaddr_to_offset(elf, addr[0]);
		s->sema = addr[2] ? elf_vaddr_to_offset(elf, addr[2]) : 0;
		s->found = s->off && (!addr[2] || s->sema);
		if (strlen(args) < sizeof(s->args))
			strcpy(s->args, args);
	}
}

static void find_in(Elf *elf, const char *provider, const char *const *names,
		    struct usdt_site *sites, unsigned n)
{
	uint64_t base;
	Elf_Scn *notes = note_section(elf, &base);
	Elf_Data *d = notes ? elf_getdata(notes, NULL) : NULL;
	size_t at = 0, name_at, desc_at;
	GElf_Nhdr nh;

	while (d && (at = gelf_getnote(d, at, &nh, &name_at, &desc_at)) > 0)
		if (nh.n_type == 3 && nh.n_namesz == 8 &&
		    !memcmp((const char *)d->d_buf + name_at, "stapsdt", 8))
			take_note(elf, base, (const char *)d->d_buf + desc_at, nh.n_descsz,
				  provider, names, sites, n);
}

int usdt_sites_find(const char *path, const char *provider, const char *const *names,
		    struct usdt_site *sites, unsigned n)
{
	int fd, err = 0;
	Elf *elf;

	memset(sites, 0, n * sizeof(*sites));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		find_in(elf, provider, names, sites, n);
	else
		err = -ENOEXEC;
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}
