#!/usr/bin/env bats
# The CUPTI bridge (cupti_bridge/, build/libgpuspy_cupti.so) on the simulated CUDA stack: real
# GPU kernel, copy and memset times joined to the API calls that caused them, gated by
# gpuspy's attachment, with the CUPTI-busy fallback, NVTX ranges and the Kineto export.
# bats file_tags=bpf,cuda,cupti

load helpers
bats_require_minimum_version 1.5.0

FC=$BUILD/fakecuda
TGT=$BUILD/targets/cuda
BRIDGE=$BUILD/libgpuspy_cupti.so
GPU_REPORTS=cuda_gpu_trace,gpu_util,gpu_mode

setup() {
	require_bpf
	require_cmd jq
	require_cmd python3
	[ -e "$FC/libcudart.so.13" ] && [ -e "$TGT/cuda_loop" ] || skip "run 'make fakecuda' first"
	[ -e "$BRIDGE" ] || skip "the CUPTI bridge was not built (no CUPTI headers)"
	WORK=$(mktemp -d)
}

teardown() {
	for p in ${LOOP_PID:-} ${GPUSPY_PID:-}; do kill "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}

# Records a program with the bridge injected by gpuspy and checks its GPU records against
# its own lines and the simulator's timing (tests/lib/check_gpu_records.py).
record_and_check_gpu() { # NAME KERNEL=NS... -- COMMAND...
	local name=$1 kernels=()
	shift
	while [ "$1" != "--" ]; do kernels+=("$1"); shift; done
	shift
	run "$GPUSPY" record -f -o "$WORK/$name.gpuspy" -- env LD_LIBRARY_PATH="$FC" "$@"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"DONE ok"* ]]
	[[ "$output" == *"gpuspy: CUPTI bridge in pid "*"libgpuspy_cupti.so: turned on"* ]]
	printf '%s\n' "$output" > "$WORK/$name.out"
	"$GPUSPY" report "$WORK/$name.gpuspy" --report "$GPU_REPORTS" --format json > "$WORK/$name.json"
	"$GPUSPY" export "$WORK/$name.gpuspy" -o "$WORK/$name.chrome.json"
	python3 "$ROOT/tests/lib/check_gpu_records.py" "$WORK/$name.out" "$WORK/$name.json" \
		"$WORK/$name.chrome.json" "${kernels[@]}"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/$name.chrome.json"
	jq -e '.gpu_mode | length == 1 and .[0].mode == "cupti"' "$WORK/$name.json"
	run "$GPUSPY" report "$WORK/$name.gpuspy" --report gpu_unmatched
	[[ "$output" == *"gpu unmatched: 0 gpu records without api record, 0 api records without uprobe span, 0 launches without gpu record"* ]]
}

@test "nvcc program with streams: every kernel once with its name, shape, simulated duration and one flow from its launch" {
	record_and_check_gpu streams _Z11spin_kernelx=20000000 -- "$TGT/streams_events"
	# as many spin kernels as the program launched (it launches its overlap pair again when
	# the host was slower than a kernel), each of the simulated 20 ms
	spins=$(grep -c '^LAUNCH name=_Z11spin_kernelx ' "$WORK/streams.out")
	"$GPUSPY" report "$WORK/streams.gpuspy" --report cuda_gpu_kern_sum --format json |
		jq -e --argjson n "$spins" '.[] | select(.mangled == "_Z11spin_kernelx") | .instances == $n and .min_ns == 20000000 and .max_ns == 20000000'
	# the two spin kernels of check_overlap ran at once: their GPU intervals, on two streams,
	# intersect, and the GPU was busy for less than its streams' busy times added up, by at
	# least that intersection
	jq -e '[.cuda_gpu_trace[] | select(.mangled == "_Z11spin_kernelx" and .block_x == 32)] as $k
		| [$k[] as $a | $k[] | select(.stream != $a.stream and .start_ns < $a.start_ns + $a.duration_ns
			and $a.start_ns < .start_ns + .duration_ns)
		   | ([.start_ns + .duration_ns, $a.start_ns + $a.duration_ns] | min)
		     - ([.start_ns, $a.start_ns] | max)] as $both
		| ($both | length) > 0 and
		  ([.gpu_util[] | select(.stream != "all") | .busy_ns] | add)
		  - (.gpu_util[] | select(.stream == "all") | .busy_ns) >= ($both | max)' "$WORK/streams.json"
}

