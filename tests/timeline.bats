#!/usr/bin/env bats
# Timelines draw correctly: the Chrome and Kineto exports of real recordings checked against
# the Trace Event Format's rules viewers rely on (tests/lib/check_tef.py: known phases, dur on
# complete events, balanced B/E, flows with id, cat and "bp": "e", slices that nest or are
# disjoint on every track), and the CPU samples' slices written caller first.
# bats file_tags=bpf

load helpers
load lib/stalls
bats_require_minimum_version 1.5.0

TEF=$ROOT/tests/lib/check_tef.py
TGT=$BUILD/targets/cuda
BRIDGE=$BUILD/libgpuspy_cupti.so
PY=/usr/bin/python3.11

setup() {
	require_bpf
	require_cmd jq
	require_cmd python3
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

# Exports $WORK/NAME.gpuspy in both dialects and checks each. Extra args go to check_tef.py.
# Kineto's ProfilerStep#N slices, on the loop thread, are checked as any slice there.
check_both() { # NAME [CHECK_TEF ARGS...]
	local name=$1
	shift
	"$GPUSPY" export "$WORK/$name.gpuspy" --format chrome -o "$WORK/$name.chrome.json"
	python3 "$TEF" "$WORK/$name.chrome.json" "$@"
	"$GPUSPY" export "$WORK/$name.gpuspy" --format kineto -o "$WORK/$name.kineto.json"
	python3 "$TEF" "$WORK/$name.kineto.json" "$@"
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/$name.kineto.json" --no-gpu
}

@test "timeline: a CUDA program with streams and syncs on the simulated GPU conforms in both dialects" {
	[ -e "$FC/libcudart.so.13" ] && [ -e "$TGT/streams_events" ] || skip "run 'make fakecuda' first"
	[ -e "$BRIDGE" ] || skip "the CUPTI bridge was not built (no CUPTI headers)"
	run "$GPUSPY" record -q -f -o "$WORK/streams.gpuspy" -- env LD_LIBRARY_PATH="$FC" "$TGT/streams_events"
	[ "$status" -eq 0 ]
	[[ "$output" == *"DONE ok"* ]]
	check_both streams --min-flows 2
	# CUPTI's sync records are in Kineto's file, each on its calling thread's sync track in the
	# GPU's process, none on a stream's track (where a stream sync partly overlaps the kernel
	# it waits for)
	jq -e '[.traceEvents[] | select(.cat == "cuda_sync")] as $s | ($s | length) > 0 and
		all($s[]; .tid == 8388608 + .args["launch tid"])' "$WORK/streams.kineto.json"
	jq -e '[.traceEvents[] | select(.ph == "M" and .name == "thread_name" and
		(.args.name | startswith("syncs (tid ")))] | length > 0' "$WORK/streams.kineto.json"
	jq -e '[.traceEvents[] | select(.cat == "cuda_sync")] | length == 0' "$WORK/streams.chrome.json"
}

@test "timeline: a sample's slices are written caller first: <module>, main, work, spin" {
	[ -x "$PY" ] || skip "needs $PY"
	mkfifo "$WORK/go"
	"$GPUSPY" record -f -o "$WORK/chain.gpuspy" --no-ops --sample-hz 199 -- \
		"$PY" "$ROOT/tests/targets/python/chain_target.py" 1 --go "$WORK/go" \
		> "$WORK/chain.out" 2> "$WORK/chain.err" 3>&- &
	local recorder=$!
	wait_for_line "$WORK/chain.err" "stacks on" || { kill "$recorder"; return 1; }
	echo go > "$WORK/go"
	wait "$recorder"
	grep -q '^DONE ' "$WORK/chain.out"
	check_both chain --sample-chain '<module>,main,work,spin'
}

@test "timeline: the sync_wait stall workload conforms in both dialects" {
	require_root
	[ -x "$PYTHON" ] || skip "needs $PYTHON"
	require_steps_lib
	record_workload sync_wait
	check_both sync_wait --min-flows 2
}
