#!/usr/bin/env bats
# The reader's fuzz target, run for a bounded time on real traces (FUZZ_SECONDS, default 30).

load helpers

@test "the trace reader survives fuzzing" {
	require_bpf
	[ -x "$BUILD/fuzz_reader" ] || skip "fuzz target not built (make $BUILD/fuzz_reader)"
	WORK=$(mktemp -d)
	"$GPUSPY" record -q --osrt-threshold 0 -o "$WORK/seed.gpuspy" -- "$TARGETS/sleeper" 3 20
	run sh "$ROOT/tests/fuzz/run.sh" "$BUILD/fuzz_reader" "${FUZZ_SECONDS:-30}" "$WORK/seed.gpuspy"
	rm -rf "$WORK"
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
