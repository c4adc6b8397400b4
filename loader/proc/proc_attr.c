// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/cgroup_attr.h"
#include "lib/clocks.h"
#include "lib/exit_codes.h"
#include "lib/key_index.h"
#include "loader/proc/proc_attr.h"
#include "loader/proc/proc_env.h"
#include "output/trace/trace_format.h"
#include "output/trace/trace_writer.h"

#define USER_CACHE 64 /* distinct users named; a host has a handful, containers a few more */

struct user_name {
	uint32_t uid;
	char name[32];
};

struct proc_attrs {
	/* pid -> a hash of its attribution as last written (or inherited): value, not index */
	struct key_index known;
	/* pid -> its rank variables as last written (or inherited), packed as a value */
	struct key_index ranks;
	struct user_name users[USER_CACHE];
	size_t nusers;
	bool read_ranks; /* the rank variables too (GS_REC_PROC_ENV) */
};

struct attr_read {
	uint32_t uid, euid, gid;
	char cgroup[1024];
};

struct proc_attrs *proc_attrs_new(bool ranks)
{
	struct proc_attrs *pa = calloc(1, sizeof(struct proc_attrs));

	if (pa)
		pa->read_ranks = ranks;
	return pa;
}

void proc_attrs_free(struct proc_attrs *pa)
{
	if (!pa)
		return;
	key_index_free(&pa->known);
	key_index_free(&pa->ranks);
	free(pa);
}

/* A whole small /proc file; -errno when it cannot be read (the process is gone). */
static int read_proc_file(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return 0;
}

/* "Uid:\t0\t0\t0\t0": the first two numbers (real, effective). */
static bool status_ids(const char *status, const char *key, uint32_t *first, uint32_t *second)
{
	const char *p = strstr(status, key);
	char *end;

	if (!p)
		return false;
	p += strlen(key);
	*first = (uint32_t)strtoul(p, &end, 10);
	if (end == p)
		return false;
	*second = (uint32_t)strtoul(end, &end, 10);
	return true;
}

static int read_attr(pid_t pid, struct attr_read *a)
{
	char status[4096], cgroup[4096];
	uint32_t unused;
	int err = read_proc_file(pid, "status", status, sizeof(status));

	err = err ?: read_proc_file(pid, "cgroup", cgroup, sizeof(cgroup));
	if (err)
		return err;
	if (!status_ids(status, "\nUid:", &a->uid, &a->euid) ||
	    !status_ids(status, "\nGid:", &a->gid, &unused))
		return -EINVAL;
	if (cgroup_pick_path(cgroup, a->cgroup, sizeof(a->cgroup)))
		snprintf(a->cgroup, sizeof(a->cgroup), "?");
	return 0;
}

