#!/usr/bin/env bats
# Attribution in recordings: each traced process's user and cgroup (GS_REC_PROC_INFO), the
# container parsed from it, and `report --group-by process|container|user`, on processes the
# kernel placed in cgroups named as docker and kubelet name theirs and run as another user.
# bats file_tags=bpf,attribution

load helpers
load lib/cgroups

N=3000

setup() {
	require_bpf
	require_cmd jq
	require_cmd setpriv
	cg_setup
	WORK=$(mktemp -d)
	cg_make "$CG_DOCKER"
	cg_make "$CG_POD"
}

teardown() {
	cg_cleanup
	rm -rf "$WORK"
}

# A launched shell starts two workers, each moved into its cgroup before it execs: one as
# root in the docker scope, one as nobody in the pod. Each writes exactly N bytes one at a
# time and lives on a second, so gpuspy reads its attribution at its exec.
record_two_groups() {
	cat > "$WORK/run.sh" <<-EOS
	. "$ROOT/tests/lib/cgroups.bash"
	CG_ROOT=$CG_ROOT
	cg_run "$CG_DOCKER" sh -c 'dd if=/dev/zero of=/dev/null bs=1 count=$N status=none; sleep 1' &
	cg_run "$CG_POD" setpriv --reuid=65534 --regid=65534 --clear-groups \
		sh -c 'sleep 0.3; dd if=/dev/zero of=/dev/null bs=1 count=$((2 * N)) status=none; sleep 1' &
	wait
	EOS
	run "$GPUSPY" record -q -f -o "$WORK/t.gpuspy" -- bash "$WORK/run.sh"
	[ "$status" -eq 0 ]
}

# Sum of a report's JSON rows' calls for one group and syscall.
group_calls() { # GROUP_BY GROUP SYSCALL
	"$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --group-by "$1" --format json |
		jq --arg g "$2" --arg s "$3" '[.[] | select(.group == $g and .name == $s) | .calls] | add // 0'
}

@test "processes report: each process's user and container, from the cgroup it ran in" {
	record_two_groups
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes --format json > "$WORK/p.json"
	cat "$WORK/p.json"
	jq -e '[.[] | select(.name == "dd" and .container == "docker:0123456789ab" and .user == "root")] | length == 1' "$WORK/p.json"
	jq -e --arg cg "/$CG_DOCKER" '[.[] | select(.name == "dd" and .cgroup == $cg)] | length == 1' "$WORK/p.json"
	jq -e '[.[] | select(.name == "dd" and .container == "pod:'"$CG_POD_UID"'/fedcba987654" and .user == "nobody")] | length == 1' "$WORK/p.json"
	# the launching shell stays where gpuspy found it
	jq -e '[.[] | select(.name == "bash")] | all(.container != "docker:0123456789ab")' "$WORK/p.json"
}

@test "report --group-by container and user: each group's writes are its own worker's, exactly" {
	record_two_groups
	# + 1: the worker's own `echo $$ > cgroup.procs` before its exec; a process belongs to
	# the group it was last read in, for its whole life
	[ "$(group_calls container docker:0123456789ab write)" -eq $((N + 1)) ]
	[ "$(group_calls container "pod:$CG_POD_UID/fedcba987654" write)" -eq $((2 * N + 1)) ]
	[ "$(group_calls user nobody write)" -eq $((2 * N + 1)) ]
	# every call is in exactly one group: the groups add up to the whole recording
	total=$("$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --format json | jq '[.[].calls] | add')
	grouped=$("$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --group-by user --format json | jq '[.[].calls] | add')
	[ "$total" -eq "$grouped" ]
	grouped=$("$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --group-by process --format json | jq '[.[].calls] | add')
	[ "$total" -eq "$grouped" ]
}

@test "report --group-by text: one section per group with its header; csv has a Group column" {
	record_two_groups
	run "$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum,processes --group-by user --limit 3
	[ "$status" -eq 0 ]
	[[ "$output" == *"=== user nobody ("*" process"*") ==="* ]]
	[[ "$output" == *"=== user root ("* ]]
	run "$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --group-by container --format csv
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == '"Group","Time (%)"'* ]]
	[[ "$output" == *'"docker:0123456789ab",'* ]]
}

@test "report --group-by: bad values and collapsed are refused with one line" {
	record_two_groups
	run "$GPUSPY" report "$WORK/t.gpuspy" --group-by pod
	[ "$status" -eq 2 ]
	[[ "$output" == "gpuspy: invalid value 'pod' for --group-by: expected process, container or user" ]]
	run "$GPUSPY" report "$WORK/t.gpuspy" --group-by user --format collapsed
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 1 ]
}
