// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/cgroup_attr.h"

#define ARRAY_SIZE(a)	 (sizeof(a) / sizeof((a)[0]))
#define CONTAINER_ID_LEN 64
#define SHORT_ID_LEN	 12 /* what `docker ps` and `crictl ps` show */
#define POD_UUID_LEN	 36
#define POD_HASH_LEN	 32 /* a static pod's UID: kubelet's md5 of its manifest, in hex */
/* cgroup v2 appends this to the path of a process whose cgroup was removed (a zombie's) */
#define DELETED_SUFFIX " (deleted)"

/* A piece of a string: a view, not NUL-terminated. */
struct comp {
	const char *s;
	size_t len;
};

/* A runtime's name for a container's cgroup: prefix, 64-hex id, optional ".scope". */
struct runtime {
	const char *prefix;
	enum cgroup_kind kind;
	const char *name; /* the label's prefix */
	bool monitor;	  /* conmon: the runtime's monitor of the container, not the container */
};

static const struct runtime runtimes[] = {
    {"docker-", CG_DOCKER, "docker", false},
    {"cri-containerd-", CG_CONTAINERD, "containerd", false},
    {"crio-conmon-", CG_CRIO, "cri-o-conmon", true},
    {"crio-", CG_CRIO, "cri-o", false},
    {"libpod-conmon-", CG_PODMAN, "podman-conmon", true},
    {"libpod-", CG_PODMAN, "podman", false},
};
#define DOCKER (&runtimes[0])

/* What a walk down a path found; a deeper find replaces a shallower one. */
struct scan {
	struct comp prev;	       /* the component before the current one */
	bool kubepods;		       /* under a kubelet root or QoS cgroup: pods may follow */
	struct comp pod;	       /* the pod's uid as written (len 0: none) */
	struct comp ctr;	       /* the container's 64-hex id (len 0: none) */
	const struct runtime *rt;      /* its runtime; NULL: not in the name (kubelet cgroupfs) */
	struct comp unit, unit_parent; /* the deepest systemd unit and the group holding it */
};

static bool comp_is(struct comp c, const char *s)
{
	return c.len == strlen(s) && !memcmp(c.s, s, c.len);
}

static bool comp_starts(struct comp c, const char *prefix)
{
	size_t n = strlen(prefix);

	return c.len >= n && !memcmp(c.s, prefix, n);
}

static bool comp_ends(struct comp c, const char *suffix)
{
	size_t n = strlen(suffix);

	return c.len >= n && !memcmp(c.s + c.len - n, suffix, n);
}

static bool comp_contains(struct comp c, const char *needle)
{
	return memmem(c.s, c.len, needle, strlen(needle)) != NULL;
}

static struct comp comp_mid(struct comp c, size_t skip_front, size_t skip_back)
{
	return (struct comp){c.s + skip_front, c.len - skip_front - skip_back};
}

/* Lowercase only: runtimes write ids lowercase, and being strict keeps names that merely look
 * hexadecimal from being taken for ids. */
static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool is_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

static bool is_alnum(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return false;
	return n > 0;
}

/* A pod UID as kubelet writes it into a cgroup name: a UUID with `sep` for its dashes, or a
 * static pod's 32-hex hash (kube-apiserver, etcd: pods kubelet reads from manifest files). */
static bool is_pod_uid(struct comp c, char sep)
{
	if (c.len == POD_HASH_LEN)
		return is_hex(c.s, c.len);
	if (c.len != POD_UUID_LEN)
		return false;
	for (size_t i = 0; i < c.len; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? c.s[i] != sep : !is_hex(c.s + i, 1))
			return false;
	}
	return true;
}

/*
 * kubelet's pod cgroup: "pod<uid>" below "kubepods" (cgroupfs driver), or
 * "kubepods[-<qos>]-pod<uid>.slice" (systemd driver, which writes the uid's dashes as '_'
 * because '-' is its slice hierarchy separator; kind's nodes prefix "kubelet-").
 */
