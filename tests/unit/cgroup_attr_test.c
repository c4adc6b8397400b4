// SPDX-License-Identifier: MIT
/*
 * Table-driven tests of lib/cgroup_attr.c: how /proc/PID/cgroup texts pick a path and how
 * each runtime's and systemd's layouts classify. Exits 1 on any mismatch, printing each case.
 * `cgroup_attr_test --pid PID` prints the attribution of a live process for tests/attribution.bats.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/cgroup_attr.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define ID1   "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID1S  "0123456789ab"
#define ID2   "9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d"
#define ID2S  "9ec39b91f3d7"
#define UID   "8f0e4a1c-3b2d-4c5e-9f6a-7b8c9d0e1f2a"
#define UID_  "8f0e4a1c_3b2d_4c5e_9f6a_7b8c9d0e1f2a"
#define SUID  "6fc5a9a0d5b8c3e7a0f8b8f2b1d3e4a5" /* a static pod's md5 */
#define BURST "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
#define LONG  "/a123456789/b123456789/c123456789/d123456789/e123456789/f123456789/g123456789"
#define WORDS "a123456789-b123456789-c123456789-d123456789-e123456789-f123456789-g123456789"

struct classify_case {
	const char *path;
	enum cgroup_kind kind;
	const char *label, *container_id, *pod_uid;
};

