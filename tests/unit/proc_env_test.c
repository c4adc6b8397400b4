// SPDX-License-Identifier: MIT
/*
 * Tests of loader/proc/proc_env.c on live processes: a shell started with a chosen environment
 * (and nothing else of ours) is read through /proc/PID/environ. Only RANK, LOCAL_RANK and
 * WORLD_SIZE count, whole names only, decimal values below 2^20 - 1; a variable past the
 * 64 KiB read is unset; an empty environment, or a process that is gone, is an error. Exits 1 on
 * any mismatch.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "loader/proc/proc_env.h"

static int failures;

/* Starts `sh` with `env`, reads it once it runs (it says so on a pipe), then ends it. */
static void expect(const char *what, char *const env[], int rank, int local_rank, int world)
{
	/* no exec after the echo: read mid-exec, an environment can be empty for a moment */
	char *const argv[] = {"sh", "-c", "echo; read x", NULL};
	int out[2], in[2], status;
	struct proc_rank r = {0};
	char c;
	pid_t pid;
	int err;

	if (pipe(out) || pipe(in)) {
		printf("FAIL %s: pipe: %s\n", what, strerror(errno));
		failures++;
		return;
	}
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execve("/bin/sh", argv, env);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	err = read(out[0], &c, 1) == 1 ? proc_env_read(pid, &r) : -EIO;
	close(in[1]); /* read sees the end and the shell exits */
	close(out[0]);
	waitpid(pid, &status, 0);
	if (rank == -2
		? err != -ENODATA
		: err || r.rank != rank || r.local_rank != local_rank || r.world_size != world) {
		printf("FAIL %s: err %d, rank %d local_rank %d world_size %d; expected %d %d %d\n",
		       what, err, r.rank, r.local_rank, r.world_size, rank, local_rank, world);
		failures++;
	}
}

int main(void)
{
	static char pad[70 * 1024];
	struct proc_rank r;

	expect("torchrun's",
	       (char *[]){"PATH=/bin", "RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=8", NULL}, 3, 1, 8);
	expect("none", (char *[]){"PATH=/bin", NULL}, -1, -1, -1);
	expect("empty: unreadable", (char *[]){NULL}, -2, -2, -2);
	expect("not numbers, not the names",
	       (char *[]){"RANK=abc", "WORLD_SIZE=", "LOCAL_RANK=-1", "MY_RANK=5", "RANKS=2",
			  "XWORLD_SIZE=4", NULL},
	       -1, -1, -1);
	expect("the largest", (char *[]){"RANK=1048574", "WORLD_SIZE=1048575", NULL}, 1048574, -1,
	       -1);
	memset(pad, 'x', sizeof(pad) - 1);
	memcpy(pad, "PAD=", 4);
	expect("past 64 KiB", (char *[]){"WORLD_SIZE=2", pad, "RANK=1", NULL}, -1, -1, 2);
	if (!proc_rank_known(&(struct proc_rank){-1, -1, 0}) ||
	    proc_rank_known(&(struct proc_rank){-1, -1, -1})) {
		printf("FAIL proc_rank_known\n");
		failures++;
	}
	/* a pid that cannot exist (above pid_max's limit) */
	if (proc_env_read(4194305, &r) >= 0) {
		printf("FAIL a process that does not exist was read\n");
		failures++;
	}
	if (!failures)
		printf("proc_env: all passed\n");
	return failures ? 1 : 0;
}