static bool pod_comp(struct comp c, bool kubepods, struct comp *uid)
{
	static const size_t lens[] = {POD_UUID_LEN, POD_HASH_LEN};
	struct comp name;

	if (kubepods && comp_starts(c, "pod") && is_pod_uid(comp_mid(c, 3, 0), '-')) {
		*uid = comp_mid(c, 3, 0);
		return true;
	}
	if (!comp_contains(c, "kubepods") || !comp_ends(c, ".slice"))
		return false;
	name = comp_mid(c, 0, strlen(".slice"));
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		struct comp tail;

		if (name.len < lens[i] + 4)
			continue;
		tail = comp_mid(name, name.len - lens[i] - 4, 0);
		if (comp_starts(tail, "-pod") && is_pod_uid(comp_mid(tail, 4, 0), '_')) {
			*uid = comp_mid(tail, 4, 0);
			return true;
		}
	}
	return false;
}

/* A container's cgroup: "<runtime prefix><64 hex>[.scope]" anywhere, or a bare 64-hex id where
 * a layout puts one: docker's cgroupfs "/docker/<id>", kubelet's cgroupfs ".../pod<uid>/<id>".
 * A bare id elsewhere ("/<containerd namespace>/<id>") could be anyone's, so it is not taken. */
static bool container_comp(const struct scan *sc, struct comp c, struct comp *id,
			   const struct runtime **rt)
{
	for (size_t i = 0; i < ARRAY_SIZE(runtimes); i++) {
		struct comp rest;

		if (!comp_starts(c, runtimes[i].prefix))
			continue;
		rest = comp_mid(c, strlen(runtimes[i].prefix), 0);
		if (comp_ends(rest, ".scope"))
			rest = comp_mid(rest, 0, strlen(".scope"));
		if (rest.len == CONTAINER_ID_LEN && is_hex(rest.s, rest.len)) {
			*id = rest;
			*rt = &runtimes[i];
			return true;
		}
	}
	if (c.len != CONTAINER_ID_LEN || !is_hex(c.s, c.len))
		return false;
	if (comp_is(sc->prev, "docker"))
		*rt = DOCKER;
	else if (sc->pod.len && !sc->ctr.len)
		*rt = NULL;
	else
		return false;
	*id = c;
	return true;
}

static bool unit_comp(struct comp c)
{
	return (comp_ends(c, ".service") && c.len > strlen(".service")) ||
	       (comp_ends(c, ".scope") && c.len > strlen(".scope"));
}

static void scan_path(const char *path, size_t len, struct scan *sc)
{
	const char *p = path, *end = path + len;

	memset(sc, 0, sizeof(*sc));
	while (p < end) {
		const char *slash;
		const struct runtime *rt;
		struct comp c, id, uid;

		if (*p == '/') {
			p++;
			continue;
		}
		slash = memchr(p, '/', (size_t)(end - p));
		c = (struct comp){p, (size_t)((slash ? slash : end) - p)};
		p += c.len;
		if (pod_comp(c, sc->kubepods, &uid)) {
			sc->pod = uid;
			sc->ctr.len = 0; /* a container outside the pod holds it (kind's nodes) */
		} else if (container_comp(sc, c, &id, &rt)) {
			sc->ctr = id;
			sc->rt = rt;
		} else if (unit_comp(c)) {
			sc->unit = c;
			sc->unit_parent = sc->prev;
		}
		if (comp_contains(c, "kubepods"))
			sc->kubepods = true;
		sc->prev = c;
	}
}

/* Labels are for display: a cut one still names its group, so truncate rather than fail. */
static void label_append(struct cgroup_attr *a, struct comp c)
{
	size_t used = strlen(a->label), room = sizeof(a->label) - 1 - used;
	size_t n = c.len < room ? c.len : room;

	memcpy(a->label + used, c.s, n);
	a->label[used + n] = '\0';
}

static void label_add(struct cgroup_attr *a, const char *s)
{
	label_append(a, (struct comp){s, strlen(s)});
}