static const struct classify_case classify_cases[] = {
    {"/", CG_ROOT, "/", "", ""},
    {"", CG_ROOT, "/", "", ""},
    {"//", CG_ROOT, "/", "", ""},
    /* docker: cgroupfs and systemd drivers, nesting */
    {"/docker/" ID1, CG_DOCKER, "docker:" ID1S, ID1, ""},
    {"/docker/" ID1 "/", CG_DOCKER, "docker:" ID1S, ID1, ""},
    {"/docker/" ID1 "/system.slice/nginx.service", CG_DOCKER, "docker:" ID1S, ID1, ""},
    {"/docker/" ID1 "/docker/" ID2, CG_DOCKER, "docker:" ID2S, ID2, ""},
    {"/system.slice/docker-" ID1 ".scope", CG_DOCKER, "docker:" ID1S, ID1, ""},
    {"/system.slice/docker-" ID1 ".scope (deleted)", CG_DOCKER, "docker:" ID1S, ID1, ""},
    /* not containers: ids must be exactly 64 lowercase hex */
    {"/system.slice/docker-compose.service", CG_SYSTEMD_SERVICE, "systemd:docker-compose.service",
     "", ""},
    {"/system.slice/docker.service", CG_SYSTEMD_SERVICE, "systemd:docker.service", "", ""},
    {"/system.slice/docker-0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF.scope",
     CG_SYSTEMD_SCOPE,
     "systemd:docker-0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF.scope", "",
     ""},
    {"/system.slice/docker-123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
     CG_SYSTEMD_SCOPE,
     "systemd:docker-123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope", "",
     ""},
    {"/k8s.io/" ID1, CG_OTHER, "/k8s.io/" ID1, "", ""},
    /* Kubernetes, cgroupfs driver */
    {"/kubepods/burstable/pod" UID "/" ID1, CG_KUBEPODS, "pod:" UID "/" ID1S, ID1, UID},
    {"/kubepods/pod" UID "/" ID1, CG_KUBEPODS, "pod:" UID "/" ID1S, ID1, UID},
    {"/kubepods/besteffort/pod" UID, CG_KUBEPODS, "pod:" UID, "", UID},
    {"/kubepods/burstable/pod" UID "/crio-" ID1, CG_KUBEPODS, "pod:" UID "/" ID1S, ID1, UID},
    {"/kubepods/burstable/pod" UID_ "/" ID1, CG_OTHER, "/kubepods/burstable/pod" UID_ "/" ID1, "",
     ""},
    {"/kubepods/burstable", CG_OTHER, "/kubepods/burstable", "", ""},
    /* Kubernetes, systemd driver, each runtime and QoS class */
    {BURST UID_ ".slice/cri-containerd-" ID1 ".scope", CG_KUBEPODS, "pod:" UID "/" ID1S, ID1, UID},
    {BURST UID_ ".slice/crio-" ID1 ".scope", CG_KUBEPODS, "pod:" UID "/" ID1S, ID1, UID},
    {BURST UID_ ".slice/crio-conmon-" ID1 ".scope", CG_KUBEPODS, "pod:" UID "/conmon:" ID1S, ID1,
     UID},
    {BURST UID_ ".slice", CG_KUBEPODS, "pod:" UID, "", UID},
    {"/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID1 ".scope", CG_KUBEPODS,
     "pod:" UID "/" ID1S, ID1, UID},
    {"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
     ".slice/cri-containerd-" ID1 ".scope",
     CG_KUBEPODS, "pod:" UID "/" ID1S, ID1, UID},
    {BURST SUID ".slice/cri-containerd-" ID1 ".scope", CG_KUBEPODS, "pod:" SUID "/" ID1S, ID1,
     SUID},
    {"/kubepods.slice/kubepods-burstable.slice", CG_OTHER,
     "/kubepods.slice/kubepods-burstable.slice", "", ""},
    /* a kind node: the pod inside the node's docker container wins */
    {"/system.slice/docker-" ID2 ".scope/kubelet.slice/kubelet-kubepods.slice/"
     "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" UID_
     ".slice/cri-containerd-" ID1 ".scope",
     CG_KUBEPODS, "pod:" UID "/" ID1S, ID1, UID},
    /* containerd and cri-o without Kubernetes */
    {"/system.slice/cri-containerd-" ID1 ".scope", CG_CONTAINERD, "containerd:" ID1S, ID1, ""},
    {"/system.slice/crio-" ID1 ".scope", CG_CRIO, "cri-o:" ID1S, ID1, ""},
    {"/system.slice/crio-conmon-" ID1 ".scope", CG_CRIO, "cri-o-conmon:" ID1S, ID1, ""},
    /* podman: rootful, rootless, cgroupfs, conmon */
    {"/machine.slice/libpod-" ID1 ".scope", CG_PODMAN, "podman:" ID1S, ID1, ""},
    {"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID1 ".scope/container",
     CG_PODMAN, "podman:" ID1S, ID1, ""},
    {"/libpod_parent/libpod-" ID1, CG_PODMAN, "podman:" ID1S, ID1, ""},
    {"/machine.slice/libpod-conmon-" ID1 ".scope", CG_PODMAN, "podman-conmon:" ID1S, ID1, ""},
    /* systemd units and logind sessions */
    {"/system.slice/nginx.service", CG_SYSTEMD_SERVICE, "systemd:nginx.service", "", ""},
    {"/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", CG_SYSTEMD_SERVICE,
     "systemd:foo.service", "", ""},
    {"/system.slice/slurmd.service/job_42", CG_SYSTEMD_SERVICE, "systemd:slurmd.service", "", ""},
    {"/../../system.slice/nginx.service", CG_SYSTEMD_SERVICE, "systemd:nginx.service", "", ""},
    {"/user.slice/user-1000.slice/session-3.scope", CG_USER_SESSION, "session:1000/3", "", ""},
    {"/user.slice/user-0.slice/session-c1.scope", CG_USER_SESSION, "session:0/c1", "", ""},
    {"/system.slice/session-3.scope", CG_SYSTEMD_SCOPE, "systemd:session-3.scope", "", ""},
    {"/user.slice/user-1000.slice/user@1000.service/init.scope", CG_SYSTEMD_SCOPE,
     "systemd:init.scope", "", ""},
    {"/init.scope", CG_SYSTEMD_SCOPE, "systemd:init.scope", "", ""},
    {"/system.slice/.service", CG_OTHER, "/system.slice/.service", "", ""},
    /* anything else: the raw path, cut to the label's size */
    {"/process_api/416cd85c3a65f1acfc466a9872fc5be2", CG_OTHER,
     "/process_api/416cd85c3a65f1acfc466a9872fc5be2", "", ""},
    {LONG LONG LONG, CG_OTHER, LONG LONG LONG, "", ""},
    {"/system.slice/" WORDS WORDS WORDS ".service", CG_SYSTEMD_SERVICE,
     "systemd:" WORDS WORDS WORDS ".service", "", ""},
};

