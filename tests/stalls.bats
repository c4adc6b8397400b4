#!/usr/bin/env bats
# Why each step is slow (gpuspy report --report stalls, steps, summary; output/analysis/):
# every stall workload of tests/targets/stalls recorded by gpuspy, and the answer checked
# against the workload's own TRUTH line (tests/lib/check_stalls.py): the top finding's kind,
# place (where), call or file (what) and, where another thread or process caused it, that
# cause; the steps' breakdown; the summary's first finding. The GPU ones run on the simulated
# GPU, input_wait on a real DataLoader, io_wait on real disk reads with O_DIRECT.

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

# The stalls, steps and summary reports of $WORK/KIND.gpuspy as JSON, checked.
check_answer() { # KIND
	local kind=$1 r
	for r in stalls steps summary; do
		"$GPUSPY" report "$WORK/$kind.gpuspy" --report $r --format json > "$WORK/$kind.$r.json"
	done
	"$GPUSPY" report "$WORK/$kind.gpuspy" --report stalls --limit 4
	python3 "$ROOT/tests/lib/check_stalls.py" "$WORK/$kind.out" "$WORK/$kind.stalls.json" \
		"$WORK/$kind.steps.json" "$WORK/$kind.summary.json"
}

@test "stalls: a DataLoader starved by its workers' reads: input_wait, caused by read() in the workers" {
	"$PYTHON" -c 'import torch' 2> /dev/null || skip "needs python3-torch for $PYTHON"
	record_workload input_wait
	check_answer input_wait
}

@test "stalls: reads from disk with the page cache bypassed: io_wait on the file read" {
	dir=$(mktemp -d /var/tmp/gpuspy-io.XXXXXX) # a block device: O_DIRECT fails on tmpfs
	record_workload io_wait --dir "$dir"
	rmdir "$dir"
	check_answer io_wait
}

@test "stalls: Python preprocessing while the GPU idles: host_compute in the sampled function" {
	require_steps_lib
	record_workload host_compute
	check_answer host_compute
}

@test "gpu_idle: a gap is what the launching thread did in it: on CPU in the sampled function" {
	require_steps_lib
	record_workload host_compute
	truth=$(sed -n 's/^TRUTH //p' "$WORK/host_compute.out")
	tid=$(jq .main_tid <<< "$truth")
	fn=$(jq -r .where.function <<< "$truth")
	# stderr apart: a loss counted while recording is warned about there
	run --separate-stderr "$GPUSPY" report "$WORK/host_compute.gpuspy" --report gpu_idle \
		--format json --limit 3
	[ "$status" -eq 0 ]
	echo "$output"
	# each of the longest gaps (one a step: the preprocessing) is the loop thread computing in
	# preprocess(), most of it
	jq -e --arg t "thread $tid " --arg f "host_compute on CPU at $fn (host_compute.py:" \
		'length == 3 and all(.[]; (.host | startswith($t)) and (.host | contains($f)))' <<< "$output"
}

@test "stalls: a synchronising copy every step: sync_wait on cudaMemcpy" {
	require_steps_lib
	record_workload sync_wait
	check_answer sync_wait
}

@test "stalls: many tiny kernels: launch_bound at the launch line" {
	require_steps_lib
	record_workload launch_bound --kernels 100
	check_answer launch_bound
}

@test "stalls: a GPU kept busy back to back: gpu_bound" {
	require_steps_lib
	record_workload gpu_bound
	check_answer gpu_bound
}

@test "stalls: a lock held by another thread: lock_wait, caused by the holder's sleep" {
	record_workload lock_wait
	check_answer lock_wait
}

@test "stalls: busy processes pinned to the loop's CPU: cpu_contention, naming them" {
	record_workload cpu_contention
	check_answer cpu_contention
}

# A large trace is measured a slice of time at a time (2 Mi spans held at most); the answer must
# not depend on where the slices fall. GPUSPY_SPAN_BUDGET=1 cuts at nearly every span.
@test "stalls, steps, summary: the same answer measured in one slice or in many" {
	require_steps_lib
	record_workload sync_wait
	record_workload lock_wait
	for kind in sync_wait lock_wait; do
		for r in stalls steps summary; do
			"$GPUSPY" report "$WORK/$kind.gpuspy" --report $r --format json > "$WORK/one.json"
			GPUSPY_SPAN_BUDGET=1 "$GPUSPY" report "$WORK/$kind.gpuspy" --report $r \
				--format json > "$WORK/many.json"
			jq -e 'length > 0' "$WORK/one.json"
			diff "$WORK/one.json" "$WORK/many.json"
		done
	done
	# and it was cut: the trace is read once a slice (strace counts the opens)
	require_cmd strace
	opens=$(GPUSPY_SPAN_BUDGET=1 strace -f -e trace=openat "$GPUSPY" report \
		"$WORK/lock_wait.gpuspy" --report steps --format json 2>&1 > /dev/null |
		grep -c 'lock_wait.gpuspy"')
	[ "$opens" -gt 10 ]
}

@test "summary: opens the default report, in text, CSV and JSON" {
	record_workload lock_wait
	run "$GPUSPY" report "$WORK/lock_wait.gpuspy"
	[ "$status" -eq 0 ]
	# the summary comes first, before every table
	first=$(printf '%s\n' "$output" | grep -m1 -n '^\*\* ' | cut -d: -f2-)
	[[ "$first" == "** summary:"* ]]
	[[ "$output" == *"finding 1  lock_wait"* ]]
	[[ "$output" == *"advice: "* ]]
	run --separate-stderr "$GPUSPY" report "$WORK/lock_wait.gpuspy" --report summary --format csv
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = '"Topic","Answer","Evidence","Advice"' ]
	printf '%s\n' "$output" | grep -q '^"steps","5 in pid '
	run --separate-stderr "$GPUSPY" report "$WORK/lock_wait.gpuspy" --report summary --format json
	[ "$status" -eq 0 ]
	jq -e '[.[].topic] | index("time") and index("gpu") and index("finding 1")' <<< "$output"
}

@test "stalls: without steps, shares are of each process's main thread over the recording" {
	# a loop of one line has no step to find: the whole recording is the window; the sleep
	# outlasts the interpreter's start even on a loaded machine
	"$GPUSPY" record -f -o "$WORK/flat.gpuspy" -- "$PYTHON" -c '
import time
time.sleep(1.5)'
	run --separate-stderr "$GPUSPY" report "$WORK/flat.gpuspy" --report summary --format json
	[ "$status" -eq 0 ]
	jq -e '.[] | select(.topic == "steps") | .answer | startswith("none found")' <<< "$output"
	run --separate-stderr "$GPUSPY" report "$WORK/flat.gpuspy" --report stalls --format json
	[ "$status" -eq 0 ]
	# the main thread slept in clock_nanosleep most of the time
	jq -e '.[0].kind == "other_wait" and (.[0].what | test("clock_nanosleep")) and .[0].share_pct > 50' <<< "$output"
}
