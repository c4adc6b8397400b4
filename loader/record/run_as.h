/* SPDX-License-Identifier: MIT */
/*
 * `record --user USER -- CMD`: the launched command runs as USER while gpuspy keeps root for
 * BPF. The user is looked up before anything starts (a bad name is a usage error); the
 * launched child switches to it just before exec: uid, gid and supplementary groups as
 * initgroups(3) gives them (real, effective and saved ids, so nothing can switch back), and
 * HOME, USER and LOGNAME as `sudo -u` sets them. The rest of the environment passes as it is:
 * it is the workload's configuration (CUDA_VISIBLE_DEVICES, PYTHONPATH, gpuspy's bridge).
 */
#ifndef GPUSPY_RUN_AS_H
#define GPUSPY_RUN_AS_H

#include <sys/types.h>

struct run_as {
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* supplementary groups, the primary one included */
	int ngroups;
	char *name, *home;
};

/* USER as a name, or else as a number, from the passwd database (a uid needs an entry: it
 * gives the group and home). 0, -ENOENT for no such user, or -ENOMEM. */
int run_as_resolve(const char *user, struct run_as *out);
/* In the launched child before exec: the groups, gid, uid and the three variables. 0 or an
 * errno (EPERM without CAP_SETUID/CAP_SETGID). */
int run_as_apply(const struct run_as *u);
void run_as_free(struct run_as *u);

#endif /* GPUSPY_RUN_AS_H */
