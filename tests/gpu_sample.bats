#!/usr/bin/env bats
# --gpu-sample ON/PERIOD of `gpuspy top` and `gpuspy serve`: the CUPTI bridge's kernel records
# are taken ON of every PERIOD only, and GPU busy is estimated from those windows and marked
# so. The workload is tests/targets/cuda/duty_loop.cu: one 10 ms kernel every 20 ms on the
# simulated GPU, so the true busy share is 50% and every launch is counted by the program.
# Checks are counts and broad ratios (the machine may be loaded): the estimate near 50%, the
# kernels seen near ON/PERIOD of those launched, launches exact, and the bridge's own log
# saying it paused and resumed its kernel records.
# bats file_tags=bpf,cuda,live

load helpers
load lib/prometheus
bats_require_minimum_version 1.5.0

FC=$BUILD/fakecuda
TGT=$BUILD/targets/cuda
BRIDGE=$BUILD/libgpuspy_cupti.so
RUN_MS=9000 # three whole 1s/3s periods: the windows cover a third of the run, whatever the phase
KERNEL_NS=10000000

setup() {
	WORK=$(mktemp -d)
	PIDS=()
}

teardown() {
	stop_pids "${PIDS[@]}"
	rm -rf "$WORK"
}

needs_gpu_stack() {
	require_bpf
	require_cmd jq
	[ -e "$FC/libcudart.so.13" ] && [ -e "$TGT/duty_loop" ] || skip "run 'make fakecuda' first"
	[ -e "$BRIDGE" ] || skip "the CUPTI bridge was not built (no CUPTI headers)"
}

# Starts duty_loop with the bridge loaded at its start, driven through a fifo on fd 5; sets
# LOOP_PID once it is ready.
start_loop() {
	mkfifo "$WORK/loop.ctl"
	exec 5<>"$WORK/loop.ctl"
	env LD_LIBRARY_PATH="$FC" CUDA_INJECTION64_PATH="$BRIDGE" GPUSPY_CUPTI_LOG="$WORK/bridge.log" \
		"$TGT/duty_loop" "$WORK/loop.ready" < "$WORK/loop.ctl" > "$WORK/loop.out" 2>&1 3>&- &
	LOOP_PID=$!
	PIDS+=("$LOOP_PID")
	wait_for_file "$WORK/loop.ready"
}

# Starts serve -p LOOP_PID with OPTIONS on a free port (PORT) and waits until it collects.
start_serve() { # [OPTIONS...]
	port=$(prom_free_port)
	"$GPUSPY" serve --listen "127.0.0.1:$port" -p "$LOOP_PID" "$@" \
		> "$WORK/serve.out" 2> "$WORK/serve.err" 3>&- &
	PIDS+=($!)
	wait_for_line "$WORK/serve.err" "gpuspy: collecting from"
}

# Runs the workload for RUN_MS and waits for it (up to a minute); prints its launch count.
run_load() {
	local i before
	before=$(grep -c "RUN done" "$WORK/loop.out")
	echo "run $RUN_MS" >&5
	for i in $(seq 600); do
		[ "$(grep -c "RUN done" "$WORK/loop.out")" -gt "$before" ] && break
		sleep 0.1
	done
	sed -n 's/^RUN done n=//p' "$WORK/loop.out" | tail -1
}

# Whether A/B lies in [LO, HI] (decimal fractions).
ratio_in() { # A B LO HI
	awk -v a="$1" -v b="$2" -v lo="$3" -v hi="$4" 'BEGIN { r = a / b; exit !(b > 0 && r >= lo && r <= hi) }' ||
		{ echo "$1 / $2 not in [$3, $4]" >&2; return 1; }
}

