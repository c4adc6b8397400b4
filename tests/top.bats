#!/usr/bin/env bats
# `gpuspy top`: the live view of the host's GPU users, on the simulated CUDA stack: four
# cuda_loop processes seen four ways (bridge at start, bridge injected at attach, bridge
# injected after a first CUDA call made while top watched, uprobes only), each row's counts
# against the program's own (tests/targets/cuda/cuda_loop.cu: "go N"
# makes N launches, N 4096-byte host-to-device copies, N synchronisations).
# bats file_tags=bpf,cuda,live

load helpers
load lib/cgroups

FC=$BUILD/fakecuda
TGT=$BUILD/targets/cuda
BRIDGE=$BUILD/libgpuspy_cupti.so
N=40

setup() {
	require_bpf
	require_cmd jq
	[ -e "$FC/libcudart.so.13" ] && [ -e "$TGT/cuda_loop" ] || skip "run 'make fakecuda' first"
	[ -e "$BRIDGE" ] || skip "the CUPTI bridge was not built (no CUPTI headers)"
	WORK=$(mktemp -d)
	PIDS=()
}

teardown() {
	stop_pids "${PIDS[@]}" ${TOP_PID:-}
	cg_cleanup
	rm -rf "$WORK"
}

# Starts cuda_loop NAME, driven through a fifo on fd FD, with extra env; sets LAST_PID.
start_loop() { # NAME FD [ENV...]
	local name=$1 fd=$2
	shift 2
	mkfifo "$WORK/$name.ctl"
	eval "exec $fd<>\"$WORK/$name.ctl\""
	env LD_LIBRARY_PATH="$FC" "$@" "$TGT/cuda_loop" "$WORK/$name.ready" \
		< "$WORK/$name.ctl" > "$WORK/$name.out" 2>&1 3>&- &
	LAST_PID=$!
	PIDS+=("$LAST_PID")
}

row() { # PID KEY
	jq --argjson p "$1" --arg k "$2" '.[] | select(.pid == $p) | .[$k]' "$WORK/top.json"
}

@test "top --once --format json: bridged, injected at attach, injected at its first CUDA call, uprobe-only, each with its mode and exact counts" {
	start_loop a 5 CUDA_INJECTION64_PATH="$BRIDGE"
	A=$LAST_PID
	start_loop b 6
	B=$LAST_PID
	wait_for_file "$WORK/a.ready"
	wait_for_file "$WORK/b.ready"
	# one interval long enough to start the other two and run the batches in them
	"$GPUSPY" top --once --interval 8s --format json > "$WORK/top.json" 2> "$WORK/top.err" 3>&- &
	TOP_PID=$!
	wait_for_line "$WORK/top.err" "gpuspy: watching the host"
	# c starts CUDA while top watches: the bridge is loaded after its first call
	start_loop c 7 GPUSPY_CUPTI_LOG="$WORK/c.log"
	C=$LAST_PID
	# d has another CUPTI tool named at start (as under nsys): left to it, uprobes only
	start_loop d 8 CUDA_INJECTION64_PATH="$FC/libcupti_dump.so" CUPTI_DUMP_FILE="$WORK/d.dump"
	D=$LAST_PID
	wait_for_file "$WORK/c.ready"
	wait_for_file "$WORK/d.ready"
	wait_for_line "$WORK/c.log" "activity on"
	for fd in 5 6 7 8; do echo "go $N" >&$fd; done
	for name in a b c d; do wait_for_line "$WORK/$name.out" "BATCH done"; done
	wait "$TOP_PID"
	TOP_PID=
	cat "$WORK/top.err"
	jq -c '.[] | select(.mode != "-")' "$WORK/top.json"
	[ "$(row "$A" mode)" = '"bridge"' ]
	[ "$(row "$B" mode)" = '"injected"' ]
	[ "$(row "$C" mode)" = '"injected"' ]
	[ "$(row "$D" mode)" = '"uprobes"' ]
	# a and b were set up before gpuspy attached: only the batch; c's and d's set-up launched once
	[ "$(row "$A" launches)" -eq "$N" ]
	[ "$(row "$B" launches)" -eq "$N" ]
	[ "$(row "$C" launches)" -eq $((N + 1)) ]
	[ "$(row "$D" launches)" -eq $((N + 1)) ]
	for p in "$A" "$B" "$C" "$D"; do
		[ "$(row "$p" htod_bytes)" -eq $((N * 4096)) ]
	done
	# GPU times only where the bridge is active, from the moment it is
	[ "$(row "$A" kernels)" -eq "$N" ]
	[ "$(row "$B" kernels)" -eq "$N" ]
	[ "$(row "$C" kernels)" -eq "$N" ]
	[ "$(row "$D" kernels)" -eq 0 ]
	# d's allocations were made while gpuspy watched: its GPU memory is known
	[ "$(row "$D" gpu_mem_bytes)" -gt 4096 ]
	jq -e --argjson a "$A" '.[] | select(.pid == $a) | .gpu_busy_pct > 0 and .launches_per_s > 0 and .api_calls == 3 * '"$N" "$WORK/top.json"
}

