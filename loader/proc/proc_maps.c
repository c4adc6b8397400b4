// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include "loader/proc/proc_maps.h"

/* "start-end perms offset major:minor inode   path" */
static bool parse_line(char *line, struct proc_mapping *m)
{
	unsigned major, minor;
	char perms[8];
	int path_at = 0;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &m->start,
		   &m->end, perms, &m->offset, &major, &minor, &m->ino, &path_at) < 7 ||
	    !path_at || line[path_at] != '/' || !m->ino)
		return false;
	line[strcspn(line, "\n")] = '\0';
	/* a library replaced on disk since it was loaded: its path names another file now */
	if (strstr(line + path_at, " (deleted)"))
		return false;
	m->dev = makedev(major, minor);
	m->exec = perms[2] == 'x';
	snprintf(m->path, sizeof(m->path), "%s", line + path_at);
	return true;
}

int proc_maps_for_each(pid_t pid, proc_maps_fn fn, void *ctx)
{
	struct proc_mapping m;
	char path[64], line[PATH_MAX + 128];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f))
		if (parse_line(line, &m))
			ret = fn(ctx, &m);
	fclose(f);
	return ret;
}

/* PROCMAP_QUERY (Linux 6.11, include/uapi/linux/fs.h), declared here for older headers: the
 * kernel answers with one VMA and fills in only what is asked. */
struct procmap_query_v1 {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start, vma_end, vma_flags, vma_page_size, vma_offset;
	__u64 inode;
	__u32 dev_major, dev_minor;
	__u32 vma_name_size, build_id_size;
	__u64 vma_name_addr, build_id_addr;
};
_Static_assert(sizeof(struct procmap_query_v1) == 104, "PROCMAP_QUERY's first layout");

#define PROCMAP_QUERY_CMD	       _IOWR('f', 17, struct procmap_query_v1)
#define PROCMAP_QUERY_VMA_EXECUTABLE   0x04
#define PROCMAP_QUERY_COVERING_OR_NEXT 0x10
#define PROCMAP_QUERY_FILE_BACKED_VMA  0x20

/* The executable file mappings through PROCMAP_QUERY: the kernel formats no line for the
 * others, and nothing is parsed. -ENOTTY, before any callback, where the kernel has no such
 * ioctl. */
static int query_exec(int fd, proc_maps_fn fn, void *ctx)
{
	struct proc_mapping m;
	struct procmap_query_v1 q;
	uint64_t addr = 0;
	int ret = 0;

	for (bool first = true; !ret; first = false) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = PROCMAP_QUERY_COVERING_OR_NEXT | PROCMAP_QUERY_FILE_BACKED_VMA |
				PROCMAP_QUERY_VMA_EXECUTABLE;
		q.query_addr = addr;
		q.vma_name_addr = (uintptr_t)m.path;
		q.vma_name_size = sizeof(m.path);
		if (ioctl(fd, PROCMAP_QUERY_CMD, &q)) {
			if (errno == ENOENT) /* no mapping above addr */
				return 0;
			return first && (errno == ENOTTY || errno == EINVAL) ? -ENOTTY : -errno;
		}
		addr = q.vma_end;
		/* like the maps file's lines parse_line() keeps: a path, not a file replaced on
		 * disk since it was mapped */
		if (!q.inode || m.path[0] != '/' || strstr(m.path, " (deleted)"))
			continue;
		m.start = q.vma_start;
		m.end = q.vma_end;
		m.offset = q.vma_offset;
		m.dev = makedev(q.dev_major, q.dev_minor);
		m.ino = q.inode;
		m.exec = true;
		ret = fn(ctx, &m);
	}
	return ret;
}

struct exec_filter {
	proc_maps_fn fn;
	void *ctx;
};

static int only_exec(void *ctx, const struct proc_mapping *m)
{
	const struct exec_filter *f = ctx;

	return m->exec ? f->fn(f->ctx, m) : 0;
}

int proc_maps_for_each_exec(pid_t pid, proc_maps_fn fn, void *ctx)
{
	struct exec_filter f = {fn, ctx};
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = query_exec(fd, fn, ctx);
	close(fd);
	/* a kernel before 6.11: the text, every line */
	if (ret == -ENOTTY)
		ret = proc_maps_for_each(pid, only_exec, &f);
	return ret;
}

struct find_ctx {
	uint64_t addr;
	struct proc_mapping *out;
};

static int match_addr(void *ctx, const struct proc_mapping *m)
{
	struct find_ctx *c = ctx;

	if (c->addr < m->start || c->addr >= m->end)
		return 0;
	*c->out = *m;
	return 1;
}

int proc_maps_find(pid_t pid, uint64_t addr, struct proc_mapping *out)
{
	struct find_ctx c = {.addr = addr, .out = out};
	int ret = proc_maps_for_each(pid, match_addr, &c);

	return ret == 1 ? 0 : ret < 0 ? ret : -ENOENT;
}

void proc_maps_host_path(pid_t pid, const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/%d/root%s", pid, path);
}

const char *proc_maps_file_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

bool proc_maps_is_ldso(const char *path)
{
	const char *base = proc_maps_file_name(path);

	return !strncmp(base, "ld-linux", 8) || (!strncmp(base, "ld-", 3) && strstr(base, ".so"));
}
