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
