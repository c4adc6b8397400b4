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

#include <sys/types.h>
#include "proc_maps.h"

/* `ldso` is ld.so's executable mapping in `pid`. 0 with *holder = the tid holding one of its
 * locks (0: none is held); -ENOENT when the file has no _rtld_global (not glibc's ld.so),
 * -ENOTSUP when no recursive mutex was recognised in it, or -errno. */
int ldso_lock_holder(pid_t pid, const struct proc_mapping *ldso, pid_t *holder);

#endif /* GPUSPY_LDSO_LOCKS_H */
