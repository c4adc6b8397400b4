// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/out_file.h"

/* O_EXCL with O_CREAT also fails on a symbolic link, wherever it points; O_NOFOLLOW says so
 * again for a reader of this line. */
#define CREATE_FLAGS (O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY)

static int fail(char *why, size_t whylen, int err, const char *reason)
{
	snprintf(why, whylen, "%s", reason ? reason : strerror(err));
	errno = err;
	return -1;
}

/* Whether the rules let gpuspy replace what lstat() found. */
static int check_stat(const struct stat *st, char *why, size_t whylen)
{
	if (S_ISLNK(st->st_mode))
		return fail(why, whylen, ELOOP, "is a symbolic link (not followed)");
	if (S_ISDIR(st->st_mode))
		return fail(why, whylen, EISDIR, "is a directory");
	if (S_ISFIFO(st->st_mode))
		return fail(why, whylen, EINVAL,
			    "is a fifo, not a regular file (use -o - for a pipe)");
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return fail(why, whylen, EINVAL, "is a device, not a regular file");
	if (!S_ISREG(st->st_mode))
		return fail(why, whylen, EINVAL, "is a socket, not a regular file");
	if (st->st_uid != geteuid()) {
		snprintf(why, whylen, "is owned by another user (uid %u)", (unsigned)st->st_uid);
		errno = EPERM;
		return -1;
	}
	return 0;
}

int out_file_check(const char *path, char *why, size_t whylen)
{
	struct stat st;

	if (!lstat(path, &st))
		return check_stat(&st, why, whylen);
	if (errno == ENOENT)
		return 0;
	return fail(why, whylen, errno, NULL);
}

int out_file_create(const char *path, bool replace, char *why, size_t whylen)
{
	int fd = open(path, CREATE_FLAGS, 0600);
	struct stat st;

	if (fd >= 0)
		return fd;
	if (errno != EEXIST)
		return fail(why, whylen, errno, NULL);
	if (!replace)
		return fail(why, whylen, EEXIST, "already exists");
	if (lstat(path, &st))
		return fail(why, whylen, errno, NULL);
	if (check_stat(&st, why, whylen))
		return -1;
	/* Replaced by a new file rather than truncated: the old one's mode, owner and other
	 * links stay with the old data. Whatever takes the name between the unlink and the
	 * create makes O_EXCL fail: nothing planted there is ever written through. */
	if (unlink(path))
		return fail(why, whylen, errno, NULL);
	fd = open(path, CREATE_FLAGS, 0600);
	if (fd < 0)
		return fail(why, whylen, errno,
			    errno == EEXIST ? "was created again while gpuspy replaced it" : NULL);
	return fd;
}

/* rename(2) without replacing anything; filesystems without RENAME_NOREPLACE get link(2),
 * which never replaces either. */
static int rename_noreplace(const char *tmp, const char *path)
{
	if (!renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL)
		return -1;
	if (link(tmp, path))
		return -1;
	unlink(tmp);
	return 0;
}

int out_file_rename(const char *tmp, const char *path, char *why, size_t whylen)
{
	/* twice at most: a file that appears between the lstat and the rename is checked too */
	for (int attempt = 0; attempt < 2; attempt++) {
		struct stat st;

		if (!lstat(path, &st)) {
			if (check_stat(&st, why, whylen))
				return -1;
			/* rename(2) replaces the name, never what a link planted meanwhile points
			 * to, and in a sticky directory (/tmp) no one else may swap our file */
			if (rename(tmp, path))
				return fail(why, whylen, errno, NULL);
			return 0;
		}
		if (errno != ENOENT)
			return fail(why, whylen, errno, NULL);
		if (!rename_noreplace(tmp, path))
			return 0;
		if (errno != EEXIST)
			return fail(why, whylen, errno, NULL);
	}
	return fail(why, whylen, EEXIST, "was created again while gpuspy wrote it");
}
