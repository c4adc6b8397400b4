# cgroup v2 groups named as container runtimes name theirs, for attribution tests: processes
# the kernel really placed there, read back by gpuspy through /proc/PID/cgroup.
# Functions: cg_setup (sets CG_ROOT, or skips), cg_make REL (creates, records for cleanup),
# cg_run REL CMD... (runs CMD moved into REL before it execs), cg_cleanup.
CG_CID=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
CG_CID2=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
CG_POD_UID=8f0e4a1c-3b2d-4c5e-9f6a-7b8c9d0e1f2a
CG_DOCKER=system.slice/docker-$CG_CID.scope
CG_POD=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${CG_POD_UID//-/_}.slice/cri-containerd-$CG_CID2.scope
CG_MADE=()

cg_setup() {
	CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$CG_ROOT" ] && [ -w "$CG_ROOT" ] || skip "needs a writable cgroup v2 mount"
}

cg_make() { # REL
	local rel=$1 path=$CG_ROOT
	local part
	IFS=/ read -ra parts <<<"$rel"
	for part in "${parts[@]}"; do
		path=$path/$part
		if [ ! -d "$path" ]; then
			mkdir "$path"
			CG_MADE+=("$path")
		fi
	done
}

# Runs CMD inside REL: the shell moves itself there, then execs CMD; run it in the background
# (cg_run ... &) and $! is the pid CMD will have.
cg_run() { # REL CMD...
	local rel=$1
	shift
	exec sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG_ROOT/$rel" "$@"
}

cg_cleanup() {
	local i
	# innermost first; a group whose last process just died may be busy for a moment
	for ((i = ${#CG_MADE[@]} - 1; i >= 0; i--)); do
		rmdir "${CG_MADE[$i]}" 2>/dev/null || { sleep 0.2; rmdir "${CG_MADE[$i]}" 2>/dev/null; } || true
	done
	CG_MADE=()
}
