// SPDX-License-Identifier: MIT
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/value_parse.h"
#include "loader/record/run_as.h"

static struct passwd *lookup(const char *user)
{
	struct passwd *pw;
	uint64_t uid;

	errno = 0;
	pw = getpwnam(user);
	if (pw || gs_parse_u64(user, 0, UINT32_MAX - 1, &uid))
		return pw;
	return getpwuid((uid_t)uid);
}

/* The groups initgroups(3) would set: the passwd group and every group listing the user. */
static int group_list(const struct passwd *pw, gid_t **groups, int *n)
{
	int count = 0;
	gid_t *list = NULL;

	/* a first call with no room says how many there are; the database can grow between */
	while (getgrouplist(pw->pw_name, pw->pw_gid, list, &count) < 0) {
		gid_t *grown = realloc(list, (size_t)(count + 1) * sizeof(*list));

		if (!grown) {
			free(list);
			return -ENOMEM;
		}
		list = grown;
		count++;
	}
	*groups = list;
	*n = count;
	return 0;
}

int run_as_resolve(const char *user, struct run_as *out)
{
	struct passwd *pw = lookup(user);
	int err;

	memset(out, 0, sizeof(*out));
	if (!pw)
		return -ENOENT;
	out->uid = pw->pw_uid;
	out->gid = pw->pw_gid;
	out->name = strdup(pw->pw_name);
	out->home = strdup(pw->pw_dir);
	err = out->name && out->home ? group_list(pw, &out->groups, &out->ngroups) : -ENOMEM;
	if (err)
		run_as_free(out);
	return err;
}

int run_as_apply(const struct run_as *u)
{
	/* groups and gid first: after setresuid() there is no privilege left to change them */
	if (setgroups((size_t)u->ngroups, u->groups) || setresgid(u->gid, u->gid, u->gid) ||
	    setresuid(u->uid, u->uid, u->uid))
		return errno;
	if (setenv("HOME", u->home, 1) || setenv("USER", u->name, 1) ||
	    setenv("LOGNAME", u->name, 1))
		return errno;
	return 0;
}

void run_as_free(struct run_as *u)
{
	free(u->groups);
	free(u->name);
	free(u->home);
	memset(u, 0, sizeof(*u));
}
