# The stall workloads (tests/targets/stalls) as the suites run them: stalls_targets.bats (the
# workloads alone) and steps.bats (recorded by gpuspy). Load after helpers.
PYTHON=/usr/bin/python3 # Debian's: python3-torch is installed for this interpreter only
SRC=$ROOT/tests/targets/stalls
LIB=$BUILD/targets/stalls/libsteps_kernels.so
FC=$BUILD/fakecuda
STEPS=5 # not the workloads' default (12): the count must be the one asked for

require_steps_lib() {
	[ -e "$LIB" ] && [ -e "$FC/libcudart.so.13" ] ||
		skip "needs the CUDA toolkit (nvcc, NVIDIA's headers) and 'make fakecuda stalls-targets'"
}

# Records a workload for $STEPS steps into $WORK/KIND.gpuspy, its output in $WORK/KIND.out.
record_workload() { # KIND [ARGS...]
	local kind=$1
	shift
	run "$GPUSPY" record -f -o "$WORK/$kind.gpuspy" -- env LD_LIBRARY_PATH="$FC" BUILD="$BUILD" \
		"$PYTHON" "$SRC/$kind.py" --steps "$STEPS" "$@"
	echo "$output"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" | grep -E '^(STEP|TRUTH) ' > "$WORK/$kind.out"
}
