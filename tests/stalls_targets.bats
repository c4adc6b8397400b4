#!/usr/bin/env bats
# The stall workloads (tests/targets/stalls, README.md there): training loops whose dominant
# stall, its place in the source and the steps' boundaries are known, for testing gpuspy's step
# detection and stall ranking. Here each one only has to run to its end (the GPU ones on the
# simulated GPU), print a well-formed TRUTH line for the number of steps asked, and have really
# produced its stall as it measured it itself (tests/lib/check_stall_truth.py). Nothing is
# traced: no root needed.
# bats file_tags=stalls

load helpers
load lib/stalls
bats_require_minimum_version 1.5.0

setup() {
	[ -x "$PYTHON" ] || skip "needs $PYTHON"
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

# Runs a workload for $STEPS steps; its stdout goes to $WORK/KIND.out, its stderr to
# $WORK/KIND.err.
run_workload() { # KIND [ARGS...]
	local kind=$1
	shift
	env LD_LIBRARY_PATH="$FC" BUILD="$BUILD" "$PYTHON" "$SRC/$kind.py" --steps "$STEPS" "$@" \
		> "$WORK/$kind.out" 2> "$WORK/$kind.err" || {
		cat "$WORK/$kind.out" "$WORK/$kind.err"
		return 1
	}
}

# Runs a workload and checks its output.
check_workload() { # KIND [ARGS...]
	run_workload "$@"
	python3 "$ROOT/tests/lib/check_stall_truth.py" "$WORK/$1.out" "$1" "$STEPS"
}

@test "input_wait: a DataLoader's workers block in read() on named pipes, the main thread waits" {
	"$PYTHON" -c 'import torch' 2> /dev/null || skip "needs python3-torch for $PYTHON"
	check_workload input_wait
	grep -q '"what": "read() on /.*/shard-NN (named pipes)"' "$WORK/input_wait.out"
}

@test "io_wait: O_DIRECT reads of a file put the loop in D state" {
	# O_DIRECT needs a block device: the temporary directory must not be on tmpfs
	if ! run_workload io_wait --dir "$WORK"; then
		grep -q 'FAIL O_DIRECT open' "$WORK/io_wait.err" && skip "no O_DIRECT in $WORK (tmpfs?)"
		false
	fi
	python3 "$ROOT/tests/lib/check_stall_truth.py" "$WORK/io_wait.out" io_wait "$STEPS"
}

@test "cpu_contention: the loop shares its CPU with busy processes" {
	check_workload cpu_contention
}

@test "lock_wait: the loop blocks on a lock another thread holds" {
	check_workload lock_wait
}

@test "host_compute: the GPU idles while the host computes in Python" {
	require_steps_lib
	check_workload host_compute
}

@test "host_compute --nvtx: one ProfilerStep#N range per step" {
	require_steps_lib
	require_cmd jq
	check_workload host_compute --nvtx
	jq -e '.nvtx_ranges == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2",
		"ProfilerStep#3", "ProfilerStep#4"]' < <(sed -n 's/^TRUTH //p' "$WORK/host_compute.out")
}

@test "sync_wait: every step blocks in a device-to-host copy" {
	require_steps_lib
	check_workload sync_wait
}

@test "launch_bound: many tiny kernels launched one by one" {
	require_steps_lib
	check_workload launch_bound
}

@test "gpu_bound: the GPU runs back to back" {
	require_steps_lib
	check_workload gpu_bound
}

@test "the TRUTH check rejects a wrong step count or kind, and the default is 12 steps" {
	"$PYTHON" "$SRC/cpu_contention.py" --competitors 0 > "$WORK/default.out"
	python3 "$ROOT/tests/lib/check_stall_truth.py" "$WORK/default.out" cpu_contention 12 \
		--min-share 0
	run python3 "$ROOT/tests/lib/check_stall_truth.py" "$WORK/default.out" cpu_contention 11 \
		--min-share 0
	[ "$status" -eq 1 ]
	[[ "$output" == *"FAIL steps 12, want 11"* ]]
	run python3 "$ROOT/tests/lib/check_stall_truth.py" "$WORK/default.out" lock_wait 12 \
		--min-share 0
	[ "$status" -eq 1 ]
	[[ "$output" == *"FAIL kind"* ]]
	# a stall that took less of the steps than required
	run python3 "$ROOT/tests/lib/check_stall_truth.py" "$WORK/default.out" cpu_contention 12 \
		--min-share 1.01
	[ "$status" -eq 1 ]
	[[ "$output" == *"did not produce its stall"* ]]
}
