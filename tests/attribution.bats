#!/usr/bin/env bats
# Process attribution (lib/cgroup_attr.c): its table-driven unit test, then live processes
# that the kernel itself placed in cgroup v2 groups named as docker and kubelet name theirs,
# read back through /proc/PID/cgroup by `cgroup_attr_test --pid`; and a process's place in a
# distributed job, read from /proc/PID/environ (loader/proc/proc_env.c).

load helpers
bats_require_minimum_version 1.5.0

ATTR_TEST=$BUILD/unit/cgroup_attr_test
CID=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
POD_UID=8f0e4a1c-3b2d-4c5e-9f6a-7b8c9d0e1f2a
POD_SLICE=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${POD_UID//-/_}.slice

setup() {
	[ -x "$ATTR_TEST" ] || {
		echo "missing $ATTR_TEST: build it (make $ATTR_TEST)" >&2
		return 1
	}
	CG_TOP=
	SLEEPS=()
}

teardown() {
	local pid _
	for pid in "${SLEEPS[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	[ -n "$CG_TOP" ] || return 0
	# leaves before parents; a group whose last process has just died can stay busy briefly
	for _ in $(seq 50); do
		find "$CG_TOP" -depth -type d -exec rmdir {} + 2>/dev/null || true
		[ -d "$CG_TOP" ] || return 0
		sleep 0.1
	done
	echo "teardown: cannot remove $CG_TOP" >&2
	return 1
}

# Where cgroup v2 is mounted: /sys/fs/cgroup/unified on hybrid hosts, /sys/fs/cgroup on v2-only
cgroup2_root() {
	local mounts dir
	mounts=$(awk '$3 == "cgroup2" { print $2 }' /proc/mounts)
	for dir in /sys/fs/cgroup/unified /sys/fs/cgroup; do
		if grep -qxF "$dir" <<<"$mounts"; then
			echo "$dir"
			return 0
		fi
	done
	return 1
}

# A private top group for this test, so a host's own system.slice or kubepods.slice (a real
# systemd or kubelet) is never touched; the layouts are recognised at any depth.
require_cgroup2() {
	local root
	require_root
	root=$(cgroup2_root) || skip "no cgroup2 mounted at /sys/fs/cgroup/unified or /sys/fs/cgroup"
	CG_TOP=$root/gpuspy-attr-test.$$.$BATS_TEST_NUMBER
	if ! mkdir "$CG_TOP" 2>/dev/null; then
		CG_TOP=
		skip "cannot create a cgroup under $root (read-only cgroup mount?)"
	fi
}

# Starts a sleep and moves it into the group REL under CG_TOP (created); sets PID.
sleep_in() { # REL
	mkdir -p "$CG_TOP/$1"
	sleep 1000 3>&- &
	PID=$!
	SLEEPS+=("$PID")
	echo "$PID" >"$CG_TOP/$1/cgroup.procs"
}

# What `cgroup_attr_test --pid` says of a process: every field, the path by its end (a cgroup
# namespace or a mount of a subtree shortens its start).
expect_attr() { # PID PATH_SUFFIX KIND LABEL CONTAINER_ID POD_UID
	local path
	run -0 "$ATTR_TEST" --pid "$1"
	echo "$output"
	path=$(sed -n 's/^path=//p' <<<"$output")
	[[ $path == *"/$2" ]]
	grep -qxF "kind=$3" <<<"$output"
	grep -qxF "label=$4" <<<"$output"
	grep -qxF "container_id=$5" <<<"$output"
	grep -qxF "pod_uid=$6" <<<"$output"
}

@test "attribution: unit test tables" {
	run -0 "$ATTR_TEST"
	echo "$output"
	run -1 "$ATTR_TEST" --pid 2147483647
	[[ $output == *"cannot attribute pid 2147483647: No such file or directory"* ]]
}

@test "attribution: a process's rank variables from /proc/PID/environ (RANK, LOCAL_RANK, WORLD_SIZE only)" {
	# tests/unit/proc_env_test.c: live shells started with chosen environments
	run -0 "$BUILD/unit/proc_env_test"
	echo "$output"
	[ "$output" = "proc_env: all passed" ]
}

@test "attribution: a process in a docker scope (systemd driver) is docker:<id12>" {
	require_cgroup2
	sleep_in "system.slice/docker-$CID.scope"
	expect_attr "$PID" "system.slice/docker-$CID.scope" docker "docker:${CID:0:12}" "$CID" ""
}

@test "attribution: a process in a kubelet pod's containerd scope is pod:<uid>/<id12>" {
	require_cgroup2
	sleep_in "$POD_SLICE/cri-containerd-$CID.scope"
	expect_attr "$PID" "$POD_SLICE/cri-containerd-$CID.scope" kubepods \
		"pod:$POD_UID/${CID:0:12}" "$CID" "$POD_UID"
	# a process of the pod itself, beside its container's group
	sleep_in "$POD_SLICE"
	expect_attr "$PID" "$POD_SLICE" kubepods "pod:$POD_UID" "" "$POD_UID"
}

@test "attribution: docker-compose.service is a systemd service, not a container" {
	require_cgroup2
	sleep_in system.slice/docker-compose.service
	expect_attr "$PID" system.slice/docker-compose.service systemd \
		systemd:docker-compose.service "" ""
}
