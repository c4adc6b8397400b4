/* SPDX-License-Identifier: MIT */
/*
 * Where a USDT probe of gpuspy's own libraries is, read from the file's .note.stapsdt: what a
 * uprobe_multi link needs to attach it (file offsets of the site and its semaphore). libbpf's
 * USDT links are perf-event uprobes, whose detach holds the kernel's event_mutex through a
 * grace period, so that the probes of a recording detach one after the other.
 */
#ifndef GPUSPY_USDT_SITE_H
#define GPUSPY_USDT_SITE_H

#include <stdbool.h>
#include <stdint.h>

struct usdt_site {
	bool found;
	uint64_t off;  /* file offset of the probe's instruction */
	uint64_t sema; /* file offset of its semaphore, 0: none */
	char args[64]; /* the note's argument text ("8@%rdi 8@%rsi"); "" when longer */
};

/* The sites of probes provider:name[i] (n at most 4) in the ELF file `path`; those not found,
 * or whose addresses no loadable segment holds, have found false. 0, or -errno when the file
 * cannot be read. */
int usdt_sites_find(const char *path, const char *provider, const char *const *names,
		    struct usdt_site *sites, unsigned n);

#endif /* GPUSPY_USDT_SITE_H */