@test "nvcc memory program: copies and memsets with their bytes, directions and simulated durations" {
	record_and_check_gpu memory -- "$TGT/memory_errors"
	"$GPUSPY" report "$WORK/memory.gpuspy" --report cuda_gpu_mem_size_sum --format json |
		jq -e '.[] | select(.operation == "[CUDA memcpy Device-to-Host]") | .count == 3'
}

@test "bridge loaded but no recorder: CUPTI untouched; attach, detach, attach: GPU records only for gpuspy's windows" {
	mkfifo "$WORK/ctl"
	env LD_LIBRARY_PATH="$FC" CUDA_INJECTION64_PATH="$BRIDGE" GPUSPY_CUPTI_LOG="$WORK/bridge.log" \
		"$TGT/cuda_loop" "$WORK/ready" < "$WORK/ctl" > "$WORK/loop.out" 3>&- &
	LOOP_PID=$!
	exec 4> "$WORK/ctl"
	wait_for_file "$WORK/ready"
	echo "go 5" >&4
	wait_for_line "$WORK/loop.out" "BATCH done n=5"
	# the bridge is mapped, and never subscribed to CUPTI
	grep -q libgpuspy_cupti "/proc/$LOOP_PID/maps"
	[ ! -s "$WORK/bridge.log" ]
	for window in 1 2; do
		"$GPUSPY" record -p "$LOOP_PID" -o "$WORK/w$window.gpuspy" 2> "$WORK/w$window.err" 3>&- &
		GPUSPY_PID=$!
		wait_for_line "$WORK/w$window.err" "gpuspy: recording"
		wait_for_count "$WORK/bridge.log" "activity on: kernel" "$window"
		echo "go $((window + 2))" >&4
		wait_for_line "$WORK/loop.out" "BATCH done n=$((window + 2))"
		kill -INT "$GPUSPY_PID"
		wait "$GPUSPY_PID"
		GPUSPY_PID=
		# detached: untraced work in between
		echo "go 4" >&4
		wait_for_line "$WORK/loop.out" "BATCH done n=4"
		: > "$WORK/loop.out"
	done
	echo exit >&4
	exec 4>&-
	wait "$LOOP_PID"
	LOOP_PID=
	[ "$(grep -c cuptiUnsubscribe "$WORK/bridge.log")" -eq 2 ]
	for window in 1 2; do
		"$GPUSPY" report "$WORK/w$window.gpuspy" --report cuda_gpu_kern_sum,cuda_gpu_mem_size_sum --format json > "$WORK/w.json"
		jq -e --argjson n $((window + 2)) '(.cuda_gpu_kern_sum | map(.instances) | add) == $n and (.cuda_gpu_mem_size_sum | map(.count) | add) == $n' "$WORK/w.json"
	done
	# CUPTI emits its device records when cuInit initialises the driver, long before these
	# windows: each got them dumped by cuptiActivityEnableAndDump, with the values
	# cudaGetDeviceProperties reports (the oracle: device_props, run on the same simulator)
	env LD_LIBRARY_PATH="$FC" "$TGT/device_props" > "$WORK/props.out"
	for window in 1 2; do
		"$GPUSPY" export "$WORK/w$window.gpuspy" --format kineto -o "$WORK/k$window.json"
		python3 "$ROOT/tests/lib/check_device_props.py" "$WORK/props.out" "$WORK/k$window.json"
	done
}

