/* SPDX-License-Identifier: MIT */
/*
 * Syscalls in a few classes for fleet metrics, where one series per syscall and process would
 * be too many: what kind of waiting or work the time went to.
 */
#ifndef GPUSPY_SYSCALL_CLASS_H
#define GPUSPY_SYSCALL_CLASS_H

enum syscall_class {
	SC_FILE,  /* file and pipe I/O: read, write, open, fsync, stat, ... */
	SC_NET,	  /* sockets: connect, accept, send*, recv*, ... */
	SC_WAIT,  /* waiting for readiness or time: poll, epoll_wait, select, nanosleep, wait4 */
	SC_SYNC,  /* futex: locks, condition variables, thread joins */
	SC_IOCTL, /* ioctl: device drivers (the GPU driver's calls are ioctls) */
	SC_MEM,	  /* mmap, munmap, mprotect, brk, madvise */
	SC_PROC,  /* clone, execve, exit, kill, signals */
	SC_OTHER,
	SC_NCLASSES,
};

enum syscall_class syscall_class_of(unsigned nr);
const char *syscall_class_name(enum syscall_class c); /* "file", "net", ... */

#endif /* GPUSPY_SYSCALL_CLASS_H */