@test "--gpu-sample: a bad value is a one-line usage error, like the others" {
	for cmd in top serve; do
		for bad in 5s/1s abc 0s/1s 1s/ /1s 1s/3x 500ms/1s; do
			run -2 "$GPUSPY" "$cmd" --gpu-sample "$bad"
			[ "${#lines[@]}" -eq 1 ]
			[[ "$output" == "gpuspy: invalid value '$bad' for --gpu-sample: expected "* ]]
		done
		# windows are whole refreshes: with a 500 ms interval a 500 ms window is fine
		run -2 "$GPUSPY" "$cmd" --gpu-sample 1500ms/3s
		run -2 "$GPUSPY" "$cmd" --interval 500ms --gpu-sample 1500ms/3s bogus
		[[ "$output" == *"takes no arguments"* ]]
	done
	run -0 "$GPUSPY" top --help
	[[ "$output" == *"--gpu-sample ON/PERIOD"* ]]
	run -0 "$GPUSPY" serve --help
	[[ "$output" == *"--gpu-sample ON/PERIOD"* ]]
}

@test "top --gpu-sample 1s/3s: GPU% estimated near the true 50% and marked, kernels seen about a third, launches exact" {
	needs_gpu_stack
	start_loop
	"$GPUSPY" top -p "$LOOP_PID" --format json --gpu-sample 1s/3s -d 13s \
		> "$WORK/top.json" 2> "$WORK/top.err" 3>&- &
	PIDS+=($!)
	wait_for_line "$WORK/top.err" "gpuspy: watching"
	n=$(run_load)
	[ "$n" -ge 300 ]
	wait "${PIDS[-1]}"
	jq -c --argjson p "$LOOP_PID" '.[] | select(.pid == $p) | [.gpu_busy_pct, .gpu_sample, .launches, .kernels]' "$WORK/top.json" >&2
	# every snapshot says its GPU figures are sampled, and at which duty
	[ "$(jq -c --argjson p "$LOOP_PID" '.[] | select(.pid == $p) | .gpu_sample' "$WORK/top.json" | sort -u)" = '"1s/3s"' ]
	last=$(jq -c --argjson p "$LOOP_PID" '.[] | select(.pid == $p)' "$WORK/top.json" | tail -1)
	# launches come from uprobes: exact whatever the sampling
	[ "$(jq .launches <<< "$last")" -eq "$n" ]
	# the bridge recorded kernels in about a third of the run (1 s of every 3), not all
	ratio_in "$(jq .kernels <<< "$last")" "$n" 0.2 0.5
	# the estimate: the window's busy share, about 50%; most snapshots in a broad band
	good=$(jq --argjson p "$LOOP_PID" 'select(any(.[]; .pid == $p)) | .[] | select(.pid == $p) | select(.gpu_busy_pct >= 35 and .gpu_busy_pct <= 65)' "$WORK/top.json" | jq -s length)
	all=$(jq --argjson p "$LOOP_PID" '.[] | select(.pid == $p)' "$WORK/top.json" | jq -s length)
	[ "$good" -ge $((all / 2)) ]
	! jq -e --argjson p "$LOOP_PID" '.[] | select(.pid == $p) | select(.gpu_busy_pct > 80)' "$WORK/top.json" || false
	# the bridge itself switched its kernel records off and on again
	grep -q "kernels paused" "$WORK/bridge.log"
	grep -A1 "kernels paused" "$WORK/bridge.log" | grep -q "kernels on"
}

@test "serve --gpu-sample 1s/3s: busy seconds estimated near the truth and labelled sampled, launches exact" {
	needs_gpu_stack
	start_loop
	start_serve --gpu-sample 1s/3s
	n=$(run_load)
	[ "$n" -ge 300 ]
	# a whole period more, so the last window's records are in
	sleep 4
	curl -sf "http://127.0.0.1:$port/metrics" > "$WORK/metrics"
	grep -E '^gpuspy_(process_(gpu|cuda_launches)|gpu_sample)' "$WORK/metrics" >&2
	sel="pid=\"$LOOP_PID\""
	launches=$(awk -v s="$sel" '/^gpuspy_process_cuda_launches_total\{/ && index($0, s) {print $NF}' "$WORK/metrics")
	[ "$launches" -eq "$n" ]
	busy_line=$(grep "^gpuspy_process_gpu_busy_seconds_total{.*$sel" "$WORK/metrics")
	[[ "$busy_line" == *'sampled="1s/3s"'* ]]
	grep -q "^gpuspy_process_gpu_kernels_total{.*$sel.*sampled=\"1s/3s\"" "$WORK/metrics"
	grep -q '^gpuspy_gpu_sample_ratio{sample="1s/3s"} 0.333' "$WORK/metrics"
	# the estimate (what the windows saw, times 3) against the truth: n kernels of 10 ms
	ratio_in "${busy_line##* }" "$(awk -v n="$n" -v k="$KERNEL_NS" 'BEGIN { print n * k / 1e9 }')" 0.6 1.4
	# kernels: the estimate near those launched, so those seen were about a third
	kernels=$(grep "^gpuspy_process_gpu_kernels_total{.*$sel" "$WORK/metrics")
	ratio_in "${kernels##* }" "$n" 0.6 1.4
	grep -q "kernels paused" "$WORK/bridge.log"
}

