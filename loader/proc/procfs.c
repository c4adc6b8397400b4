// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpf/records.h"
#include "loader/proc/procfs.h"

static pid_t dirent_pid(const struct dirent *d)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)d->d_name[0]))
		return 0;
	v = strtol(d->d_name, &end, 10);
	return *end || v <= 0 ? 0 : (pid_t)v;
}

static void read_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

int procfs_for_each_thread(pid_t pid, procfs_thread_fn fn, void *ctx)
{
	char path[64], comm[GS_COMM_LEN + 2];
	struct dirent *d;
	DIR *dir;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!ret && (d = readdir(dir))) {
		pid_t tid = dirent_pid(d);

		if (!tid)
			continue;
		read_comm(pid, tid, comm, sizeof(comm));
		ret = fn(ctx, pid, tid, comm);
	}
	closedir(dir);
	return ret;
}

int procfs_for_each_process(procfs_pid_fn fn, void *ctx)
{
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int ret = 0;

	if (!dir)
		return -errno;
	while (!ret && (d = readdir(dir))) {
		pid_t pid = dirent_pid(d);

		if (pid)
			ret = fn(ctx, pid);
	}
	closedir(dir);
	return ret;
}

int procfs_stat_fields(pid_t pid, int field, size_t n, unsigned long long *values)
{
	char path[64], buf[1024], *p, *end;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -ESRCH;
	buf[len] = '\0';
	/* the name may hold spaces and parentheses: fields count from the last ')' */
	p = strrchr(buf, ')');
	for (int at = 2; at < field && p; at++)
		p = strchr(p + 1, ' ');
	if (!p || field < 3)
		return -EINVAL;
	for (size_t i = 0; i < n; i++, p = end) {
		values[i] = strtoull(p + 1, &end, 10);
		if (end == p + 1)
			return -EINVAL;
	}
	return 0;
}

int procfs_stat_field(pid_t pid, int field, unsigned long long *value)
{
	return procfs_stat_fields(pid, field, 1, value);
}

static pid_t read_ppid(pid_t pid)
{
	unsigned long long ppid;

	return procfs_stat_field(pid, 4, &ppid) ? 0 : (pid_t)ppid;
}

struct pid_pair {
	pid_t pid, ppid;
};

struct process_table {
	struct pid_pair *pairs;
	size_t n, cap;
};

static int collect_process(void *ctx, pid_t pid)
{
	struct process_table *t = ctx;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct pid_pair *grown = realloc(t->pairs, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		t->pairs = grown;
		t->cap = cap;
	}
	t->pairs[t->n].pid = pid;
	t->pairs[t->n].ppid = read_ppid(pid);
	t->n++;
	return 0;
}

/* Breadth-first over a snapshot of (pid, ppid) pairs; each process is visited at most once
 * because a process has exactly one parent. */
int procfs_for_each_descendant(pid_t pid, procfs_pid_fn fn, void *ctx)
{
	struct process_table t = {0};
	pid_t *queue = NULL;
	size_t head = 0, tail = 0;
	int ret = procfs_for_each_process(collect_process, &t);

	if (!ret && !(queue = malloc((t.n + 1) * sizeof(*queue))))
		ret = -ENOMEM;
	if (!ret)
		queue[tail++] = pid;
	while (!ret && head < tail) {
		pid_t parent = queue[head++];

		for (size_t i = 0; i < t.n && !ret; i++) {
			if (t.pairs[i].ppid != parent || tail > t.n)
				continue;
			queue[tail++] = t.pairs[i].pid;
			ret = fn(ctx, t.pairs[i].pid);
		}
	}
	free(queue);
	free(t.pairs);
	return ret;
}

bool procfs_status_text(const char *proc_dir, const char *key, char *buf, size_t len)
{
	char path[64], line[256];
	size_t keylen = strlen(key);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", proc_dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *value = line + keylen + 1;

		if (strncmp(line, key, keylen) || line[keylen] != ':')
			continue;
		value += strspn(value, " \t");
		snprintf(buf, len, "%.*s", (int)strcspn(value, "\n"), value);
		found = true;
	}
	fclose(f);
	return found;
}

unsigned long long procfs_status_field(const char *proc_dir, const char *key, int base)
{
	char value[128];

	return procfs_status_text(proc_dir, key, value, sizeof(value)) ? strtoull(value, NULL, base)
								       : 0;
}

pid_t procfs_tgid_of(pid_t pid)
{
	char dir[16];

	snprintf(dir, sizeof(dir), "%d", pid);
	return (pid_t)procfs_status_field(dir, "Tgid", 10);
}

/* The value of `name` in the process's initial environment, "" if unset. */
void procfs_environ_value(pid_t pid, const char *name, char *out, size_t len)
{
	char path[64], buf[65536];
	size_t nlen = strlen(name);
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (char *at = buf; at < buf + n; at += strlen(at) + 1)
		if (!strncmp(at, name, nlen) && at[nlen] == '=') {
			snprintf(out, len, "%s", at + nlen + 1);
			return;
		}
}

int procfs_thread_syscall(pid_t pid, pid_t tid, long *nr)
{
	char path[64], buf[256];
	unsigned long long sp = 0, pc = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	/* "running", or "-1 SP PC" blocked outside a syscall, or "NR ARG1..ARG6 SP PC"; a kernel
	 * thread reads as syscall 0 with no user stack, which is none */
	if (sscanf(buf, "%ld %*x %*x %*x %*x %*x %*x %llx %llx", nr, &sp, &pc) != 3 || (!sp && !pc))
		*nr = -1;
	return 0;
}
