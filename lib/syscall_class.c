// SPDX-License-Identifier: MIT
#include <stdbool.h>
#include <string.h>
#include "lib/syscall_class.h"
#include "lib/syscall_names.h"

#define MAX_NR 512

/* Names, not numbers: the table holds this architecture's numbers (syscall_names.h). */
static const char *const net_names[] = {
    "socket",	  "connect",	"accept",     "accept4",     "bind",	    "listen",
    "sendto",	  "recvfrom",	"sendmsg",    "recvmsg",     "sendmmsg",    "recvmmsg",
    "shutdown",	  "getsockopt", "setsockopt", "getsockname", "getpeername", "socketpair",
    "sendfile64", "sendfile",	NULL};
static const char *const wait_names[] = {"poll",
					 "ppoll",
					 "select",
					 "pselect6",
					 "epoll_wait",
					 "epoll_pwait",
					 "epoll_pwait2",
					 "nanosleep",
					 "clock_nanosleep",
					 "wait4",
					 "waitid",
					 "pause",
					 "rt_sigsuspend",
					 "rt_sigtimedwait",
					 "io_getevents",
					 "io_uring_enter",
					 NULL};
static const char *const mem_names[] = {"mmap",	   "munmap",  "mprotect", "brk",
					"madvise", "mremap",  "msync",	  "mlock",
					"munlock", "mincore", NULL};
static const char *const proc_names[] = {
    "clone",	      "clone3",	      "fork",	     "vfork",
    "execve",	      "execveat",     "exit",	     "exit_group",
    "kill",	      "tgkill",	      "tkill",	     "rt_sigaction",
    "rt_sigprocmask", "rt_sigreturn", "sched_yield", "set_tid_address",
    "prctl",	      "arch_prctl",   NULL};
static const char *const file_names[] = {"read",
					 "write",
					 "pread64",
					 "pwrite64",
					 "readv",
					 "writev",
					 "preadv",
					 "pwritev",
					 "preadv2",
					 "pwritev2",
					 "open",
					 "openat",
					 "openat2",
					 "close",
					 "close_range",
					 "creat",
					 "stat",
					 "fstat",
					 "lstat",
					 "newfstatat",
					 "statx",
					 "lseek",
					 "fsync",
					 "fdatasync",
					 "sync_file_range",
					 "getdents64",
					 "getdents",
					 "unlink",
					 "unlinkat",
					 "rename",
					 "renameat",
					 "renameat2",
					 "mkdir",
					 "mkdirat",
					 "rmdir",
					 "ftruncate",
					 "truncate",
					 "fallocate",
					 "access",
					 "faccessat",
					 "faccessat2",
					 "readlink",
					 "readlinkat",
					 "pipe",
					 "pipe2",
					 "dup",
					 "dup2",
					 "dup3",
					 "fcntl",
					 "splice",
					 "tee",
					 "copy_file_range",
					 "fadvise64",
					 "flock",
					 NULL};

static bool listed(const char *const *names, const char *name)
{
	for (; *names; names++)
		if (!strcmp(*names, name))
			return true;
	return false;
}

static enum syscall_class classify(unsigned nr)
{
	char buf[32];
	const char *name = gs_syscall_name(nr, buf, sizeof(buf));

	if (!strcmp(name, "futex") || !strcmp(name, "futex_waitv"))
		return SC_SYNC;
	if (!strcmp(name, "ioctl"))
		return SC_IOCTL;
	if (listed(file_names, name))
		return SC_FILE;
	if (listed(net_names, name))
		return SC_NET;
	if (listed(wait_names, name))
		return SC_WAIT;
	if (listed(mem_names, name))
		return SC_MEM;
	if (listed(proc_names, name))
		return SC_PROC;
	return SC_OTHER;
}

enum syscall_class syscall_class_of(unsigned nr)
{
	static unsigned char table[MAX_NR];
	static bool filled;

	if (nr >= MAX_NR)
		return SC_OTHER;
	if (!filled) {
		for (unsigned i = 0; i < MAX_NR; i++)
			table[i] = (unsigned char)classify(i);
		filled = true;
	}
	return (enum syscall_class)table[nr];
}

const char *syscall_class_name(enum syscall_class c)
{
	static const char *const names[SC_NCLASSES] = {
	    [SC_FILE] = "file",	  [SC_NET] = "net", [SC_WAIT] = "wait", [SC_SYNC] = "sync",
	    [SC_IOCTL] = "ioctl", [SC_MEM] = "mem", [SC_PROC] = "proc", [SC_OTHER] = "other",
	};

	return c < SC_NCLASSES ? names[c] : "other";
}
