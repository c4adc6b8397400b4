#!/usr/bin/env bats
# The Python output stage: the `python` report (sampled self/total CPU time per function, and the
# CUDA launches, syscall and off-CPU time under each), `--format collapsed` (folded stacks for
# flame graphs) and the timeline (python_stack args, the samples' flame chart, cpu_op slices).
#
# First on a trace written by hand (tests/lib/make_py_trace.py: known stacks at known times, so
# every number is exact and no recording is needed), then on real recordings: a CPU-busy Python
# program whose hottest function and call structure are known (tests/targets/python/
# busy_target.py), and the PyTorch training loop for operator slices.

load helpers
bats_require_minimum_version 1.5.0

PY=/usr/bin/python3.11
BUSY=$ROOT/tests/targets/python/busy_target.py
TORCH_LOOP=$ROOT/tests/targets/torch/train_loop.py
CHECK=$ROOT/tests/lib/check_python_timeline.py

setup() {
	require_cmd jq
	require_cmd python3
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

synthetic() {
	python3 "$ROOT/tests/lib/make_py_trace.py" "$WORK/syn.gpuspy" "$ROOT"
}

# The python report row of a function, as JSON.
row_of() { # REPORT.json FUNCTION
	jq -e --arg f "$2" '[.[] | select(.function == $f)] | if length == 1 then .[0] else error("no single row for " + $f) end' "$1"
}

@test "python report: exact self and total CPU, launches, syscall and off-CPU time per function" {
	synthetic
	"$GPUSPY" report "$WORK/syn.gpuspy" --report python --format json > "$WORK/py.json"
	cat "$WORK/py.json"
	# 14 samples of 1 ms over two threads; busy_loop is the leaf of 9 and on 11
	row_of "$WORK/py.json" busy_loop | jq -e '.self_ns == 9000000 and .total_ns == 11000000 and
		.self_samples == 9 and .samples == 11 and .file == "/work/app/main.py" and .line == 20'
	row_of "$WORK/py.json" '<module>' | jq -e '.self_ns == 0 and .total_ns == 14000000 and .total_pct == 100'
	# fib recursed three deep in 2 samples: 2, not 6
	row_of "$WORK/py.json" fib | jq -e '.self_samples == 2 and .samples == 2'
	# a launch ran under inner_math (the leaf) and everything above it, the nested driver
	# launch being the same launch; another right under train
	row_of "$WORK/py.json" inner_math | jq -e '.self_launches == 1 and .launches == 1'
	row_of "$WORK/py.json" busy_loop | jq -e '.self_launches == 0 and .launches == 1'
	row_of "$WORK/py.json" train | jq -e '.self_launches == 1 and .launches == 2'
	# the read (5 ms) and the sleep inside it (3 ms) ran under read_input, never sampled
	row_of "$WORK/py.json" read_input | jq -e '.self_syscall_ns == 5000000 and .syscall_ns == 5000000 and
		.self_offcpu_ns == 3000000 and .offcpu_ns == 3000000 and .samples == 0'
	# the preemption had no stack of its own: the sample around it gives busy_loop
	row_of "$WORK/py.json" busy_loop | jq -e '.self_offcpu_ns == 100000'
	row_of "$WORK/py.json" train | jq -e '.self_syscall_ns == 0 and .syscall_ns == 5000000 and
		.offcpu_ns == 3100000'
	# default order: total CPU time
	jq -e '.[0].function == "<module>" and ([.[].total_ns] | . == (sort | reverse))' "$WORK/py.json"
	# the text table names its columns
	run -0 "$GPUSPY" report "$WORK/syn.gpuspy" --report python
	[[ "$output" == *"Self CPU (ns)"*"Total CPU (ns)"*"Function"* ]]
	"$GPUSPY" report --list | grep -q '^python '
}

@test "python report: --format collapsed gives one folded line per stack, counts summing to the samples" {
	synthetic
	run -0 "$GPUSPY" report "$WORK/syn.gpuspy" --format collapsed
	echo "$output"
	[ "${#lines[@]}" -eq 6 ]
	[ "$(awk '{ n += $NF } END { print n }' <<< "$output")" -eq 14 ]
	# root first, py-spy's frame labels: packages' files from the package root, a program's
	# by name
	grep -qxF '<module> (main.py:1);train (main.py:11);busy_loop (main.py:22);inner_math (mylib/ops.py:5) 2' <<< "$output"
	grep -qxF '<module> (main.py:1);busy_loop (main.py:20) 3' <<< "$output"
	# weighted by sampled ns
	run -0 "$GPUSPY" report "$WORK/syn.gpuspy" --report python --format collapsed-ns
	[ "$(awk '{ n += $NF } END { print n }' <<< "$output")" -eq 14000000 ]
	# reports without stacks refuse it, and so do row options
	run -2 "$GPUSPY" report "$WORK/syn.gpuspy" --report osrt_sum --format collapsed
	[[ "$output" == *"report osrt_sum has no collapsed format"* ]]
	run -2 "$GPUSPY" report "$WORK/syn.gpuspy" --format collapsed --limit 3
	[[ "$output" == *"--sort and --limit do not apply"* ]]
	run -2 "$GPUSPY" report "$WORK/syn.gpuspy" --format folded
	[[ "$output" == *"collapsed-ns"* ]]
}

@test "timeline: stacks in args, the samples' flame chart and cpu_op slices, in both dialects" {
	synthetic
	"$GPUSPY" export "$WORK/syn.gpuspy" -o "$WORK/syn.json"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/syn.json"
	python3 "$CHECK" "$WORK/syn.json" --samples 14 --sample-function fib --sample-function busy_loop \
		--stacks os_runtime --stacks off_cpu --stacks cuda_runtime --stacks cpu_op \
		--stack-function read_input --ops --cuda-in-ops
	# the read's stack, leaf first
	jq -e '[.traceEvents[] | select(.name == "read")][0].args.python_stack ==
		["read_input (main.py:31)", "train (main.py:12)", "<module> (main.py:2)"]' "$WORK/syn.json"
	# a stack is written once, on the outermost span under it: not on the sleep inside the read,
	# nor on the calls inside the operator, but on the preemption (from its sample) and on the
	# launch made outside any operator
	jq -e '[.traceEvents[] | select(.args.python_stack) | .name] | sort ==
		["aten::add", "cudaLaunchKernel", "off-cpu (preempted)", "read"]' "$WORK/syn.json"
	jq -e '[.traceEvents[] | select(.name == "off-cpu (preempted)")][0].args |
		.python_stack[0] == "busy_loop (main.py:21)" and .python_stack_sampled' "$WORK/syn.json"
	jq -e '[.traceEvents[] | select(.name == "cudaLaunchKernel" and .args.python_stack)][0].args.python_stack ==
		["train (main.py:13)", "<module> (main.py:1)"]' "$WORK/syn.json"
	# consecutive samples merge: tid 100's busy_loop is one slice over samples 1..6, then one
	# over 26..27 after the gap
	jq -e '[.traceEvents[] | select(.cat == "python_sample" and .tid == 8388708 and .name == "busy_loop") | [.ts, .dur, .args.samples]] ==
		[[1000, 6000, 6], [26000, 2000, 2]]' "$WORK/syn.json"
	jq -e '[.traceEvents[] | select(.cat == "cpu_op") | .name] | sort == ["aten::add", "aten::empty"]' "$WORK/syn.json"

	"$GPUSPY" export "$WORK/syn.gpuspy" --format kineto -o "$WORK/syn.kineto.json"
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/syn.kineto.json" --no-gpu
	python3 "$CHECK" "$WORK/syn.kineto.json" --samples 14 --stacks cpu_op --ops --cuda-in-ops
	# Kineto links a runtime call to its operator by External id
	jq -e '([.traceEvents[] | select(.name == "aten::add")][0].args["External id"]) as $x |
		[.traceEvents[] | select(.name == "cudaLaunchKernel") | .args["External id"]] == [$x, null]' "$WORK/syn.kineto.json"

	# --python-depth keeps the leafmost frames and says how many were cut; 0 drops them
	"$GPUSPY" export "$WORK/syn.gpuspy" --python-depth 1 -o "$WORK/d1.json"
	jq -e '[.traceEvents[] | select(.name == "read")][0].args.python_stack ==
		["read_input (main.py:31)", "[2 outer frames not shown]"]' "$WORK/d1.json"
	python3 "$CHECK" "$WORK/d1.json" --samples 14
	"$GPUSPY" export "$WORK/syn.gpuspy" --python-depth 0 -o "$WORK/d0.json"
	jq -e '[.traceEvents[] | select(.args.python_stack)] | length == 0' "$WORK/d0.json"
	run -2 "$GPUSPY" export "$WORK/syn.gpuspy" --python-depth x
}

# Records busy_target.py for 1.5 s at 199 Hz into $WORK/busy.gpuspy (no operator probes: it
# does not use PyTorch). The loader finds the interpreter a moment after exec: the program
# starts its rounds only once gpuspy says its stacks are on.
record_busy() {
	[ -x "$PY" ] || skip "needs $PY"
	mkfifo "$WORK/go"
	"$GPUSPY" record -f -o "$WORK/busy.gpuspy" --no-ops --sample-hz 199 -- \
		"$PY" "$BUSY" 1.5 --go "$WORK/go" > "$WORK/busy.out" 2> "$WORK/busy.err" 3>&- &
	local recorder=$!
	wait_for_line "$WORK/busy.err" "stacks on" || { kill "$recorder"; return 1; }
	echo go > "$WORK/go"
	wait "$recorder"
	grep -q '^DONE ' "$WORK/busy.out"
	"$GPUSPY" report "$WORK/busy.gpuspy" --report python_stacks --format json > "$WORK/stacks.json"
	jq '[.[] | select(.kind == "sample")] | length' "$WORK/stacks.json" > "$WORK/nsamples"
	# the flame chart shows the samples that have Python frames
	jq '[.[] | select(.kind == "sample" and (.depth > 0 or .flags == "truncated"))] | length' \
		"$WORK/stacks.json" > "$WORK/nframed"
	echo "samples: $(cat "$WORK/nsamples"), with Python frames: $(cat "$WORK/nframed")"
	[ "$(cat "$WORK/nsamples")" -gt 50 ]
}

@test "python report on a real program: the busy leaf has the most self time, its caller's total contains it" {
	require_bpf
	record_busy
	"$GPUSPY" report "$WORK/busy.gpuspy" --report python --format json > "$WORK/py.json"
	"$GPUSPY" report "$WORK/busy.gpuspy" --report python --limit 8
	jq -e 'max_by(.self_ns).function == "leaf_spin"' "$WORK/py.json"
	leaf=$(row_of "$WORK/py.json" leaf_spin)
	caller=$(row_of "$WORK/py.json" caller_work)
	jq -e --argjson leaf "$leaf" '.total_ns >= .self_ns and .samples >= $leaf.samples and
		.self_ns < $leaf.self_ns' <<< "$caller"
	jq -e '.line == 26 and (.file | endswith("busy_target.py"))' <<< "$leaf"
	# the writes, reads and 2 ms sleeps ran with do_io as the leaf Python frame
	row_of "$WORK/py.json" do_io | jq -e '.self_syscall_ns > 0 and .self_offcpu_ns > 0'
	row_of "$WORK/py.json" one_round | jq -e '.syscall_ns >= 0 and .samples > 0'
}

@test "collapsed output of a real program parses, and its counts sum to the samples" {
	require_bpf
	record_busy
	"$GPUSPY" report "$WORK/busy.gpuspy" --format collapsed > "$WORK/folded.txt"
	head -5 "$WORK/folded.txt"
	# every line: frames joined by ';', a space, a positive count; each stack once
	run -0 awk '!/^[^ ].* [1-9][0-9]*$/ { bad++ } { n += $NF } END { if (bad) exit 1; print n }' "$WORK/folded.txt"
	[ "$output" -eq "$(cat "$WORK/nsamples")" ]
	[ "$(sed 's/ [0-9]*$//' "$WORK/folded.txt" | sort | uniq -d | wc -l)" -eq 0 ]
	grep -q 'one_round (.*busy_target.py:[0-9]*);caller_work (.*busy_target.py:[0-9]*);leaf_spin (.*busy_target.py:[0-9]*) [0-9]' "$WORK/folded.txt"
}

@test "timeline of a real program: samples' flame chart and stacks on syscalls, in both dialects" {
	require_bpf
	record_busy
	"$GPUSPY" export "$WORK/busy.gpuspy" -o "$WORK/busy.json"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/busy.json"
	python3 "$CHECK" "$WORK/busy.json" --samples "$(cat "$WORK/nframed")" \
		--sample-function leaf_spin --sample-function caller_work \
		--stacks os_runtime --stack-function do_io
	# the 2 ms sleeps: clock_nanosleep spans under do_io, exactly
	jq -e '[.traceEvents[] | select(.name == "clock_nanosleep" and .dur >= 1000)] |
		length > 10 and all(.args.python_stack[0] | startswith("do_io ("))' "$WORK/busy.json"
	"$GPUSPY" export "$WORK/busy.gpuspy" --format kineto -o "$WORK/busy.kineto.json"
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/busy.kineto.json" --no-gpu
	python3 "$CHECK" "$WORK/busy.kineto.json" --samples "$(cat "$WORK/nframed")"
}

@test "timeline of a PyTorch loop: cpu_op slices nest on their threads, under Python stacks" {
	require_bpf
	[ -x "$PY" ] && [ -e "$TORCH_LOOP" ] || skip "needs $PY and $TORCH_LOOP"
	"$PY" -c 'import torch' 2> /dev/null || skip "needs torch for $PY"
	"$GPUSPY" record -q -f -o "$WORK/torch.gpuspy" -- "$PY" "$TORCH_LOOP" --iters 10 \
		> "$WORK/torch.out" 3>&-
	grep -q '^DONE 10' "$WORK/torch.out"
	"$GPUSPY" export "$WORK/torch.gpuspy" -o "$WORK/torch.json"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/torch.json"
	python3 "$CHECK" "$WORK/torch.json" --ops --stacks cpu_op --stack-function step
	jq -e '[.traceEvents[] | select(.cat == "cpu_op" and .name == "aten::conv2d")] | length >= 10' "$WORK/torch.json"
	"$GPUSPY" export "$WORK/torch.gpuspy" --format kineto -o "$WORK/torch.kineto.json"
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/torch.kineto.json" --no-gpu
	python3 "$CHECK" "$WORK/torch.kineto.json" --ops
	# the python report sees the loop's functions
	"$GPUSPY" report "$WORK/torch.gpuspy" --report python --format json |
		jq -e 'any(.[]; .function == "step" and .samples > 0)'
}

@test "timeline on the simulated GPU: operators hold their CUDA calls and the flows to their kernels" {
	# bats test_tags=bpf,cuda,cupti
	require_bpf
	local fc=$BUILD/fakecuda lib=$BUILD/targets/cuda/libtorch_aten_like_cuda.so
	[ -e "$fc/libcudart.so.13" ] && [ -e "$lib" ] || skip "run 'make fakecuda' first"
	[ -e "$BUILD/libgpuspy_cupti.so" ] || skip "the CUPTI bridge was not built (no CUPTI headers)"
	"$GPUSPY" record -q -f -o "$WORK/aten.gpuspy" -- env LD_LIBRARY_PATH="$fc" \
		python3 "$ROOT/tests/targets/cuda/aten_like.py" "$lib" 5 > /dev/null 3>&-
	"$GPUSPY" export "$WORK/aten.gpuspy" -o "$WORK/aten.json"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/aten.json"
	python3 "$CHECK" "$WORK/aten.json" --ops --cuda-in-ops --flows-in-ops \
		--stacks cpu_op --stacks cuda_runtime
	"$GPUSPY" export "$WORK/aten.gpuspy" --format kineto -o "$WORK/aten.kineto.json"
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/aten.kineto.json"
	python3 "$CHECK" "$WORK/aten.kineto.json" --ops --cuda-in-ops --flows-in-ops
}