struct pick_case {
	const char *text;
	int rc;
	size_t outlen;
	const char *path;
};

/* this machine's hybrid layout: only the memory controller places it */
#define HYBRID_HOST                                                                                \
	"9:name=systemd:/\n8:pids:/\n7:blkio:/\n6:freezer:/\n5:devices:/\n"                        \
	"4:memory:/process_api/416cd85c3a65f1acfc466a9872fc5be2\n3:cpuset:/\n2:cpuacct:/\n"        \
	"1:cpu:/\n0::/\n"

static const struct pick_case pick_cases[] = {
    {HYBRID_HOST, 0, 256, "/process_api/416cd85c3a65f1acfc466a9872fc5be2"},
    {"12:memory:/system.slice/docker-" ID1 ".scope\n1:name=systemd:/system.slice/docker-" ID1
     ".scope\n0::/system.slice/docker-" ID1 ".scope\n",
     0, 256, "/system.slice/docker-" ID1 ".scope"},
    /* v2 at root, so name=systemd before the first other v1 line */
    {"4:memory:/a\n1:name=systemd:/system.slice/b.service\n0::/\n", 0, 256,
     "/system.slice/b.service"},
    {"0::/user.slice/user-1000.slice/session-2.scope\n", 0, 256,
     "/user.slice/user-1000.slice/session-2.scope"},
    {"0::/user.slice/user-1000.slice/session-2.scope", 0, 256,
     "/user.slice/user-1000.slice/session-2.scope"},
    {"9:name=systemd:/\n4:memory:/\n0::/\n", 0, 256, "/"},
    {"4:memory:/a\n3:cpu,cpuacct:/b\n", 0, 256, "/a"},
    {"1:name=systemd:/\n2:cpu,cpuacct:/foo\n", 0, 256, "/foo"},
    {"3:cpu,name=systemd:/sd\n2:memory:/m\n", 0, 256, "/sd"},
    {"0::/a:b/c\n", 0, 256, "/a:b/c"},
    {"0::/system.slice/docker-" ID1 ".scope (deleted)\n", 0, 256,
     "/system.slice/docker-" ID1 ".scope (deleted)"},
    {"garbage\n4:memory:/m\nmore garbage: here\n", 0, 256, "/m"},
    {"0::/system.slice/nginx.service\n", 0, 5, "/sys"},
    {"0::/system.slice/nginx.service\n", 0, 1, ""},
    {"hello\nworld\n", -1, 256, NULL},
    {"", -1, 256, NULL},
    {"\n\n", -1, 256, NULL},
    {"x::/foo\n", -1, 256, NULL},
    {"1::/foo\n", -1, 256, NULL},
    {"0::relative\n", -1, 256, NULL},
    {"0::\n", -1, 256, NULL},
    {"4:memory\n", -1, 256, NULL},
};

/* The expected label of a case: a raw path longer than a label is cut to fit. */
static void label_of(const char *want, char *buf, size_t len)
{
	snprintf(buf, len, "%s", want);
}

static int check_classify(const struct classify_case *c)
{
	struct cgroup_attr a;
	char want_label[sizeof(a.label)];

	memset(&a, 0x5a, sizeof(a)); /* stale bytes must not survive */
	cgroup_classify(c->path, &a);
	label_of(c->label, want_label, sizeof(want_label));
	if (a.kind == c->kind && !strcmp(a.label, want_label) &&
	    !strcmp(a.container_id, c->container_id) && !strcmp(a.pod_uid, c->pod_uid))
		return 0;
	fprintf(stderr,
		"FAIL classify \"%s\"\n  got  kind=%s label=\"%s\" id=\"%s\" pod=\"%s\"\n"
		"  want kind=%s label=\"%s\" id=\"%s\" pod=\"%s\"\n",
		c->path, cgroup_kind_name(a.kind), a.label, a.container_id, a.pod_uid,
		cgroup_kind_name(c->kind), want_label, c->container_id, c->pod_uid);
	return 1;
}

