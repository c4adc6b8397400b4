/* SPDX-License-Identifier: MIT */
/*
 * Names the file behind a syscall span's fd: /proc/PID/fd/N read while recording, checked
 * against the inode BPF saw, written once per (process, fd, inode) as a GS_REC_FD_NAME record
 * so the trace needs no /proc later.
 */
#ifndef GPUSPY_FD_NAMES_H
#define GPUSPY_FD_NAMES_H

#include <stdint.h>
#include <sys/types.h>

struct trace_writer;
struct fd_names;
struct gs_fd_name;

struct fd_names *fd_names_new(void);
void fd_names_free(struct fd_names *n);
/* Writes the name record if this (pid, fd, ino) was not named before. 0 or -errno. */
int fd_names_note(struct fd_names *n, struct trace_writer *w, pid_t pid, uint32_t fd, uint64_t ino,
		  uint64_t ts);

/* Writes BPF's open-time name record compactly, a relative path made absolute where /proc
 * still tells the directory, and remembers the fd as named. 0 or -errno. */
int fd_names_opened(struct fd_names *n, struct trace_writer *w, const struct gs_fd_name *rec);

#endif /* GPUSPY_FD_NAMES_H */
