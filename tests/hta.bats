#!/usr/bin/env bats
# Holistic Trace Analysis itself on gpuspy's Kineto export: HTA run from its source (a checkout
# named by HTA_DIR; nothing of it is copied here or patched) with Debian's packages for its
# dependencies (python3-pandas, -numpy, -plotly, -networkx, -ijson, -yaml, -psutil), on a
# recording of tests/targets/cuda/hta_loop.py on the simulated GPU: ProfilerStep#N NVTX ranges,
# operators of the aten_like library, kernels, a memset and device-to-host copies. Every analysis
# HTA documents for one rank must return data (tests/lib/run_hta.py). Two ranks (RANK,
# WORLD_SIZE, LOCAL_RANK as torchrun sets them) under one recording export a directory of
# rank-N.json with distributedInfo, checked without HTA too (CI has no HTA_DIR).
# The HTA snapshots that passed are listed in docs/VERIFIED.md.

load helpers
load lib/stalls
bats_require_minimum_version 1.5.0

ATEN=$BUILD/targets/cuda/libtorch_aten_like_cuda.so
LOOP=$ROOT/tests/targets/cuda/hta_loop.py

setup() {
	require_bpf
	require_cmd jq
	require_steps_lib
	[ -e "$ATEN" ] || skip "run 'make fakecuda' first"
	WORK=$(mktemp -d)
}

require_hta() {
	[ -n "${HTA_DIR:-}" ] ||
		skip "set HTA_DIR to a HolisticTraceAnalysis checkout to run HTA on gpuspy's Kineto export"
	[ -e "$HTA_DIR/hta/trace_analysis.py" ] || skip "HTA_DIR=$HTA_DIR holds no hta/trace_analysis.py"
	"$PYTHON" -c 'import pandas, numpy, plotly, networkx, ijson, yaml, psutil' 2> /dev/null ||
		skip "HTA needs python3-pandas python3-numpy python3-plotly python3-networkx python3-ijson python3-yaml python3-psutil"
}

# Records two hta_loop.py, ranks 0 and 1 of a job of 2, under one `sh -c` into $WORK/t.gpuspy
# and exports it: $WORK/t.gpuspy.kineto/rank-{0,1}.json.
record_two_ranks() {
	run "$GPUSPY" record -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" BUILD="$BUILD" \
		sh -c 'RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 "$0" "$1" "$2" --steps "$3" --rank-env &
			RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 "$0" "$1" "$2" --steps "$3" --rank-env
			wait' "$PYTHON" "$LOOP" "$ATEN" "$STEPS" 3>&-
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"RANK=0 WORLD_SIZE=2 LOCAL_RANK=0"* ]]
	[[ $output == *"RANK=1 WORLD_SIZE=2 LOCAL_RANK=1"* ]]
	run "$GPUSPY" export "$WORK/t.gpuspy" --format kineto
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"gpuspy: wrote 2 ranks to $WORK/t.gpuspy.kineto"* ]]
}

teardown() {
	rm -rf "$WORK"
}

# Records hta_loop.py (ARGS) for $STEPS steps into $WORK/t.gpuspy.
record_loop() { # [ARGS...]
	run "$GPUSPY" record -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" BUILD="$BUILD" \
		"$PYTHON" "$LOOP" "$ATEN" --steps "$STEPS" "$@" 3>&-
	echo "$output"
	[ "$status" -eq 0 ]
}

# HTA on the one-rank Kineto export of $WORK/t.gpuspy, once with HTA_DISABLE_NS_ROUNDING
# (HTA's own switch for nanosecond traces: its rounding gives events under 1 us a duration of
# -1, which its call-stack sort rejects, HTA issue #317, fix pending in PR #342, so the
# kernel-sequence search needs it off), once with HTA's defaults and everything but that.
run_hta_one_rank() {
	mkdir "$WORK/k"
	"$GPUSPY" export "$WORK/t.gpuspy" --format kineto -o "$WORK/k/rank-0.json"
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/k/rank-0.json"
	run env HTA_DIR="$HTA_DIR" HTA_DISABLE_NS_ROUNDING=1 "$PYTHON" "$ROOT/tests/lib/run_hta.py" \
		"$WORK/k" --operator aten::linear --min-pattern-len 2
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"hta: all analyses returned data"* ]]
	run env HTA_DIR="$HTA_DIR" "$PYTHON" "$ROOT/tests/lib/run_hta.py" "$WORK/k" \
		--operator aten::linear --min-pattern-len 2 --skip "frequent cuda kernel sequences"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"hta: all analyses returned data"* ]]
}

