#!/usr/bin/env bats
# Holistic Trace Analysis itself on gpuspy's Kineto export: HTA run from its source (a checkout
# named by HTA_DIR; nothing of it is copied here or patched) with Debian's packages for its
# dependencies (python3-pandas, -numpy, -plotly, -networkx, -ijson, -yaml, -psutil), on a
# recording of tests/targets/cuda/hta_loop.py on the simulated GPU: ProfilerStep#N NVTX ranges,
# operators of the aten_like library, kernels, a memset and device-to-host copies. Every analysis
# HTA documents for one rank must return data (tests/lib/run_hta.py).
# The HTA snapshots that passed are listed in docs/VERIFIED.md.

load helpers
load lib/stalls
bats_require_minimum_version 1.5.0

ATEN=$BUILD/targets/cuda/libtorch_aten_like_cuda.so
LOOP=$ROOT/tests/targets/cuda/hta_loop.py

setup() {
	[ -n "${HTA_DIR:-}" ] ||
		skip "set HTA_DIR to a HolisticTraceAnalysis checkout to run HTA on gpuspy's Kineto export"
	[ -e "$HTA_DIR/hta/trace_analysis.py" ] || skip "HTA_DIR=$HTA_DIR holds no hta/trace_analysis.py"
	"$PYTHON" -c 'import pandas, numpy, plotly, networkx, ijson, yaml, psutil' 2> /dev/null ||
		skip "HTA needs python3-pandas python3-numpy python3-plotly python3-networkx python3-ijson python3-yaml python3-psutil"
	require_bpf
	require_steps_lib
	[ -e "$ATEN" ] || skip "run 'make fakecuda' first"
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

# Records hta_loop.py for $STEPS steps into $WORK/t.gpuspy.
record_loop() {
	run "$GPUSPY" record -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" BUILD="$BUILD" \
		"$PYTHON" "$LOOP" "$ATEN" --steps "$STEPS" 3>&-
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "hta: every single-rank analysis returns data on the Kineto export" {
	record_loop
	mkdir "$WORK/k"
	"$GPUSPY" export "$WORK/t.gpuspy" --format kineto -o "$WORK/k/rank-0.json"
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/k/rank-0.json"
	# HTA_DISABLE_NS_ROUNDING is HTA's own switch for nanosecond traces: its rounding gives
	# events under 1 us a duration of -1, which its call-stack sort rejects (HTA issue #317,
	# fix pending in PR #342), so the kernel-sequence search needs it off
	run env HTA_DIR="$HTA_DIR" HTA_DISABLE_NS_ROUNDING=1 "$PYTHON" "$ROOT/tests/lib/run_hta.py" \
		"$WORK/k" --operator ProfilerStep
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"hta: all analyses returned data"* ]]
	# with HTA's defaults, everything but that search
	run env HTA_DIR="$HTA_DIR" "$PYTHON" "$ROOT/tests/lib/run_hta.py" "$WORK/k" \
		--operator ProfilerStep --skip "frequent cuda kernel sequences"
	echo "$output"
	[ "$status" -eq 0 ]
}
