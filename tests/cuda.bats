#!/usr/bin/env bats
# CUDA API tracing on the real kernel: uprobes on libcudart and libcuda (the simulated stack in
# build/fakecuda, and NVIDIA's own libcudart), in launched, attached and host-wide recordings.
# Every count is compared with what the target program itself says it did.
# bats file_tags=bpf,cuda

load helpers
bats_require_minimum_version 1.5.0

FC=$BUILD/fakecuda
TGT=$BUILD/targets/cuda
REPORTS=cuda_api_sum,cuda_launches,cuda_copies,gpu_mem

setup() {
	require_bpf
	require_cmd jq
	require_cmd python3
	[ -e "$FC/libcudart.so.13" ] && [ -e "$TGT/cuda_loop" ] || skip "run 'make fakecuda' first"
	WORK=$(mktemp -d)
}

teardown() {
	for p in ${LOOP_PIDS:-} ${GPUSPY_PID:-}; do kill "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}

# Records a program on the simulated stack and checks every count against its own lines.
record_and_compare() { # NAME COMMAND...
	local name=$1
	shift
	run "$GPUSPY" record -f -o "$WORK/$name.gpuspy" -- env LD_LIBRARY_PATH="$FC" "$@"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"DONE ok"* ]]
	[[ "$output" == *"gpuspy: probing CUDA runtime in pid "*"libcudart.so.13"* ]]
	printf '%s\n' "$output" > "$WORK/$name.out"
	"$GPUSPY" report "$WORK/$name.gpuspy" --report "$REPORTS" --format json > "$WORK/$name.json"
	python3 "$ROOT/tests/lib/check_cuda_counts.py" "$WORK/$name.out" "$WORK/$name.json"
}

# Starts tests/targets/cuda/cuda_loop driven through a fifo on fd N; sets LOOP_PID.
start_loop() { # TAG FD
	mkfifo "$WORK/$1.ctl"
	env LD_LIBRARY_PATH="$FC" "$TGT/cuda_loop" "$WORK/$1.ready" < "$WORK/$1.ctl" \
		> "$WORK/$1.out" 3>&- &
	LOOP_PID=$!
	LOOP_PIDS="${LOOP_PIDS:-} $LOOP_PID"
	eval "exec $2> \"$WORK/$1.ctl\""
	wait_for_file "$WORK/$1.ready"
}

start_gpuspy() { # OPTIONS...
	"$GPUSPY" record "$@" -o "$WORK/t.gpuspy" 2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/gpuspy.err" "gpuspy: recording"
}

stop_gpuspy() {
	kill -INT "$GPUSPY_PID"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
}

launches_of() { # TRACE MANGLED [PID]
	"$GPUSPY" report "$1" --report cuda_launches --format json |
		jq --arg m "$2" '[.[] | select(.mangled == $m) | .launches] | add // 0'
}

@test "nvcc program with streams and events: calls, errors, launches per kernel and copies equal its own lines" {
	record_and_compare streams "$TGT/streams_events"
	# launch names come demangled in the table, mangled in JSON
	run "$GPUSPY" report "$WORK/streams.gpuspy" --report cuda_launches
	[[ "$output" == *"axpy_kernel(float*, float const*, float, int)"* ]]
	# the driver calls the runtime makes are nested: not separate API calls in the tables
	jq -e '.cuda_api_sum | map(select(.name == "cuLaunchKernel")) | length == 0' "$WORK/streams.json"
}

@test "nvcc memory program: allocations, frees, failed frees and copies per direction equal its lines" {
	record_and_compare memory "$TGT/memory_errors"
	# every block was freed: nothing outstanding, no leak candidates
	jq -e '.gpu_mem | all(.outstanding_bytes == 0)' "$WORK/memory.json"
	run "$GPUSPY" report "$WORK/memory.gpuspy" --report cuda_api_errors --format json
	echo "$output" | jq -e '.[] | select(.name == "cudaFree" and .error == "cudaErrorInvalidValue") | .calls == 2'
}

