// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
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
