#!/usr/bin/env bats
# Training steps found without code changes (gpuspy report --report steps, output/model/steps.h),
# checked against the stall workloads' own step boundaries (tests/targets/stalls: each prints one
# STEP line per step, on the clock of gpuspy's records): the count exactly, on the thread that
# runs the loop, each found start inside the workload's step (tests/lib/check_steps.py). By the
# Python step loop (GPU programs on the simulated GPU, a real DataLoader, CPU-only loops), by
# ProfilerStep#N NVTX ranges, and by --steps-by.

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

# The steps report of $WORK/KIND.gpuspy against the workload's own steps.
check_steps() { # KIND FOUND_BY_PREFIX [inside|count|NS] [REPORT OPTIONS...]
	local kind=$1 found=$2 mode=${3:-inside}
	shift 3 || shift $#
	"$GPUSPY" report "$WORK/$kind.gpuspy" --report steps --format json "$@" > "$WORK/$kind.json"
	python3 "$ROOT/tests/lib/check_steps.py" "$WORK/$kind.out" "$WORK/$kind.json" "$found" \
		"$mode"
}

@test "steps: a GPU loop whose steps start with Python preprocessing, found as its step loop" {
	require_steps_lib
	record_workload host_compute
	check_steps host_compute "python loop in train (host_compute.py:"
}

@test "steps: a loop that synchronises every step" {
	require_steps_lib
	record_workload sync_wait
	check_steps sync_wait "python loop in train (sync_wait.py:"
}

@test "steps: a real DataLoader loop; its worker processes have no steps of their own" {
	"$PYTHON" -c 'import torch' 2> /dev/null || skip "needs python3-torch for $PYTHON"
	record_workload input_wait
	check_steps input_wait "python loop in train (input_wait.py:"
	# the DataLoader workers (torch's _worker_loop) are not listed
	workers=$(jq -r '[.cause.pids[]] | join(" ")' <<< "$(sed -n 's/^TRUTH //p' "$WORK/input_wait.out")")
	[ -n "$workers" ]
	for w in $workers; do
		jq -e --argjson w "$w" 'all(.[]; .pid != $w)' "$WORK/input_wait.json"
	done
}

@test "steps: a CPU-only loop (no CUDA) blocked on a lock" {
	record_workload lock_wait
	check_steps lock_wait "python loop in train (lock_wait.py:"
}

@test "steps: a real PyTorch loop whose body is one call: its warm-up and measured iterations" {
	"$PYTHON" -c 'import torch' 2> /dev/null || skip "needs python3-torch for $PYTHON"
	# tests/targets/torch/train_loop.py: run(2) to warm up, then run(--iters), each iteration
	# one call of step() (zero_grad, forward, backward, optimizer step: operators on 4 lines)
	run "$GPUSPY" record -f -o "$WORK/torch.gpuspy" -- "$PYTHON" "$ROOT/tests/targets/torch/train_loop.py" \
		--iters 7
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"DONE 7"* ]]
	"$GPUSPY" report "$WORK/torch.gpuspy" --report steps --format json > "$WORK/torch.json"
	# (the median and p90 rows have no step number)
	jq -e 'map(select(.step != null)) | length == 9 and
		all(.[]; .found_by | startswith("python loop in step (train_loop.py:"))' "$WORK/torch.json"
	jq -e '[.[].step | select(. != null)] == [range(9)]' "$WORK/torch.json"
	# --steps-by op:NAME: from each call of the loss operator (once an iteration) to the next
	"$GPUSPY" report "$WORK/torch.gpuspy" --report steps --format json \
		--steps-by op:aten::cross_entropy_loss > "$WORK/torch_op.json"
	jq -e 'map(select(.step != null)) | length == 9 and
		all(.[]; .found_by == "op:aten::cross_entropy_loss (each call)")' "$WORK/torch_op.json"
}

@test "steps: a launch-bound loop of 100 launches a step" {
	require_steps_lib
	# 100, not the workload's 1000: at 1000 the ring buffer overflows here (counted losses) and
	# an iteration whose events were all lost merges with its neighbour
	record_workload launch_bound --kernels 100
	check_steps launch_bound "python loop in train (launch_bound.py:"
}

@test "steps: ProfilerStep#N NVTX ranges come first, each within 1 ms of where the workload opened it" {
	require_steps_lib
	record_workload host_compute --nvtx
	check_steps host_compute "nvtx ranges ProfilerStep#*" 1000000
}

@test "steps: --steps-by py:FUNCTION makes each call a step; nvtx:NAME ranges named otherwise" {
	require_steps_lib
	record_workload host_compute --nvtx
	# preprocess() runs once at the start of each step
	check_steps host_compute "py:preprocess (each call)" inside --steps-by py:preprocess
	check_steps host_compute "nvtx ranges Profiler*" 1000000 --steps-by nvtx:Profiler
	"$GPUSPY" report "$WORK/host_compute.gpuspy" --report steps --format json \
		--steps-by nvtx:NoSuchRange > "$WORK/none.json"
	jq -e 'length == 0' "$WORK/none.json"
}

@test "steps: a process's steps never overlap: one that ends at a CPU sample's period ends where the next begins" {
	# tests/unit/step_list_test.c: an overlap happens only when a sample falls late in a call of
	# the loop (tests/python_output.bats's PyTorch loop, now and then), so it is built by hand
	run -0 "$BUILD/unit/step_list_test"
	echo "$output"
}

@test "steps: a bad --steps-by value is one line and exit 2" {
	run "$GPUSPY" report /dev/null --report steps --steps-by aten::add
	[ "$status" -eq 2 ]
	[ "$output" = "gpuspy: invalid value 'aten::add' for --steps-by: expected nvtx:NAME, py:FUNCTION or op:NAME" ]
}

@test "steps: a loop of pure Python computing (CPU samples only) whose process competes for its CPU" {
	record_workload cpu_contention
	check_steps cpu_contention "python loop in train (cpu_contention.py:"
}

@test "steps: a loop reading from disk that logs a line each step" {
	dir=$(mktemp -d /var/tmp/gpuspy-io.XXXXXX) # a block device: O_DIRECT fails on tmpfs
	record_workload io_wait --dir "$dir"
	rmdir "$dir"
	check_steps io_wait "python loop in train (io_wait.py:"
}

@test "steps: a loop whose every event is in one call per step has no steps rather than wrong ones" {
	# each step calls wait_batch() once and has no other event: one call's stacks follow the
	# previous call's with nothing between, so the calls cannot be told apart
	# (docs/REPORTS.md, "Training steps")
	cat > "$WORK/one_call.py" <<-'PY'
		import time
		def wait_batch():
		    for _ in range(3):
		        time.sleep(0.003)
		def train():
		    for step in range(6):
		        wait_batch()
		train()
	PY
	"$GPUSPY" record -f -o "$WORK/one_call.gpuspy" -- "$PYTHON" "$WORK/one_call.py"
	"$GPUSPY" report "$WORK/one_call.gpuspy" --report steps --format json > "$WORK/one_call.json"
	jq -e 'length == 0' "$WORK/one_call.json"
}