static void set_container_id(struct cgroup_attr *a, struct comp id)
{
	memcpy(a->container_id, id.s, CONTAINER_ID_LEN);
	a->container_id[CONTAINER_ID_LEN] = '\0';
}

static void classify_pod(const struct scan *sc, struct cgroup_attr *a)
{
	a->kind = CG_KUBEPODS;
	for (size_t i = 0; i < sc->pod.len; i++)
		a->pod_uid[i] = sc->pod.s[i] == '_' ? '-' : sc->pod.s[i];
	a->pod_uid[sc->pod.len] = '\0';
	label_add(a, "pod:");
	label_add(a, a->pod_uid);
	if (!sc->ctr.len)
		return;
	set_container_id(a, sc->ctr);
	label_add(a, sc->rt && sc->rt->monitor ? "/conmon:" : "/");
	label_append(a, (struct comp){a->container_id, SHORT_ID_LEN});
}

static void classify_container(const struct scan *sc, struct cgroup_attr *a)
{
	a->kind = sc->rt->kind;
	set_container_id(a, sc->ctr);
	label_add(a, sc->rt->name);
	label_add(a, ":");
	label_append(a, (struct comp){a->container_id, SHORT_ID_LEN});
}

static void classify_unit(const struct scan *sc, struct cgroup_attr *a)
{
	struct comp session = sc->unit, user = sc->unit_parent;

	/* logind's "user-UID.slice/session-ID.scope"; IDs are numbers, or "c1"-style for
	 * sessions of display managers. Once prefix and suffix match, the middle's length cannot
	 * underflow: the suffixes start with '.', which no prefix holds. */
	if (comp_starts(session, "session-") && comp_ends(session, ".scope") &&
	    is_alnum(session.s + 8, session.len - 8 - 6) && comp_starts(user, "user-") &&
	    comp_ends(user, ".slice") && is_digits(user.s + 5, user.len - 5 - 6)) {
		a->kind = CG_USER_SESSION;
		label_add(a, "session:");
		label_append(a, comp_mid(user, 5, 6));
		label_add(a, "/");
		label_append(a, comp_mid(session, 8, 6));
		return;
	}
	a->kind = comp_ends(sc->unit, ".service") ? CG_SYSTEMD_SERVICE : CG_SYSTEMD_SCOPE;
	label_add(a, "systemd:");
	label_append(a, sc->unit);
}

void cgroup_classify(const char *path, struct cgroup_attr *out)
{
	struct comp whole = {path, strlen(path)};
	struct scan sc;

	memset(out, 0, sizeof(*out));
	if (comp_ends(whole, DELETED_SUFFIX))
		whole = comp_mid(whole, 0, strlen(DELETED_SUFFIX));
	scan_path(whole.s, whole.len, &sc);
	if (sc.pod.len) {
		classify_pod(&sc, out);
	} else if (sc.ctr.len) {
		classify_container(&sc, out);
	} else if (sc.unit.len) {
		classify_unit(&sc, out);
	} else if (!sc.prev.len) {
		out->kind = CG_ROOT;
		label_add(out, "/");
	} else {
		out->kind = CG_OTHER;
		label_append(out, whole);
	}
}

/* One line "ID:CONTROLLERS:PATH": v1 lists its controllers (or "name=X" for a named
 * hierarchy), v2 is always "0::". The path may itself hold ':', so split at the first two. */
static bool parse_line(struct comp line, struct comp *ctrl, struct comp *path)
{
	const char *end = line.s + line.len;
	const char *c1 = memchr(line.s, ':', line.len), *c2;

	if (!c1 || !is_digits(line.s, (size_t)(c1 - line.s)))
		return false;
	c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
	if (!c2)
		return false;
	*ctrl = (struct comp){c1 + 1, (size_t)(c2 - c1 - 1)};
	*path = (struct comp){c2 + 1, (size_t)(end - c2 - 1)};
	if (!path->len || path->s[0] != '/')
		return false;
	return ctrl->len || (c1 - line.s == 1 && line.s[0] == '0');
}

