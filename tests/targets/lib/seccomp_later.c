// SPDX-License-Identifier: MIT
/*
 * A library to LD_PRELOAD into a target so that it sandboxes itself after start-up, as some
 * inference servers do (tests/inject.bats): a thread waits for the file $SECCOMP_TRIGGER, then
 * installs, for every thread of the process (TSYNC), a seccomp filter that answers openat with
 * SECCOMP_RET_KILL_PROCESS ($SECCOMP_ACTION=kill) or SECCOMP_RET_TRAP (=trap), and creates
 * $SECCOMP_TRIGGER.done.
 */
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int install(unsigned action)
{
	struct sock_filter code[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, action),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

static void *sandbox_thread(void *arg)
{
	const char *trigger = getenv("SECCOMP_TRIGGER"), *how = getenv("SECCOMP_ACTION");
	struct timespec tick = {0, 10000000};
	char done[4096];
	int fd;

	(void)arg;
	while (access(trigger, F_OK))
		nanosleep(&tick, NULL);
	/* the marker is opened before the filter: openat is what it forbids */
	snprintf(done, sizeof(done), "%s.done", trigger);
	fd = open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (install(how && !strcmp(how, "trap") ? SECCOMP_RET_TRAP : SECCOMP_RET_KILL_PROCESS))
		perror("seccomp_later");
	if (fd >= 0)
		close(fd);
	return NULL;
}

__attribute__((constructor)) static void seccomp_later_init(void)
{
	pthread_t t;

	if (getenv("SECCOMP_TRIGGER") && !pthread_create(&t, NULL, sandbox_thread, NULL))
		pthread_detach(t);
}