static int check_pick(const struct pick_case *c)
{
	char out[256];
	int rc;

	memset(out, 'X', sizeof(out));
	out[sizeof(out) - 1] = '\0';
	rc = cgroup_pick_path(c->text, out, c->outlen);
	if (rc == c->rc && (rc || !strcmp(out, c->path)))
		return 0;
	fprintf(stderr, "FAIL pick \"%s\" (outlen %zu)\n  got  %d \"%s\"\n  want %d \"%s\"\n",
		c->text, c->outlen, rc, rc ? "" : out, c->rc, c->path ? c->path : "");
	return 1;
}

static int check_names(void)
{
	static const struct {
		enum cgroup_kind k;
		const char *name;
	} names[] = {
	    {CG_ROOT, "root"},
	    {CG_DOCKER, "docker"},
	    {CG_CONTAINERD, "containerd"},
	    {CG_CRIO, "cri-o"},
	    {CG_PODMAN, "podman"},
	    {CG_KUBEPODS, "kubepods"},
	    {CG_SYSTEMD_SERVICE, "systemd"},
	    {CG_SYSTEMD_SCOPE, "systemd"},
	    {CG_USER_SESSION, "session"},
	    {CG_OTHER, "other"},
	};
	int failed = 0;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (strcmp(cgroup_kind_name(names[i].k), names[i].name)) {
			fprintf(stderr, "FAIL kind name %d: \"%s\", want \"%s\"\n", names[i].k,
				cgroup_kind_name(names[i].k), names[i].name);
			failed++;
		}
	}
	return failed;
}

/* The live paths: ourselves (whatever our cgroup), a pid that cannot exist, pid 0. */
static int check_pids(void)
{
	struct cgroup_attr a;
	char path[4096] = "";
	int failed = 0, rc;

	rc = cgroup_attr_of_pid(getpid(), path, sizeof(path), &a);
	if (rc || path[0] != '/') {
		fprintf(stderr, "FAIL of_pid self: %d \"%s\"\n", rc, path);
		failed++;
	}
	rc = cgroup_attr_of_pid(INT_MAX, path, sizeof(path), &a);
	if (rc != -ENOENT) {
		fprintf(stderr, "FAIL of_pid INT_MAX: %d, want %d\n", rc, -ENOENT);
		failed++;
	}
	rc = cgroup_attr_of_pid(0, path, sizeof(path), &a);
	if (rc != -EINVAL) {
		fprintf(stderr, "FAIL of_pid 0: %d, want %d\n", rc, -EINVAL);
		failed++;
	}
	return failed;
}

static int run_tables(void)
{
	size_t n = ARRAY_SIZE(classify_cases) + ARRAY_SIZE(pick_cases);
	int failed = 0;

	for (size_t i = 0; i < ARRAY_SIZE(classify_cases); i++)
		failed += check_classify(&classify_cases[i]);
	for (size_t i = 0; i < ARRAY_SIZE(pick_cases); i++)
		failed += check_pick(&pick_cases[i]);
	failed += check_names();
	failed += check_pids();
	printf("cgroup_attr: %zu table cases, %d failed\n", n, failed);
	return failed ? 1 : 0;
}

static int print_pid(const char *arg)
{
	struct cgroup_attr a;
	char path[4096], *end;
	long pid;
	int rc;

	errno = 0;
	pid = strtol(arg, &end, 10);
	if (errno || end == arg || *end || pid <= 0 || pid > INT_MAX) {
		fprintf(stderr, "cgroup_attr_test: invalid pid '%s'\n", arg);
		return 2;
	}
	rc = cgroup_attr_of_pid((int)pid, path, sizeof(path), &a);
	if (rc) {
		fprintf(stderr, "cgroup_attr_test: cannot attribute pid %ld: %s\n", pid,
			strerror(-rc));
		return 1;
	}
	printf("path=%s\nkind=%s\nlabel=%s\ncontainer_id=%s\npod_uid=%s\n", path,
	       cgroup_kind_name(a.kind), a.label, a.container_id, a.pod_uid);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--pid"))
		return print_pid(argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: cgroup_attr_test [--pid PID]\n");
		return 2;
	}
	return run_tables();
}
