// SPDX-License-Identifier: MIT
/* Held ld.so locks of another process (ldso_locks.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "loader/bridge/ldso_locks.h"
#include "loader/proc/elf_symbols.h"
#include "loader/proc/proc_mem.h"

#define RTLD_GLOBAL_MAX (64 * 1024) /* 4336 bytes in glibc 2.36 */
#define MUTEX_RECURSIVE 1	    /* PTHREAD_MUTEX_RECURSIVE_NP */
#define MUTEX_KIND_MASK 3	    /* PTHREAD_MUTEX_KIND_MASK_NP */
#define MUTEX_COUNT_MAX (1u << 20)  /* recursion depth: anything larger is not a mutex */
#define MIN_LOCKS_SEEN	3	    /* load, write and TLS locks at least */

/* The first fields of glibc's x86_64 pthread_mutex_t (struct __pthread_mutex_s). */
struct glibc_mutex {
	int lock;
	unsigned count;
	int owner;
	unsigned nusers;
	int kind;
};

static bool is_thread_of(pid_t pid, pid_t tid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
	return tid > 0 && !stat(path, &st);
}

/* 1 held (owner in *owner), 0 free, -1 not a recursive mutex. */
static int classify(const struct glibc_mutex *m, pid_t pid, pid_t *owner)
{
	if ((m->kind & MUTEX_KIND_MASK) != MUTEX_RECURSIVE || m->kind < 0)
		return -1;
	if (!m->lock && !m->count && !m->owner)
		return 0;
	if (m->lock && m->count && m->count < MUTEX_COUNT_MAX && is_thread_of(pid, m->owner)) {
		*owner = m->owner;
		return 1;
	}
	return -1;
}

int ldso_locks_find(pid_t pid, const struct proc_mapping *ldso, struct ldso_locks *out)
{
	static const char *const names[] = {"_dl_debug_state"};
	char host[PATH_MAX + 32];
	uint64_t off = 0, delta;
	int err;

	/* from _dl_debug_state's place in ld.so's text, whose mapping gives the load bias */
	proc_maps_host_path(pid, ldso->path, host, sizeof(host));
	err = elf_find_functions(host, names, 1, false, &off);
	if (err <= 0 || off < ldso->offset || off - ldso->offset >= ldso->end - ldso->start)
		return err < 0 ? err : -ENOENT;
	err = elf_symbol_distance(host, names[0], "_rtld_global", &delta, &out->size);
	if (err)
		return err;
	out->pid = pid;
	out->addr = ldso->start + (off - ldso->offset) + delta;
	return out->size && out->size <= RTLD_GLOBAL_MAX ? 0 : -ENOENT;
}

int ldso_lock_holder(const struct ldso_locks *l, pid_t *holder)
{
	unsigned char *buf;
	unsigned seen = 0;
	int err;

	*holder = 0;
	buf = malloc(l->size);
	if (!buf)
		return -ENOMEM;
	err = proc_mem_read(l->pid, l->addr, buf, l->size);
	/* mutexes are 8-byte aligned in the structure: they hold pointers (__list) */
	for (uint64_t o = 0; !err && o + sizeof(struct glibc_mutex) <= l->size; o += 8) {
		struct glibc_mutex m;
		pid_t owner = 0;
		int state;

		memcpy(&m, buf + o, sizeof(m));
		state = classify(&m, l->pid, &owner);
		if (state < 0)
			continue;
		seen++;
		if (state == 1 && !*holder)
			*holder = owner;
	}
	free(buf);
	if (!err && seen < MIN_LOCKS_SEEN)
		err = -ENOTSUP;
	return err;
}