@test "Python ctypes program on the driver API: cuLaunchKernel, cuLaunchKernelEx and a graph launch" {
	record_and_compare ctypes python3 "$ROOT/tests/targets/cuda/runtime_ctypes.py"
	run "$GPUSPY" report "$WORK/ctypes.gpuspy" --report cuda_launches --format json
	echo "$output" | jq -e '.[] | select(.name == "fill_kernel") | .api == "cuLaunchKernelEx" and .grids == "5,1,1" and .blocks == "128,1,1"'
}

@test "-p attaches to a CUDA process started before gpuspy: kernels named from its ELF symbols; detach leaves it running" {
	start_loop a 4
	start_gpuspy -p "$LOOP_PID"
	grep -q "probing CUDA runtime in pid $LOOP_PID" "$WORK/gpuspy.err"
	echo "go 7" >&4
	wait_for_line "$WORK/a.out" "BATCH done n=7"
	stop_gpuspy
	# detached: the process goes on and stays correct
	echo "go 2" >&4
	wait_for_line "$WORK/a.out" "BATCH done n=2"
	echo exit >&4
	exec 4>&-
	wait "$LOOP_PID"
	grep -q "DONE ok" "$WORK/a.out"
	[ "$(launches_of "$WORK/t.gpuspy" _Z11tick_kernelPj)" -eq 7 ]
	run "$GPUSPY" report "$WORK/t.gpuspy" --report cuda_launches
	[[ "$output" == *"unnamed kernel launches: 0"* ]]
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_api_sum --format json |
		jq -e '(.[] | select(.name == "cudaMemcpyAsync") | .calls == 7) and (.[] | select(.name == "cudaStreamSynchronize") | .calls == 7)'
}

