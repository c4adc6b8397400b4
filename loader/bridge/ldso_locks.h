/* SPDX-License-Identifier: MIT */
/*
 * Whether a thread of another process holds one of ld.so's locks right now (glibc). A dlopen
 * made while another thread loads a library (a slow constructor, a dlopen in flight) blocks
 * until that load ends, and one made in the very thread that holds the lock would re-enter
 * the loader half-way: gpuspy checks before it borrows a thread for the bridge's dlopen.
 *
 * glibc keeps its loader locks (the load lock, the link-map write lock, the TLS lock, each
 * namespace's unique-symbol lock) as recursive pthread mutexes inside `_rtld_global`, an
 * object ld.so exports (GLIBC_PRIVATE) whose layout changes between releases. Rather than
 * trusting one release's offsets, the object is read whole and every recursive mutex in it
 * is recognised by its fields: {lock, count, owner, nusers, kind = PTHREAD_MUTEX_RECURSIVE}.
 * A held one names its owner, which must be a thread of the process.
 */
#ifndef GPUSPY_LDSO_LOCKS_H
#define GPUSPY_LDSO_LOCKS_H

#include <stdint.h>
#include <sys/types.h>
#include "loader/proc/proc_maps.h"

/* Where ld.so's locks are in one process: found once (it reads ld.so's ELF file), read as
 * often as needed. */
struct ldso_locks {
	pid_t pid;
	uint64_t addr, size; /* _rtld_global in the process */
};

/* `ldso` is ld.so's executable mapping in `pid`. 0, -ENOENT when the file has no
 * _rtld_global (not glibc's ld.so), or -errno. */
int ldso_locks_find(pid_t pid, const struct proc_mapping *ldso, struct ldso_locks *out);
/* 0 with *holder = the tid holding one of the locks now (0: none is held); -ENOTSUP when no
 * recursive mutex was recognised, or -errno. */
int ldso_lock_holder(const struct ldso_locks *l, pid_t *holder);

#endif /* GPUSPY_LDSO_LOCKS_H */