@test "hta: every single-rank analysis returns data on the Kineto export" {
	require_hta
	record_loop
	run_hta_one_rank
}

@test "hta: the same with the steps gpuspy finds (no NVTX ranges: its own ProfilerStep#N)" {
	require_hta
	record_loop --no-nvtx
	run_hta_one_rank
	jq -e --argjson n "$STEPS" '[.traceEvents[] | select(.cat == "user_annotation")
		| select(.args.found_by | startswith("python loop"))] | length == $n' "$WORK/k/rank-0.json"
}

@test "hta: one process with no RANK: one file, distributedInfo rank 0" {
	record_loop
	"$GPUSPY" export "$WORK/t.gpuspy" --format kineto -o "$WORK/k.json"
	jq -e '.distributedInfo == {"rank": 0}' "$WORK/k.json"
	# HTA finds the rank with the regex "rank":\s+(\d+)
	grep -q '"distributedInfo": {"rank": 0}' "$WORK/k.json"
}

@test "hta: two ranks under one recording: a directory of rank-N.json, each rank's processes with its distributedInfo" {
	record_two_ranks
	[ "$(ls "$WORK/t.gpuspy.kineto")" = "$(printf 'rank-0.json\nrank-1.json')" ]
	for r in 0 1; do
		f=$WORK/t.gpuspy.kineto/rank-$r.json
		python3 "$ROOT/tests/lib/check_kineto.py" "$f"
		jq -e --argjson r "$r" '.distributedInfo == {"rank": $r, "world_size": 2, "local_rank": $r}' "$f"
		grep -q "\"distributedInfo\": {\"rank\": $r," "$f"
		# one python process (sh has no RANK) and its GPU; its own steps and kernels
		jq -e '[.traceEvents[] | select(.ph == "M" and .name == "process_name") | .args.name]
			| length == 2 and (.[0] | startswith("python3")) and .[1] == "GPU 0"' "$f"
		jq -e --argjson n "$STEPS" '[.traceEvents[] | select(.cat == "user_annotation"
			and (.name | startswith("ProfilerStep#")))] | length == $n' "$f"
	done
	# the two files hold different processes
	p0=$(jq '[.traceEvents[] | select(.cat == "cpu_op") | .pid] | unique' "$WORK/t.gpuspy.kineto/rank-0.json")
	p1=$(jq '[.traceEvents[] | select(.cat == "cpu_op") | .pid] | unique' "$WORK/t.gpuspy.kineto/rank-1.json")
	[ "$p0" != "$p1" ]
	# stdout cannot hold two files; -o DIR names the directory
	run "$GPUSPY" export "$WORK/t.gpuspy" --format kineto -o -
	[ "$status" -eq 2 ]
	[ "$output" = "gpuspy: --format kineto of 2 ranks writes a directory: give -o DIR" ]
	"$GPUSPY" export "$WORK/t.gpuspy" --format kineto -o "$WORK/job"
	[ -s "$WORK/job/rank-0.json" ] && [ -s "$WORK/job/rank-1.json" ]
	# the Chrome export stays one file of everything
	"$GPUSPY" export "$WORK/t.gpuspy" -o "$WORK/all.json"
	jq -e '[.traceEvents[] | select(.ph == "M" and .name == "process_name")] | length >= 4' "$WORK/all.json"
}

@test "hta: two ranks: HTA finds both and its analyses, multi-rank ones too, return data" {
	require_hta
	record_two_ranks
	run env HTA_DIR="$HTA_DIR" HTA_DISABLE_NS_ROUNDING=1 "$PYTHON" "$ROOT/tests/lib/run_hta.py" \
		"$WORK/t.gpuspy.kineto" --ranks 2 --operator aten::linear --min-pattern-len 2
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"hta: ranks [0, 1]"* ]]
	[[ $output == *"hta: all analyses returned data"* ]]
}