# The calls cuda_loop printed after its READY_FILE, FILE's first SKIP lines being its set-up:
# API calls (a line each), errors (failed ones), bytes set. Sets OWN_CALLS, OWN_ERRORS,
# OWN_LAUNCHES, OWN_HTOD, OWN_MEMSET.
own_counts() { # FILE SKIP
	read -r OWN_CALLS OWN_ERRORS OWN_LAUNCHES OWN_HTOD OWN_MEMSET < <(tail -n "+$(($2 + 1))" "$1" | awk '
		/^(LAUNCH|LAUNCH_FAILED|MEMCPY|MEMCPY_FAILED|MEMSET|MEMSET_FAILED|ALLOC|FREE|SYNC) / { calls++ }
		/^[A-Z_]*_FAILED / || / ok=0$/ { errors++ }
		/^LAUNCH / { launches++ }
		/^MEMCPY kind=HtoD / { split($3, b, "="); htod += b[2] }
		/^MEMSET / { split($2, b, "="); memset += b[2] }
		END { print calls + 0, errors + 0, launches + 0, htod + 0, memset + 0 }')
}

@test "top, live probe set: an uprobe-only process's launches, API calls, errors and bytes are its own counts" {
	start_loop a 5
	A=$LAST_PID
	wait_for_file "$WORK/a.ready"
	skip_lines=$(wc -l < "$WORK/a.out")
	"$GPUSPY" top --no-inject --once --interval 4s --format json > "$WORK/top.json" 2> "$WORK/top.err" 3>&- &
	TOP_PID=$!
	wait_for_line "$WORK/top.err" "gpuspy: watching the host"
	echo "go $N" >&5
	echo "more 25" >&5
	wait_for_line "$WORK/a.out" "MORE done"
	wait "$TOP_PID"
	TOP_PID=
	own_counts "$WORK/a.out" "$skip_lines"
	echo "own: calls=$OWN_CALLS errors=$OWN_ERRORS launches=$OWN_LAUNCHES htod=$OWN_HTOD memset=$OWN_MEMSET"
	jq -c --argjson a "$A" '.[] | select(.pid == $a)' "$WORK/top.json"
	[ "$OWN_LAUNCHES" -eq "$N" ] && [ "$OWN_ERRORS" -eq 25 ] # the workload did what it says
	[ "$(row "$A" mode)" = '"uprobes"' ]
	[ "$(row "$A" launches)" -eq "$OWN_LAUNCHES" ]
	[ "$(row "$A" api_calls)" -eq "$OWN_CALLS" ]
	[ "$(row "$A" api_errors)" -eq "$OWN_ERRORS" ]
	[ "$(row "$A" htod_bytes)" -eq "$OWN_HTOD" ]
	[ "$(row "$A" memset_bytes)" -eq "$OWN_MEMSET" ]
}

@test "top --group-by container and user: rows per cgroup and user, counts summed over their processes" {
	cg_setup
	cg_make "$CG_DOCKER"
	cg_make "$CG_POD"
	chmod 777 "$WORK" # the pod's worker runs as nobody and creates its ready file here
	mkfifo "$WORK/a.ctl" "$WORK/b.ctl"
	exec 5<>"$WORK/a.ctl" 6<>"$WORK/b.ctl"
	cg_run "$CG_DOCKER" env LD_LIBRARY_PATH="$FC" "$TGT/cuda_loop" "$WORK/a.ready" \
		< "$WORK/a.ctl" > "$WORK/a.out" 2>&1 3>&- &
	PIDS+=($!)
	cg_run "$CG_POD" setpriv --reuid=65534 --regid=65534 --clear-groups \
		env LD_LIBRARY_PATH="$FC" "$TGT/cuda_loop" "$WORK/b.ready" \
		< "$WORK/b.ctl" > "$WORK/b.out" 2>&1 3>&- &
	PIDS+=($!)
	wait_for_file "$WORK/a.ready"
	wait_for_file "$WORK/b.ready"
	"$GPUSPY" top --once --interval 5s --group-by container --no-inject --format json \
		> "$WORK/c.json" 2> "$WORK/c.err" 3>&- &
	TOP_PID=$!
	"$GPUSPY" top --once --interval 5s --group-by user --no-inject --format json \
		> "$WORK/u.json" 2> "$WORK/u.err" 3>&- &
	TOP2=$!
	PIDS+=("$TOP2")
	wait_for_line "$WORK/c.err" "gpuspy: watching"
	wait_for_line "$WORK/u.err" "gpuspy: watching"
	echo "go $N" >&5
	echo "go $((2 * N))" >&6
	wait_for_line "$WORK/a.out" "BATCH done"
	wait_for_line "$WORK/b.out" "BATCH done"
	wait "$TOP_PID" "$TOP2"
	TOP_PID=
	cat "$WORK/c.json" "$WORK/u.json"
	jq -e '.[] | select(.container == "docker:0123456789ab") | .launches == '"$N"' and .htod_bytes == '"$((N * 4096))" "$WORK/c.json"
	jq -e '.[] | select(.container == "pod:'"$CG_POD_UID"'/fedcba987654") | .launches == '"$((2 * N))" "$WORK/c.json"
	jq -e '.[] | select(.user == "nobody") | .launches == '"$((2 * N))"' and .processes >= 1' "$WORK/u.json"
}

@test "top: text snapshot without a terminal: a bridged loop's row against its own counts, and bad options answered with one line" {
	start_loop a 5 CUDA_INJECTION64_PATH="$BRIDGE" GPUSPY_CUPTI_LOG="$WORK/a.log"
	A=$LAST_PID
	wait_for_file "$WORK/a.ready"
	"$GPUSPY" top --once --interval 5s > "$WORK/top.txt" 2> "$WORK/top.err" 3>&- &
	TOP_PID=$!
	wait_for_line "$WORK/top.err" "gpuspy: watching the host"
	# the bridge turns CUPTI on when it sees gpuspy's probe: the batch runs once it has
	wait_for_line "$WORK/a.log" "activity on"
	echo "go $N" >&5
	wait_for_line "$WORK/a.out" "BATCH done"
	wait "$TOP_PID"
	TOP_PID=
	cat "$WORK/top.err" "$WORK/top.txt"
	[ "$(cat "$WORK/top.err")" = "gpuspy: watching the host, first values in 5.0 s" ]
	# the terminal's columns, in this order (GPU Mem (B), H2D B/s and D2H B/s hold spaces)
	head -n 1 "$WORK/top.txt" | grep -Eq '^ +PID +User +Container +Mode +GPU% +Kern/s +Launch/s +API% +GPU Mem \(B\) +H2D B/s +D2H B/s +CPU% +Wait +Command$'
	read -r pid user container mode gpu kern launch api mem h2d d2h cpu wait share cmd extra \
		< <(awk -v pid="$A" '$1 == pid' "$WORK/top.txt")
	[ "$pid" = "$A" ] && [ "$user" = root ] && [ "$mode" = bridge ] && [ "$cmd" = cuda_loop ]
	[ -z "$extra" ]
	# between its commands the loop blocks reading them from its fifo: Wait is "input NN%"
	[ "$wait" = input ] && [[ $share =~ ^[0-9]+%$ ]]
	# the loop's batch, in rates over one interval: N launches, each with its kernel and one
	# 4096-byte host-to-device copy, and no device-to-host copy. The rates share the
	# interval, so launches and kernels print the same, and the copy rate is 4096 times the
	# launch rate up to the one decimal printed (numbers print with thousands separators).
	# GPU% rounds to 0.0 here: N 10 us kernels in 5 s.
	[ "$kern" = "$launch" ]
	awk -v l="${launch//,/}" -v h="${h2d//,/}" -v d="${d2h//,/}" 'BEGIN {
		diff = h - 4096 * l; if (diff < 0) diff = -diff
		exit !(l > 0 && diff <= 4096 * 0.05 + 0.05 && d == 0) }'
	run "$GPUSPY" top --sort bogus
	[ "$status" -eq 2 ]
	[ "$output" = "gpuspy: unknown sort key 'bogus' (see 'gpuspy top --help')" ]
	run "$GPUSPY" top --group-by pod
	[ "$status" -eq 2 ]
	run "$GPUSPY" top --interval 1ms
	[ "$status" -eq 2 ]
	run "$GPUSPY" top -p 999999999
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
}
