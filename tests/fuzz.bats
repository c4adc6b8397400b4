#!/usr/bin/env bats
# The fuzz targets, each run for a bounded time on real traces (FUZZ_SECONDS, default 30):
# fuzz_reader (the trace reader) and fuzz_report (the models and reports behind `gpuspy report`
# and `gpuspy export`).

load helpers

setup() {
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

@test "the trace reader survives fuzzing" {
	require_bpf
	[ -x "$BUILD/fuzz_reader" ] || skip "fuzz target not built (make $BUILD/fuzz_reader)"
	"$GPUSPY" record -q --osrt-threshold 0 -o "$WORK/seed.gpuspy" -- "$TARGETS/sleeper" 3 20
	run sh "$ROOT/tests/fuzz/run.sh" "$BUILD/fuzz_reader" "${FUZZ_SECONDS:-30}" "$WORK/seed.gpuspy"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Done "*" runs in "* ]]
}

@test "the report models survive fuzzing" {
	require_bpf
	require_cmd python3
	[ -x "$BUILD/fuzz_report" ] || skip "fuzz target not built (make $BUILD/fuzz_report)"
	# seeds with every kind of record the models read: syscalls and scheduling, a CUDA
	# program on the simulated GPU with the CUPTI bridge (kernels, copies, syncs, API
	# records, NVTX), Python stacks, samples, operators and CUDA calls, statistics
	# checkpoints and finals (tests/lib/make_py_trace.py), in-process operators
	"$GPUSPY" record -q --osrt-threshold 0 -o "$WORK/sleeper.gpuspy" -- "$TARGETS/sleeper" 3 20
	if [ -e "$BUILD/libgpuspy_cupti.so" ] && [ -x "$BUILD/targets/cuda/nvtx_ranges" ]; then
		for prog in memory_errors nvtx_ranges; do
			"$GPUSPY" record -q -o "$WORK/$prog.gpuspy" -- \
				env LD_LIBRARY_PATH="$BUILD/fakecuda" "$BUILD/targets/cuda/$prog" > /dev/null
		done
	fi
	python3 "$ROOT/tests/lib/make_py_trace.py" "$WORK/python.gpuspy" "$ROOT"
	python3 "$ROOT/tests/lib/make_py_trace.py" --stats "$WORK/stats.gpuspy"
	# the in-process observer's operators: paired, named per process, linked forward to
	# backward, with input shapes (tests/lib/make_torch_trace.py)
	python3 "$ROOT/tests/lib/make_torch_trace.py" "$WORK/torch.gpuspy" --odd
	run sh "$ROOT/tests/fuzz/run.sh" "$BUILD/fuzz_report" "${FUZZ_SECONDS:-30}" "$WORK"/*.gpuspy
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Done "*" runs in "* ]]
}

@test "a fuzzer that fails or crashes fails the run" {
	run sh "$ROOT/tests/fuzz/run.sh" /bin/false 1
	[ "$status" -eq 1 ]
	# a crash's report is the part of the output that is kept
	printf '#!/bin/sh\necho "==1==ERROR: AddressSanitizer: heap-use-after-free"\nexit 77\n' \
		> "$BATS_TEST_TMPDIR/crashing"
	chmod +x "$BATS_TEST_TMPDIR/crashing"
	run sh "$ROOT/tests/fuzz/run.sh" "$BATS_TEST_TMPDIR/crashing" 1
	[ "$status" -eq 77 ]
	[[ "$output" == *"heap-use-after-free"* ]]
}
