// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "loader/session/uprobe_multi.h"

#define UPROBE_MULTI_RETURN 1 /* BPF_F_UPROBE_MULTI_RETURN */

/* The link_create part of union bpf_attr as Linux 6.6+ defines it for uprobe_multi; the
 * installed uapi header predates it. */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
};

/* One link: `sema` (a USDT semaphore's file offset) and `pid` (0: every process) are set only
 * for a single probe. */
struct link_target {
	const char *path;
	const uint64_t *offsets, *cookies;
	uint32_t n;
	uint64_t sema;
	uint32_t pid;
};

static int link_create(int prog_fd, uint32_t attach_type, const struct link_target *t,
		       bool retprobe)
{
	union {
		struct link_create_uprobe_multi link;
		unsigned char attr[sizeof(union bpf_attr) > 128 ? sizeof(union bpf_attr) : 128];
	} u;
	long fd;

	memset(&u, 0, sizeof(u));
	u.link.prog_fd = (uint32_t)prog_fd;
	u.link.attach_type = attach_type;
	u.link.path = (uint64_t)(uintptr_t)t->path;
	u.link.offsets = (uint64_t)(uintptr_t)t->offsets;
	u.link.ref_ctr_offsets = t->sema ? (uint64_t)(uintptr_t)&t->sema : 0;
	u.link.cookies = (uint64_t)(uintptr_t)t->cookies;
	u.link.cnt = t->n;
	u.link.multi_flags = retprobe ? UPROBE_MULTI_RETURN : 0;
	u.link.pid = t->pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &u, sizeof(u));
	return fd < 0 ? -errno : (int)fd;
}

int uprobe_multi_attach(int prog_fd, const char *path, const uint64_t *offsets,
			const uint64_t *cookies, uint32_t n, bool retprobe)
{
	struct link_target t = {.path = path, .offsets = offsets, .cookies = cookies, .n = n};

	return link_create(prog_fd, GS_BPF_TRACE_UPROBE_MULTI, &t, retprobe);
}

int uprobe_multi_attach_one(int prog_fd, const char *path, uint64_t offset, uint64_t sema,
			    uint32_t pid)
{
	struct link_target t = {.path = path, .offsets = &offset, .n = 1, .sema = sema, .pid = pid};

	return link_create(prog_fd, GS_BPF_TRACE_UPROBE_MULTI, &t, false);
}

int uprobe_session_attach(int prog_fd, const char *path, const uint64_t *offsets,
			  const uint64_t *cookies, uint32_t n)
{
	struct link_target t = {.path = path, .offsets = offsets, .cookies = cookies, .n = n};

	return link_create(prog_fd, GS_BPF_TRACE_UPROBE_SESSION, &t, false);
}
