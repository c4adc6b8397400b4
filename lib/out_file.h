/* SPDX-License-Identifier: MIT */
/*
 * Creating the files gpuspy writes for the user (record's trace, export's timeline) so that a
 * path someone else prepared cannot redirect, leak or destroy anything. gpuspy usually runs as
 * root, often in a shared directory such as /tmp, and a trace holds command lines, file names
 * and environment-derived names. The rules (README, "Output files"):
 *   - a symbolic link is never followed, nor replaced: refused;
 *   - anything but a regular file (directory, fifo, device, socket) is refused, and stays as
 *     it is;
 *   - an existing file is replaced only when asked (`replace`), and only a regular file
 *     owned by the caller (effective uid): another user's file is refused, wherever it is;
 *   - a replaced file is unlinked and created anew (mode 0600, O_EXCL): nothing of the old
 *     file, its mode or its other hard links, reaches the new data, so gpuspy never needs to
 *     chmod a file it did not create.
 * `why` receives the reason of a failure, to print as "cannot create PATH: <why>".
 */
#ifndef GPUSPY_OUT_FILE_H
#define GPUSPY_OUT_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* A new file at `path`, mode 0600, open for writing: its fd, or -1 with errno set (EEXIST:
 * it exists and `replace` is false, or it reappeared while being replaced). */
int out_file_create(const char *path, bool replace, char *why, size_t whylen);

/* 0 when `path` does not exist or is a file the rules let gpuspy replace; -1 otherwise. For a
 * command that writes elsewhere first: it can refuse before doing the work. */
int out_file_check(const char *path, char *why, size_t whylen);

/* Moves the finished temporary file `tmp` (in the same directory) to `path` under the same
 * rules: onto nothing (never onto something that appeared meanwhile) or onto a file
 * out_file_check() accepts. 0, or -1 with `tmp` left in place for the caller to remove. */
int out_file_rename(const char *tmp, const char *path, char *why, size_t whylen);

#endif /* GPUSPY_OUT_FILE_H */