/* FNV-1a over the ids and the path; never SIZE_MAX (key_index's empty mark). */
static size_t attr_hash(const struct attr_read *a)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	uint32_t ids[3] = {a->uid, a->euid, a->gid};
	const unsigned char *p = (const unsigned char *)ids;

	for (size_t i = 0; i < sizeof(ids); i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	for (p = (const unsigned char *)a->cgroup; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	return (size_t)(h >> 1);
}

/* The user's name as this host's passwd says, looked up once per uid. */
static const char *user_name(struct proc_attrs *pa, uint32_t uid, char *buf, size_t len)
{
	struct passwd pw, *found = NULL;
	char scratch[1024];

	for (size_t i = 0; i < pa->nusers; i++)
		if (pa->users[i].uid == uid)
			return pa->users[i].name;
	if (!getpwuid_r(uid, &pw, scratch, sizeof(scratch), &found) && found &&
	    strlen(found->pw_name) < len)
		snprintf(buf, len, "%s", found->pw_name);
	else
		snprintf(buf, len, "%u", uid); /* a container's user the host does not know */
	if (pa->nusers < USER_CACHE) {
		pa->users[pa->nusers].uid = uid;
		snprintf(pa->users[pa->nusers].name, sizeof(pa->users[0].name), "%s", buf);
		pa->nusers++;
	}
	return buf;
}

static int write_attr(struct proc_attrs *pa, struct trace_writer *w, pid_t pid,
		      const struct attr_read *a, uint64_t ts)
{
	struct gs_proc_info rec = {
	    .hdr = {.type = GS_REC_PROC_INFO, .pid = (uint32_t)pid, .tid = (uint32_t)pid, .ts = ts},
	    .uid = a->uid,
	    .euid = a->euid,
	    .gid = a->gid,
	};
	char name[sizeof(rec.user)];

	snprintf(rec.user, sizeof(rec.user), "%s", user_name(pa, a->euid, name, sizeof(name)));
	return trace_writer_append_tail(w, &rec.hdr, sizeof(rec), a->cgroup, sizeof(a->cgroup));
}

/* The three variables in one key_index value (each + 1 fits 20 bits); never SIZE_MAX. */
static size_t rank_key(const struct proc_rank *r)
{
	return (size_t)(uint32_t)(r->rank + 1) << 40 ^ (size_t)(uint32_t)(r->local_rank + 1) << 20 ^
	       (size_t)(uint32_t)(r->world_size + 1);
}

/* Writes the process's rank variables when it has some and they are not what is known. */
static int refresh_rank(struct proc_attrs *pa, struct trace_writer *w, pid_t pid, uint64_t ts)
{
	struct gs_proc_env rec = {
	    .hdr = {.type = GS_REC_PROC_ENV,
		    .size = sizeof(rec),
		    .pid = (uint32_t)pid,
		    .tid = (uint32_t)pid,
		    .ts = ts},
	};
	struct proc_rank r;
	size_t known, key;

	/* gone already, or its environment unreadable: it keeps its parent's */
	if (proc_env_read(pid, &r))
		return 0;
	key = rank_key(&r);
	if (key_index_find(&pa->ranks, (uint64_t)pid, 0, &known) ? known == key
								 : !proc_rank_known(&r))
		return 0;
	if (key_index_put(&pa->ranks, (uint64_t)pid, 0, key))
		return -ENOMEM;
	rec.rank = r.rank;
	rec.local_rank = r.local_rank;
	rec.world_size = r.world_size;
	return trace_writer_append(w, &rec.hdr);
}

/* Reads the process and writes its attribution unless it is what is known already. */
static int refresh(struct proc_attrs *pa, struct trace_writer *w, pid_t pid, uint64_t ts)
{
	struct attr_read a;
	size_t known, h;
	int err = pa->read_ranks ? refresh_rank(pa, w, pid, ts) : 0;

	if (err)
		return err;
	if (read_attr(pid, &a))
		return 0; /* gone already: it keeps what it inherited */
	h = attr_hash(&a);
	if (key_index_find(&pa->known, (uint64_t)pid, 0, &known) && known == h)
		return 0;
	if (key_index_put(&pa->known, (uint64_t)pid, 0, h))
		return -ENOMEM;
	return write_attr(pa, w, pid, &a, ts);
}

int proc_attrs_add(struct proc_attrs *pa, struct trace_writer *w, pid_t pid)
{
	return refresh(pa, w, pid, gs_monotonic_ns());
}

static int inherit(struct proc_attrs *pa, const struct gs_fork *f)
{
	size_t parent;

	if (f->hdr.flags & GS_FORK_THREAD)
		return 0;
	if (key_index_find(&pa->ranks, f->hdr.pid, 0, &parent)) {
		if (key_index_put(&pa->ranks, f->child_pid, 0, parent))
			return -ENOMEM;
	} else {
		key_index_remove(&pa->ranks, f->child_pid, 0);
	}
	if (!key_index_find(&pa->known, f->hdr.pid, 0, &parent)) {
		/* a pid handed out again must not keep its old process's attribution */
		key_index_remove(&pa->known, f->child_pid, 0);
		return 0;
	}
	return key_index_put(&pa->known, f->child_pid, 0, parent) ? -ENOMEM : 0;
}

int proc_attrs_on_record(struct proc_attrs *pa, struct trace_writer *w, const struct gs_hdr *rec)
{
	switch (rec->type) {
	case GS_REC_FORK:
		return inherit(pa, (const void *)rec);
	case GS_REC_EXEC:
		return refresh(pa, w, (pid_t)rec->pid, rec->ts);
	case GS_REC_EXIT:
		if (rec->flags & GS_EXIT_GROUP) {
			key_index_remove(&pa->known, rec->pid, 0);
			key_index_remove(&pa->ranks, rec->pid, 0);
		}
		return 0;
	default:
		return 0;
	}
}
