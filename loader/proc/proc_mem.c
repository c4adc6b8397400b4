// SPDX-License-Identifier: MIT
/* Another process's memory (proc_mem.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>
#include "loader/proc/proc_mem.h"

/* One transfer: the bytes moved, or -errno. */
static ssize_t transfer(pid_t pid, uint64_t addr, void *buf, size_t len, bool write)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

int proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = transfer(pid, addr, buf, len, false);

	return n < 0 ? (int)n : (size_t)n == len ? 0 : -EIO;
}

int proc_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	ssize_t n = transfer(pid, addr, (void *)buf, len, true);

	return n < 0 ? (int)n : (size_t)n == len ? 0 : -EIO;
}

int proc_mem_read_string(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	ssize_t n = len ? transfer(pid, addr, buf, len - 1, false) : -EINVAL;

	if (n <= 0)
		return n < 0 ? (int)n : -EIO;
	buf[n] = '\0';
	return 0;
}