static bool has_controller(struct comp list, const char *name)
{
	const char *p = list.s, *end = list.s + list.len;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		struct comp c = {p, (size_t)((comma ? comma : end) - p)};

		if (comp_is(c, name))
			return true;
		p += c.len + 1;
	}
	return false;
}

/* Higher is better: on hybrid hosts v2 and name=systemd agree when systemd manages both, but
 * a runtime may use only v1 controllers (then only e.g. the memory line tells). */
enum { RANK_ROOT, RANK_V1, RANK_SYSTEMD, RANK_V2 };

static int line_rank(struct comp ctrl, struct comp path)
{
	if (comp_is(path, "/"))
		return RANK_ROOT;
	if (!ctrl.len)
		return RANK_V2;
	return has_controller(ctrl, "name=systemd") ? RANK_SYSTEMD : RANK_V1;
}

static void copy_trunc(char *out, size_t outlen, struct comp c)
{
	size_t n;

	if (!outlen)
		return;
	n = c.len < outlen - 1 ? c.len : outlen - 1;
	memcpy(out, c.s, n);
	out[n] = '\0';
}

int cgroup_pick_path(const char *proc_cgroup_text, char *out, size_t outlen)
{
	const char *p = proc_cgroup_text;
	struct comp best = {NULL, 0};
	int best_rank = -1;

	while (*p) {
		const char *nl = strchrnul(p, '\n');
		struct comp ctrl, path;

		/* strictly better only: of equal lines, the first wins */
		if (parse_line((struct comp){p, (size_t)(nl - p)}, &ctrl, &path) &&
		    line_rank(ctrl, path) > best_rank) {
			best_rank = line_rank(ctrl, path);
			best = path;
		}
		p = *nl ? nl + 1 : nl;
	}
	if (best_rank < 0)
		return -1;
	copy_trunc(out, outlen, best);
	return 0;
}

/* The whole of /proc/PID/cgroup, NUL-terminated: stat gives no size for /proc files. */
static int read_cgroup_text(int pid, char **text, size_t *len)
{
	char name[32];
	char *buf = NULL, *grown;
	size_t n = 0, cap = 0;
	ssize_t got;
	int fd, err = 0;

	snprintf(name, sizeof(name), "/proc/%d/cgroup", pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (n + 1 >= cap) {
			cap = cap ? cap * 2 : 4096;
			grown = realloc(buf, cap);
			if (!grown) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = grown;
		}
		got = read(fd, buf + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = -errno;
			goto cleanup;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return err;
}

int cgroup_attr_of_pid(int pid, char *path, size_t pathlen, struct cgroup_attr *out)
{
	char *text = NULL, *picked = NULL;
	size_t len = 0;
	int err;

	if (pid <= 0)
		return -EINVAL;
	err = read_cgroup_text(pid, &text, &len);
	if (err)
		goto cleanup;
	/* the picked path is a piece of the text, so it fits in the text's size */
	picked = malloc(len + 1);
	if (!picked) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (cgroup_pick_path(text, picked, len + 1)) {
		err = -EINVAL;
		goto cleanup;
	}
	cgroup_classify(picked, out);
	if (path)
		copy_trunc(path, pathlen, (struct comp){picked, strlen(picked)});
cleanup:
	free(picked);
	free(text);
	return err;
}

const char *cgroup_kind_name(enum cgroup_kind k)
{
	switch (k) {
	case CG_ROOT:
		return "root";
	case CG_DOCKER:
		return "docker";
	case CG_CONTAINERD:
		return "containerd";
	case CG_CRIO:
		return "cri-o";
	case CG_PODMAN:
		return "podman";
	case CG_KUBEPODS:
		return "kubepods";
	case CG_SYSTEMD_SERVICE:
	case CG_SYSTEMD_SCOPE:
		return "systemd";
	case CG_USER_SESSION:
		return "session";
	case CG_OTHER:
		break;
	}
	return "other";
}
