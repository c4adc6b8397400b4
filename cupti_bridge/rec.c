// SPDX-License-Identifier: MIT
/* What every record the bridge writes has in common: header, trailing name, padding. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bridge.h"

uint64_t bridge_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Cached: glibc's getpid() and gettid() are system calls, and gpuspy counts every system call
 * of the process it traces: the bridge must not add hundreds of its own to the profile. */
static _Atomic uint32_t g_pid;
static _Thread_local uint32_t t_tid;

uint32_t bridge_getpid(void)
{
	uint32_t pid = g_pid;

	if (!pid)
		g_pid = pid = (uint32_t)getpid();
	return pid;
}

uint32_t bridge_gettid(void)
{
	if (!t_tid)
		t_tid = (uint32_t)gettid();
	return t_tid;
}

void bridge_forget_ids(void)
{
	g_pid = 0;
	t_tid = 0;
}

size_t bridge_rec_finish(union bridge_rec *r, __u16 type, size_t fixed, uint32_t tid, uint64_t ts,
			 const char *name)
{
	size_t len = name ? strnlen(name, GS_GPU_NAME_MAX - 1) : 0;
	size_t size = name ? (fixed + len + 1 + 7) & ~(size_t)7 : fixed;

	/* the padding is zeroed: these bytes go into the trace file as they are */
	memset(r->bytes + fixed, 0, size - fixed);
	memcpy(r->bytes + fixed, name ? name : "", len);
	r->hdr.type = type;
	r->hdr.size = (__u16)size;
	r->hdr.pid = bridge_getpid();
	r->hdr.tid = tid;
	r->hdr.flags = 0;
	r->hdr.ts = ts;
	return size;
}
