// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "loader/proc/fd_names.h"
#include "output/trace/trace_writer.h"

/* A fixed-size direct-mapped cache: a collision only costs another readlink and a duplicate
 * (harmless) name record, and memory stays bounded on a host-wide recording. */
#define CACHE_SLOTS 8192

struct fd_key {
	uint64_t ino;
	uint32_t pid;
	uint32_t fd;
};

struct fd_names {
	struct fd_key slots[CACHE_SLOTS];
};

struct fd_names *fd_names_new(void)
{
	return calloc(1, sizeof(struct fd_names));
}

void fd_names_free(struct fd_names *n)
{
	free(n);
}

static size_t slot_of(const struct fd_key *k)
{
	uint64_t h = k->ino * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)k->pid << 20) ^ k->fd;

	return (size_t)(h ^ (h >> 29)) % CACHE_SLOTS;
}

/* The link target, but only if it is still the inode the kernel saw: the fd may have been
 * closed and reused since the call. */
static int resolve(pid_t pid, uint32_t fd, uint64_t ino, char *buf, size_t len)
{
	char path[64];
	struct stat st;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%u", pid, fd);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (stat(path, &st) < 0 || (uint64_t)st.st_ino != ino)
		return -ESTALE;
	return 0;
}

static int write_name(struct trace_writer *w, const struct gs_hdr *hdr, uint32_t fd, uint64_t ino,
		      const char *name)
{
	struct gs_fd_name rec = {.hdr = *hdr, .ino = ino, .fd = fd, .dirfd = AT_FDCWD};

	rec.hdr.type = GS_REC_FD_NAME;
	return trace_writer_append_tail(w, &rec.hdr, sizeof(rec), name, 4096);
}

int fd_names_note(struct fd_names *n, struct trace_writer *w, pid_t pid, uint32_t fd, uint64_t ino,
		  uint64_t ts)
{
	struct fd_key k = {.ino = ino, .pid = (uint32_t)pid, .fd = fd};
	struct fd_key *slot = &n->slots[slot_of(&k)];
	char name[4096];

	if (!ino || !memcmp(slot, &k, sizeof(k)))
		return 0;
	*slot = k;
	if (resolve(pid, fd, ino, name, sizeof(name)))
		return 0; /* gone already: reports fall back to the fd number */
	return write_name(w, &(struct gs_hdr){.pid = (uint32_t)pid, .ts = ts}, fd, ino, name);
}

/* "dir/file" opened relative to AT_FDCWD or a directory fd: join it with what /proc says
 * that directory is now (the process may have changed it since; rare for data loaders). */
static void absolute_path(const struct gs_fd_name *rec, char *buf, size_t len)
{
	char link[64], dir[4096];
	ssize_t n;

	if (rec->name[0] == '/' || !rec->name[0])
		goto as_is;
	if (rec->dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%u/cwd", rec->hdr.pid);
	else
		snprintf(link, sizeof(link), "/proc/%u/fd/%d", rec->hdr.pid, rec->dirfd);
	n = readlink(link, dir, sizeof(dir) - 1);
	if (n <= 0 || dir[0] != '/')
		goto as_is;
	dir[n] = '\0';
	snprintf(buf, len, "%s/%s", strcmp(dir, "/") ? dir : "", rec->name);
	return;
as_is:
	snprintf(buf, len, "%s", rec->name);
}

int fd_names_opened(struct fd_names *n, struct trace_writer *w, const struct gs_fd_name *rec)
{
	struct fd_key k = {.ino = rec->ino, .pid = rec->hdr.pid, .fd = rec->fd};
	char path[4096 + GS_PATH_MAX];

	n->slots[slot_of(&k)] = k;
	absolute_path(rec, path, sizeof(path));
	return write_name(w, &rec->hdr, rec->fd, rec->ino, path);
}
