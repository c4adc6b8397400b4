/* SPDX-License-Identifier: MIT */
/*
 * Which container, pod or service a process runs in, from its cgroup path alone: the layouts
 * of docker, containerd, cri-o and podman (systemd and cgroupfs drivers), kubelet's pods, and
 * systemd's units and login sessions. Pure string work; no BPF, no runtime's API, so it works
 * on a node whose runtime sockets we cannot (or should not) talk to.
 */
#ifndef GPUSPY_CGROUP_ATTR_H
#define GPUSPY_CGROUP_ATTR_H

#include <stddef.h>

enum cgroup_kind {
	CG_ROOT,
	CG_DOCKER,
	CG_CONTAINERD,
	CG_CRIO,
	CG_PODMAN,
	CG_KUBEPODS,
	CG_SYSTEMD_SERVICE,
	CG_SYSTEMD_SCOPE,
	CG_USER_SESSION,
	CG_OTHER,
};

struct cgroup_attr {
	enum cgroup_kind kind;
	char container_id[65]; /* full hex id when the layout has one, else "" */
	char pod_uid[37];      /* Kubernetes pod UID (dashes restored), else "" */
	char label[160];       /* the group's display name: "docker:0123456789ab", ... */
};

/*
 * From the text of /proc/PID/cgroup (cgroup v1, v2 or hybrid, as read): the one path that says
 * most about where the process runs. Prefer the v2 line ("0::/path") when it is not "/"; else
 * the v1 "name=systemd" line when not "/"; else the first other v1 line that is not "/". "/"
 * when all are root. Lines that are not "ID:CONTROLLERS:/PATH" are skipped. Writes the path to
 * out (truncated to outlen, NUL-terminated); returns 0, or -1 when the text has no valid line.
 */
int cgroup_pick_path(const char *proc_cgroup_text, char *out, size_t outlen);
/* Classifies a cgroup path; the innermost container in it wins over what encloses it. */
void cgroup_classify(const char *path, struct cgroup_attr *out);
/*
 * Reads /proc/PID/cgroup and classifies: 0, or -errno (-ENOENT/-ESRCH: the process is gone;
 * -EINVAL: no valid line). path (may be NULL) gets the picked path, truncated to pathlen.
 * Neither path nor out is written on failure.
 */
int cgroup_attr_of_pid(int pid, char *path, size_t pathlen, struct cgroup_attr *out);
/* "docker", "containerd", "cri-o", "podman", "kubepods", "systemd", "systemd", "session",
 * "other", "root" */
const char *cgroup_kind_name(enum cgroup_kind k);

#endif /* GPUSPY_CGROUP_ATTR_H */