@test "a CUDA library dlopen-ed after gpuspy attached: every launch counted under its kernel's name" {
	mkfifo "$WORK/ctl"
	env LD_LIBRARY_PATH="$FC" "$TGT/dlopen_host" "$WORK/ready" "$TGT/libdlkernels.so" 4 \
		< "$WORK/ctl" > "$WORK/dl.out" 3>&- &
	LOOP_PIDS=$!
	exec 4> "$WORK/ctl"
	wait_for_file "$WORK/ready"
	# not a CUDA process yet: libcudart is loaded only by the dlopen
	run ! grep -q libcudart "/proc/$LOOP_PIDS/maps"
	start_gpuspy -p "$LOOP_PIDS"
	echo go >&4
	exec 4>&-
	wait "$LOOP_PIDS"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
	grep -q "DONE ok" "$WORK/dl.out"
	grep -q "probing CUDA runtime in pid $LOOP_PIDS: .*libcudart.so.13" "$WORK/gpuspy.err"
	[ "$(launches_of "$WORK/t.gpuspy" _Z15dl_alpha_kernelPfi)" -eq 4 ]
	[ "$(launches_of "$WORK/t.gpuspy" _Z14dl_beta_kernelPi)" -eq 8 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report "$REPORTS" --format json > "$WORK/dl.json"
	python3 "$ROOT/tests/lib/check_cuda_counts.py" "$WORK/dl.out" "$WORK/dl.json"
	# named at registration, inside dlopen, not from ELF symbols afterwards
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_api_sum --format json |
		jq -e '.[] | select(.name == "__cudaRegisterFunction") | .calls == 2'
}

@test "two CUDA processes at once, one exiting mid-recording" {
	start_loop a 4
	pid_a=$LOOP_PID
	start_loop b 5
	pid_b=$LOOP_PID
	start_gpuspy -p "$pid_a,$pid_b"
	echo "go 3" >&4
	echo "go 5" >&5
	wait_for_line "$WORK/a.out" "BATCH done n=3"
	wait_for_line "$WORK/b.out" "BATCH done n=5"
	echo exit >&4
	exec 4>&-
	wait "$pid_a"
	echo "go 2" >&5
	wait_for_line "$WORK/b.out" "BATCH done n=2"
	stop_gpuspy
	echo exit >&5
	exec 5>&-
	wait "$pid_b"
	[ "$(launches_of "$WORK/t.gpuspy" _Z11tick_kernelPj)" -eq 10 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_libs --format json |
		jq -e --argjson a "$pid_a" --argjson b "$pid_b" '[.[] | .pid] | unique == ([$a, $b] | sort)'
	# the exited process freed its buffers, allocated before gpuspy attached
	"$GPUSPY" report "$WORK/t.gpuspy" --report gpu_mem --format json |
		jq -e --argjson a "$pid_a" '.[] | select(.pid == $a and .kind == "device") | .unknown_frees == 2 and .outstanding_bytes == 0'
}

@test "-a finds a CUDA process on the host and a CUDA program started later" {
	start_loop a 4
	start_gpuspy -a
	echo "go 4" >&4
	wait_for_line "$WORK/a.out" "BATCH done n=4"
	env LD_LIBRARY_PATH="$FC" "$TGT/dlopen_host" "$WORK/r2" "$TGT/libdlkernels.so" 1 \
		< /dev/null > "$WORK/dl.out"
	stop_gpuspy
	[ "$(launches_of "$WORK/t.gpuspy" _Z11tick_kernelPj)" -eq 4 ]
	[ "$(launches_of "$WORK/t.gpuspy" _Z14dl_beta_kernelPi)" -eq 2 ]
}

@test "NVIDIA's own libcudart without a driver: probes resolve and fire, failures appear with their error name" {
	local cudart=${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart.so.13
	[ -e "$cudart" ] || skip "needs NVIDIA's libcudart.so.13"
	run "$GPUSPY" record -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$(dirname "$cudart")" "$TGT/no_driver"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"probing CUDA runtime in pid "*"libcudart.so.13"* ]]
	printf '%s\n' "$output" | sed -n 's/^RESULT api=\([^ ]*\) error=\(.*\)$/\1 \2/p' | sort > "$WORK/expected"
	[ "$(grep -c -v cudaSuccess "$WORK/expected")" -eq 5 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_api_errors --format json |
		jq -r '.[] | select(.name | test("^(cudaMalloc|cudaMemcpy|__cudaLaunchKernel|cudaDeviceSynchronize|cudaFree)$")) | "\(.name) \(.error)"' |
		sort > "$WORK/actual"
	diff -u "$WORK/expected" "$WORK/actual"
	# the kernel was still named at registration, before any call failed
	run "$GPUSPY" report "$WORK/t.gpuspy" --report cuda_api_sum --format json
	echo "$output" | jq -e '.[] | select(.name == "__cudaRegisterFunction") | .calls == 1'
}

@test "--no-cuda probes nothing" {
	run "$GPUSPY" record --no-cuda -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" "$TGT/memory_errors"
	[ "$status" -eq 0 ]
	[[ "$output" != *"probing CUDA"* ]]
	run "$GPUSPY" report "$WORK/t.gpuspy" --report cuda_api_sum --format json
	[ "$output" = "[]" ]
}

@test "Chrome export: CUDA API spans nest on their thread, with kernel names, and a GPU memory counter" {
	run "$GPUSPY" record -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" "$TGT/streams_events"
	[ "$status" -eq 0 ]
	"$GPUSPY" export "$WORK/t.gpuspy" -o "$WORK/t.json"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/t.json"
	jq -e '[.traceEvents[] | select(.cat == "cuda_runtime" and .name == "__cudaLaunchKernel" and .args.kernel == "spin_kernel(long long)")] | length == 8' "$WORK/t.json"
	jq -e '[.traceEvents[] | select(.cat == "cuda_driver" and .args.nested == true)] | length > 0' "$WORK/t.json"
	jq -e '[.traceEvents[] | select(.ph == "C" and .name == "GPU memory")] | length == 4' "$WORK/t.json"
}
