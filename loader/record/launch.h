/* SPDX-License-Identifier: MIT */
/*
 * Starting `gpuspy record -- CMD`: the child is forked at once but held before execvp() until
 * the probes are attached, so not one syscall of the command escapes the recording.
 */
#ifndef GPUSPY_LAUNCH_H
#define GPUSPY_LAUNCH_H

#include <sys/types.h>

struct run_as;

struct launched_cmd {
	pid_t pid;
	int go_fd;   /* parent writes one byte: exec now */
	int exec_fd; /* close-on-exec pipe: EOF means execvp succeeded, 4 bytes mean its errno */
};

/* `user` NULL: the command runs as gpuspy's caller; else it switches to that user (run_as.h)
 * right before exec. */
int launch_prepare(char *const argv[], const struct run_as *user, struct launched_cmd *out);
/* Lets the child exec; returns 0 or the errno of its switch to the user or of execvp (then
 * the child has exited). */
int launch_release(struct launched_cmd *cmd);
/* Kills and reaps a child that was prepared but will never be released. */
void launch_abort(struct launched_cmd *cmd);
/* Converts a wait(2) status into the shell's exit code convention. */
int launch_exit_code(int status);

#endif /* GPUSPY_LAUNCH_H */
