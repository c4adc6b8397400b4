// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "loader/proc/proc_env.h"

/* The kernel copies environ out of the target's memory without stopping it; a launcher puts
 * these variables among the first few kilobytes, and an environment larger than this is read
 * only this far (a variable past it counts as unset). */
#define ENVIRON_MAX (64 * 1024)
#define RANK_MAX    ((1 << 20) - 2) /* above any job's world size; fits proc_attr's packing */

/* "123" -> 123; anything else (empty, sign, junk, too large) -> -1. */
static int rank_value(const char *s)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > RANK_MAX)
		return -1;
	return (int)v;
}

static void parse(const char *env, size_t len, struct proc_rank *r)
{
	static const struct {
		const char *prefix;
		size_t off;
	} vars[] = {
	    {"RANK=", offsetof(struct proc_rank, rank)},
	    {"LOCAL_RANK=", offsetof(struct proc_rank, local_rank)},
	    {"WORLD_SIZE=", offsetof(struct proc_rank, world_size)},
	};

	for (const char *p = env; p < env + len; p += strlen(p) + 1)
		for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
			if (!strncmp(p, vars[i].prefix, strlen(vars[i].prefix)))
				*(int *)((char *)r + vars[i].off) =
				    rank_value(p + strlen(vars[i].prefix));
}

int proc_env_read(pid_t pid, struct proc_rank *r)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	ssize_t n = 0;
	int fd, err = 0;

	*r = (struct proc_rank){-1, -1, -1};
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(ENVIRON_MAX + 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* environ comes in pieces of at most a page: read until the end or the bound */
	while (len < ENVIRON_MAX && (n = read(fd, buf + len, ENVIRON_MAX - len)) > 0)
		len += (size_t)n;
	if (n < 0 && len == 0) {
		err = -errno;
		goto cleanup;
	}
	/* nothing: a process in the middle of an exec reads this way for a moment (as does one
	 * started with no environment at all); it keeps what it had rather than lose its rank */
	if (len == 0) {
		err = -ENODATA;
		goto cleanup;
	}
	/* a variable cut at the bound must not be read as a shorter value */
	while (len > 0 && buf[len - 1] != '\0')
		len--;
	buf[len] = '\0';
	parse(buf, len, r);
cleanup:
	free(buf);
	close(fd);
	return err;
}

bool proc_rank_known(const struct proc_rank *r)
{
	return r->rank >= 0 || r->local_rank >= 0 || r->world_size >= 0;
}
