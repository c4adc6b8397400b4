/* SPDX-License-Identifier: MIT */
/*
 * Interned strings of one Perfetto packet sequence: each distinct string gets a small id the
 * first time it is written (with the string, in the packet's InternedData) and only the id after.
 * The table is cleared when it grows past a bound, and the writer then tells readers that the
 * sequence's incremental state was cleared: memory stays bounded whatever the trace holds.
 */
#ifndef GPUSPY_PF_INTERN_H
#define GPUSPY_PF_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pf_intern_slot;

struct pf_intern {
	struct pf_intern_slot *slots;
	size_t cap, count;
	uint64_t next_iid;
};

#define PF_INTERN_MAX 16384 /* strings kept before a clear: a few MB at most */

/* The id of `s` (one table per kind of string: names, categories and arg names are numbered
 * apart, as Perfetto's InternedData keeps them): *fresh says whether it is new and must be
 * written. 0 when out of memory. */
uint64_t pf_intern_get(struct pf_intern *t, const char *s, bool *fresh);
/* Forgets every string: the caller marks the next packet SEQ_INCREMENTAL_STATE_CLEARED. */
void pf_intern_clear(struct pf_intern *t);
void pf_intern_free(struct pf_intern *t);

#endif /* GPUSPY_PF_INTERN_H */
