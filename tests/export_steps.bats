#!/usr/bin/env bats
# Training steps in the timelines (gpuspy export, output/export/export_chrome_steps.c): the
# Chrome export's "steps" track, a slice per step, and the Kineto export's ProfilerStep#N
# annotations that Holistic Trace Analysis splits iterations by. Checked against the stall
# workloads' own step boundaries (their STEP lines) and the steps report of the same trace by
# tests/lib/check_export_steps.py; the exports still load as Perfetto and Kineto's tools need
# (tests/lib/check_chrome.py, check_kineto.py): a ProfilerStep#N slice on the loop's thread must
# nest with the thread's own slices.

load helpers
load lib/stalls
bats_require_minimum_version 1.5.0

setup() {
	require_root
	[ -x "$PYTHON" ] || skip "needs $PYTHON"
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

# Records a workload for $STEPS steps into $WORK/KIND.gpuspy, its STEP and TRUTH lines in
# $WORK/KIND.out.
record_workload() { # KIND [ARGS...]
	local kind=$1
	shift
	run "$GPUSPY" record -f -o "$WORK/$kind.gpuspy" -- env LD_LIBRARY_PATH="$FC" BUILD="$BUILD" \
		"$PYTHON" "$SRC/$kind.py" --steps "$STEPS" "$@"
	echo "$output"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" | grep -E '^(STEP|TRUTH) ' > "$WORK/$kind.out"
}

# Both exports and the steps report of $WORK/KIND.gpuspy (with OPTIONS), checked.
check_exports() { # KIND CHECK_EXPORT_STEPS_ARGS... [-- EXPORT OPTIONS...]
	local kind=$1 checks=() opts=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		checks+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift && opts=("$@")
	"$GPUSPY" export "$WORK/$kind.gpuspy" "${opts[@]}" -o "$WORK/$kind.json"
	"$GPUSPY" export "$WORK/$kind.gpuspy" "${opts[@]}" --format kineto -o "$WORK/$kind.kineto.json"
	"$GPUSPY" report "$WORK/$kind.gpuspy" --report steps --format json "${opts[@]}" \
		> "$WORK/$kind.steps.json"
	python3 "$ROOT/tests/lib/check_export_steps.py" --out "$WORK/$kind.out" \
		--report "$WORK/$kind.steps.json" --chrome "$WORK/$kind.json" \
		--kineto "$WORK/$kind.kineto.json" "${checks[@]}"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/$kind.json"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/$kind.kineto.json"
}

@test "export steps: a GPU loop's steps on a steps track and as ProfilerStep#N on its thread" {
	require_steps_lib
	record_workload host_compute
	# each step starts with the loop's event at its anchor line: the slice starts with an event
	# of the main thread in the same export
	check_exports host_compute --found-by "python loop in train (host_compute.py:" \
		--where inside --starts event --kineto-steps gpuspy
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/host_compute.kineto.json"
}

@test "export steps: a CPU-only loop (no CUDA) blocked on a lock" {
	record_workload lock_wait
	check_exports lock_wait --found-by "python loop in train (lock_wait.py:" --where inside \
		--starts event --kineto-steps gpuspy
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/lock_wait.kineto.json" --no-gpu
}

@test "export steps: ProfilerStep#N NVTX ranges make the steps and are not doubled in Kineto's dialect" {
	require_steps_lib
	record_workload host_compute --nvtx
	# the steps are the ranges (same ts and dur), each within 1 ms of the workload's step; the
	# Kineto export keeps the recorded ProfilerStep#N and adds none of gpuspy's
	check_exports host_compute --found-by "nvtx ranges ProfilerStep#*" --where 1000000 \
		--starts nvtx --kineto-steps recorded
	check_exports host_compute --found-by "nvtx ranges Profiler*" --where 1000000 \
		--starts nvtx --kineto-steps recorded -- --steps-by nvtx:Profiler
	# steps found otherwise in a process that has the ranges: still no second ProfilerStep#N
	# (a call of preprocess() starts at its first CPU sample, which is on no thread's track)
	check_exports host_compute --found-by "py:preprocess (each call)" --where starts \
		--starts any --kineto-steps recorded -- --steps-by py:preprocess
}

@test "export steps: no steps, no steps track and no ProfilerStep#N of gpuspy's" {
	record_workload lock_wait
	"$GPUSPY" export "$WORK/lock_wait.gpuspy" --steps-by nvtx:NoSuchRange -o "$WORK/none.json"
	"$GPUSPY" export "$WORK/lock_wait.gpuspy" --steps-by nvtx:NoSuchRange --format kineto \
		-o "$WORK/none.kineto.json"
	jq -e '[.traceEvents[] | select(.cat == "step" or (.ph == "M" and .args.name == "steps"))]
		| length == 0' "$WORK/none.json"
	jq -e '[.traceEvents[] | select(.name | startswith("ProfilerStep#"))] | length == 0' \
		"$WORK/none.kineto.json"
	# the same trace has steps found the preferred way
	"$GPUSPY" export "$WORK/lock_wait.gpuspy" -o "$WORK/some.json"
	jq -e '[.traceEvents[] | select(.cat == "step")] | length == 5' "$WORK/some.json"
}

@test "export: a bad --steps-by value is one line and exit 2, as report's" {
	for bad in op: nvtx: py: ProfilerStep; do
		run "$GPUSPY" export /dev/null --steps-by "$bad" -o "$BATS_TEST_TMPDIR/x.json"
		[ "$status" -eq 2 ]
		[ "$output" = "gpuspy: invalid value '$bad' for --steps-by: expected nvtx:NAME, py:FUNCTION or op:NAME" ]
		[ ! -e "$BATS_TEST_TMPDIR/x.json" ]
	done
}