@test "-p turns the bridge on in its target only, not in another process that maps the same bridge" {
	for tag in a b; do
		mkfifo "$WORK/$tag.ctl"
		env LD_LIBRARY_PATH="$FC" CUDA_INJECTION64_PATH="$BRIDGE" GPUSPY_CUPTI_LOG="$WORK/$tag.log" \
			"$TGT/cuda_loop" "$WORK/$tag.ready" < "$WORK/$tag.ctl" > "$WORK/$tag.out" 3>&- &
		eval "pid_$tag=$!"
		LOOP_PID="${LOOP_PID:-} $!"
	done
	exec 4> "$WORK/a.ctl" 5> "$WORK/b.ctl"
	wait_for_file "$WORK/a.ready"
	wait_for_file "$WORK/b.ready"
	"$GPUSPY" record -p "$pid_a" -o "$WORK/t.gpuspy" 2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_count "$WORK/a.log" "activity on: kernel" 1
	echo "go 3" >&4
	echo "go 3" >&5
	wait_for_line "$WORK/a.out" "BATCH done n=3"
	wait_for_line "$WORK/b.out" "BATCH done n=3"
	kill -INT "$GPUSPY_PID"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
	echo exit >&4
	echo exit >&5
	exec 4>&- 5>&-
	wait $LOOP_PID
	LOOP_PID=
	[ ! -s "$WORK/b.log" ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_gpu_kern_sum --format json |
		jq -e '(map(.instances) | add) == 3'
}

@test "CUPTI already subscribed: said on stderr and in the trace, uprobes still trace every call" {
	run "$GPUSPY" record -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" python3 "$ROOT/tests/targets/cuda/cupti_busy.py"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"SUBSCRIBED ok"* && "$output" == *"DONE ok"* ]]
	[[ "$output" == *"CUPTI already has a subscriber"* ]]
	"$GPUSPY" report "$WORK/t.gpuspy" --report gpu_mode --format json |
		jq -e '.[0].mode | test("uprobes-only.*CUPTI busy")'
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_api_sum --format json |
		jq -e '(.[] | select(.name == "cudaMemcpy") | .calls == 3)'
	run "$GPUSPY" report "$WORK/t.gpuspy" --report cuda_gpu_kern_sum,cuda_gpu_mem_time_sum --format json
	echo "$output" | jq -e '(.cuda_gpu_kern_sum | length == 0) and (.cuda_gpu_mem_time_sum | length == 0)'
}

@test "NVTX ranges: nesting, styles and durations as the program measured them" {
	run "$GPUSPY" record -f --osrt-threshold 1ms -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" "$TGT/nvtx_ranges"
	echo "$output"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" | sed -n 's/^NVTX style=\([^ ]*\) name=\([^ ]*\) depth=[0-9]* ns=\([0-9]*\)$/\1 \2 \3/p' > "$WORK/expected"
	[ "$(wc -l < "$WORK/expected")" -eq 4 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report nvtx_sum --format json > "$WORK/nvtx.json"
	while read -r style name ns; do
		# the program's own clock brackets the range: it is never longer than measured there
		jq -e --arg s "$style" --arg n "$name" --argjson ns "$ns" \
			'.[] | select(.style == $s and .range == $n) | .instances == 1 and .total_ns <= $ns' \
			"$WORK/nvtx.json"
	done < "$WORK/expected"
	# and each range holds, in time, what the program did inside it: its sleep (a
	# clock_nanosleep span of the same thread, at least as long as asked), up to the clock
	# alignment bound; data_load is inside step on the same thread (push/pop nesting)
	"$GPUSPY" export "$WORK/t.gpuspy" -o "$WORK/t.json"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/t.json"
	err=$("$GPUSPY" report "$WORK/t.gpuspy" --report gpu_mode --format json | jq '.[0].clock_error_ns')
	jq -e --argjson err "$err" '
		def ns: . * 1000 | round;
		[.traceEvents[] | select(.cat == "user_annotation")] as $r
		| ($r | map(select(.ph == "X") | {key: .name, value: {tid, s: (.ts | ns),
			e: ((.ts + .dur) | ns)}}) | from_entries) as $x
		| ($r[] | select(.ph == "b" and .name == "io")) as $b
		| ($r[] | select(.ph == "e" and .name == "io")) as $e
		| ($x + {io: {tid: $b.tid, s: ($b.ts | ns), e: ($e.ts | ns)}}) as $range
		| [.traceEvents[] | select(.cat == "os_runtime" and .name == "clock_nanosleep")
			| {tid, s: (.ts | ns), e: ((.ts + .dur) | ns)}] as $sleeps
		| def holds($in; $asked): any($sleeps[]; .tid == $in.tid and .e - .s >= $asked
			and $in.s <= .s + $err and .e <= $in.e + $err);
		  holds($range.data_load; 10000000) and holds($range.step; 10000000)
		  and holds($range.io; 5000000) and $range.step.tid == $range.data_load.tid
		  and $range.step.s <= $range.data_load.s and $range.data_load.e <= $range.step.e' \
		"$WORK/t.json"
}

@test "Kineto export: the dialect Holistic Trace Analysis and TensorBoard load" {
	run "$GPUSPY" record -q -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" "$TGT/streams_events"
	[ "$status" -eq 0 ]
	launches=$(grep -c '^LAUNCH ' <<< "$output")
	"$GPUSPY" export "$WORK/t.gpuspy" --format kineto -o "$WORK/k.json"
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/k.json"
	# HTA reads the rank with a regex that needs the space
	grep -q '"rank": 0' "$WORK/k.json"
	jq -e --argjson n "$launches" '[.traceEvents[] | select(.cat == "kernel")] | length == $n' "$WORK/k.json"
	# check_kineto.py holds the rules (one API event per correlation id, no launch name without
	# one, ts and dur to the ns with dur >= 1 ns, no dur off complete events); here, what this
	# nvcc 13 program shows of them: its <<<>>> launches are CUPTI's cudaLaunchKernel, the stub
	# symbol kept, each that did not fail with its kernel's correlation; the driver launches nested in them are
	# there, renamed and without it; the GPU's entry in deviceProperties
	jq -e --argjson n "$launches" '
		[.traceEvents[] | select(.cat == "cuda_runtime" and .name == "cudaLaunchKernel"
			and .args.error == null)] as $l
		| [.traceEvents[] | select(.cat == "kernel") | .args.correlation] as $k
		| [.traceEvents[] | select(.cat == "cuda_driver" and .args.nested)] as $d
		| ($l | length == $n) and all($l[]; .args.symbol == "__cudaLaunchKernel")
		and ($l | map(.args.correlation) | sort) == ($k | sort)
		and any($d[]; .name == "nested cuLaunchKernel")
		and all($d[]; .args.correlation == null)
		and ([.traceEvents[] | select(.name | test("^__cudaLaunch|^cuLaunchKernel"))] | length == 0)
		and (.deviceProperties | map(.id) == [0])' "$WORK/k.json"
	# the Chrome dialect keeps the symbols the uprobes saw
	"$GPUSPY" export "$WORK/t.gpuspy" -o "$WORK/c.json"
	jq -e '[.traceEvents[] | select(.name == "__cudaLaunchKernel")] | length > 0' "$WORK/c.json"
}

@test "Kineto export: deviceProperties of each GPU are what cudaGetDeviceProperties reports" {
	# the program prints its devices' properties under Kineto's keys (the oracle: the runtime
	# and driver, not CUPTI), then launches a kernel on each
	run "$GPUSPY" record -q -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" "$TGT/device_props"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"DONE ok"* ]]
	printf '%s\n' "$output" > "$WORK/props.out"
	"$GPUSPY" export "$WORK/t.gpuspy" --format kineto -o "$WORK/k.json"
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/k.json"
	python3 "$ROOT/tests/lib/check_device_props.py" "$WORK/props.out" "$WORK/k.json"
}

@test "Kineto export: a GPU without a CUPTI device record keeps its id and \"GPU N\"" {
	# the simulated CUPTI refuses DEVICE, as a CUPTI that cannot enable the kind would: the
	# bridge says so and records everything else
	run "$GPUSPY" record -q -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" \
		FAKECUDA_CUPTI_REFUSE_DEVICE=1 "$TGT/device_props"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"DONE ok"* ]]
	"$GPUSPY" export "$WORK/t.gpuspy" --format kineto -o "$WORK/k.json"
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/k.json"
	jq -e '(.deviceProperties == [{"id": 0, "name": "GPU 0"}])
		and ([.traceEvents[] | select(.cat == "kernel")] | length == 1)' "$WORK/k.json"
	# the refusal is in the trace (CUPTI_ERROR_NOT_COMPATIBLE is 14), the bridge stayed on
	"$GPUSPY" report "$WORK/t.gpuspy" --report gpu_mode --format json |
		jq -e '.[0] | .mode == "cupti" and .ops == 1 and (.message | test("CUptiResult 14"))'
}

@test "--no-cupti: no bridge injected, CUDA calls still traced by uprobes" {
	run "$GPUSPY" record --no-cupti -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" sh -c 'echo "INJECT=${CUDA_INJECTION64_PATH:-none}"; exec "$0"' "$TGT/memory_errors"
	[ "$status" -eq 0 ]
	[[ "$output" == *"INJECT=none"* && "$output" != *"CUPTI bridge in pid"* ]]
	run "$GPUSPY" report "$WORK/t.gpuspy" --report cuda_api_sum,cuda_gpu_trace --format json
	echo "$output" | jq -e '(.cuda_api_sum | length > 0) and (.cuda_gpu_trace | length == 0)'
}