@test "serve without --gpu-sample: GPU figures exact and unlabelled, the ratio 1; off: no kernels, the ratio 0" {
	needs_gpu_stack
	start_loop
	start_serve
	# the bridge turns CUPTI on at one of its polls after the attach: every kernel from then on
	wait_for_line "$WORK/bridge.log" "activity on"
	RUN_MS=2000
	n=$(run_load)
	sleep 2
	curl -sf "http://127.0.0.1:$port/metrics" > "$WORK/metrics"
	sel="pid=\"$LOOP_PID\""
	grep -q '^gpuspy_gpu_sample_ratio{sample="always"} 1$' "$WORK/metrics"
	! grep -q 'sampled=' "$WORK/metrics" || false
	kernels=$(grep "^gpuspy_process_gpu_kernels_total{.*$sel" "$WORK/metrics")
	[ "${kernels##* }" -eq "$n" ]
	! grep -q "kernels paused" "$WORK/bridge.log" || false
	kill "${PIDS[-1]}"
	wait "${PIDS[-1]}" || true
	start_serve --gpu-sample off
	m=$(run_load)
	sleep 2
	curl -sf "http://127.0.0.1:$port/metrics" > "$WORK/metrics"
	grep -q '^gpuspy_gpu_sample_ratio{sample="off"} 0$' "$WORK/metrics"
	! grep -q "^gpuspy_process_gpu_kernels_total{.*$sel.* [1-9]" "$WORK/metrics" || false
	launches=$(grep "^gpuspy_process_cuda_launches_total{.*$sel" "$WORK/metrics")
	[ "${launches##* }" -eq "$m" ]
}

@test "live views ask the bridge for kernel records alone; a record attached meanwhile gets the per-call records, until it leaves" {
	needs_gpu_stack
	start_loop
	start_serve
	wait_for_line "$WORK/bridge.log" "activity on"
	# kernels and devices only: no API, synchronisation, overhead, copy or memset records
	grep "activity on" "$WORK/bridge.log" >&2
	grep -q "activity on: kernel device$" "$WORK/bridge.log"
	RUN_MS=1000
	n=$(run_load)
	sleep 2
	curl -sf "http://127.0.0.1:$port/metrics" > "$WORK/metrics"
	kernels=$(grep "^gpuspy_process_gpu_kernels_total{.*pid=\"$LOOP_PID\"" "$WORK/metrics")
	[ "${kernels##* }" -eq "$n" ]
	# record attaches while serve keeps the bridge's session open: it asks for the rest
	"$GPUSPY" record -f -o "$WORK/r.gpuspy" -p "$LOOP_PID" > /dev/null 2> "$WORK/rec.err" 3>&- &
	rec=$!
	PIDS+=("$rec")
	wait_for_line "$WORK/bridge.log" "call records on"
	m=$(run_load)
	kill -INT "$rec"
	wait "$rec"
	# each of its kernels is joined to its launch through CUPTI's API record
	run -0 "$GPUSPY" report "$WORK/r.gpuspy" --report gpu_unmatched
	[[ "$output" == *"gpu unmatched: 0 gpu records without api record, 0 api records without uprobe span, 0 launches without gpu record"* ]]
	"$GPUSPY" report "$WORK/r.gpuspy" --report cuda_gpu_kern_sum --format json |
		jq -e --argjson m "$m" '.[] | select(.mangled == "_Z11spin_kernelx") | .instances == $m'
	# record gone, serve still there: back to kernels alone
	wait_for_line "$WORK/bridge.log" "call records off"
	kill -0 "${PIDS[-2]}"
}
