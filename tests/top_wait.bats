#!/usr/bin/env bats
# `gpuspy top`'s Wait column (loader/live/live_waits.c): what each process's main thread, or
# its busiest CUDA thread, spent most of the interval on, in wait_kinds.h's kinds. Its unit test
# on made-up records, then workloads with a known answer, each watched alone with -p: readers
# of a fifo (input), a busy loop (cpu, against /proc's CPU time), the lock_wait, sync_wait
# (simulated GPU) and io_wait stall workloads (tests/targets/stalls).
# bats file_tags=bpf,live

bats_require_minimum_version 1.5.0

load helpers
load lib/stalls

WAITS_TEST=$BUILD/unit/live_waits_test

setup() {
	WORK=$(mktemp -d)
	PIDS=()
}

teardown() {
	stop_pids "${PIDS[@]}"
	rm -rf "$WORK" /var/tmp/gpuspy-top-wait
}

# One snapshot of -p PIDS after an interval of DUR, as JSON, in $WORK/top.json; prints it.
top_once() { # PIDS DUR [OPTION...]
	local pids=$1 dur=$2
	shift 2
	"$GPUSPY" top -p "$pids" --all --once --interval "$dur" "$@" \
		> "$WORK/top.out" 2> "$WORK/top.err" 3>&-
	cat "$WORK/top.err" "$WORK/top.out"
}

# The row of a process: its wait kind, share and thread, and CPU %, one line.
row() { # PID
	jq -c --argjson p "$1" '.[] | select(.pid == $p) | [.wait, .wait_pct, .wait_tid, .cpu_pct]' \
		"$WORK/top.out"
}

# Waits up to 10 s for the main thread of PID to be in syscall NR (/proc/PID/syscall).
wait_for_syscall() { # PID NR
	local i
	for i in $(seq 100); do
		[ "$(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for pid $1 to be in syscall $2" >&2
	return 1
}

@test "top wait column: unit test (nesting, clipping, waits under way, the CUDA thread, overflow)" {
	run -0 "$WAITS_TEST"
	[ "$output" = "live_waits_test: ok" ]
}

@test "top -p: fifo readers wait on input, whether fed or blocked since before the attach; a busy loop is on cpu as /proc counts it" {
	require_bpf
	require_cmd jq
	mkfifo "$WORK/fed" "$WORK/starved"
	exec 5<>"$WORK/fed" 6<>"$WORK/starved"
	reader='import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
while os.read(fd, 1):
    pass'
	python3 -c "$reader" "$WORK/fed" 3>&- &
	FED=$!
	python3 -c "$reader" "$WORK/starved" 3>&- &
	STARVED=$!
	python3 -c 'while True: pass' 3>&- &
	SPIN=$!
	PIDS+=("$FED" "$STARVED" "$SPIN")
	# fed a byte every 50 ms: its reads end within the interval, and one is under way at its end
	(while :; do echo >&5; sleep 0.05; done) 3>&- &
	PIDS+=($!)
	wait_for_syscall "$FED" 0
	wait_for_syscall "$STARVED" 0
	top_once "$FED,$STARVED,$SPIN" 2s --format json
	row "$FED"
	row "$STARVED"
	row "$SPIN"
	jq -e --argjson p "$FED" '.[] | select(.pid == $p) |
		.wait == "input" and .wait_pct >= 90 and .wait_tid == $p' "$WORK/top.out"
	# its read began before gpuspy attached: /proc says it is in it
	jq -e --argjson p "$STARVED" '.[] | select(.pid == $p) |
		.wait == "input" and .wait_pct >= 99 and .wait_tid == $p' "$WORK/top.out"
	# on a busy machine the loop waits for a CPU: its time on CPU (cpu) or runnable (runq) is
	# what /proc's CPU % says, or the rest of the interval
	jq -e --argjson p "$SPIN" 'def abs: if . < 0 then -. else . end; .[] | select(.pid == $p) |
		(.wait == "cpu" and (.wait_pct - .cpu_pct | abs) < 10) or
		(.wait == "runq" and (100 - .wait_pct - .cpu_pct | abs) < 10)' "$WORK/top.out"
}

@test "top -p, text: lock_wait's loop blocks on a lock most of each step: lock" {
	require_bpf
	"$PYTHON" "$SRC/lock_wait.py" --steps 200 > "$WORK/lock.out" 3>&- &
	LOCK=$!
	PIDS+=("$LOCK")
	# the checkpointer thread is up: the loop is running
	for i in $(seq 100); do
		[ "$(ls "/proc/$LOCK/task" 2>/dev/null | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	top_once "$LOCK" 2s
	head -n 1 "$WORK/top.out" | grep -Eq ' +CPU% +Wait +Command$'
	# the Wait cell: the kind and its share of the interval (the workload: about 85%)
	awk -v pid="$LOCK" '$1 == pid { print $(NF - 2), $(NF - 1) }' "$WORK/top.out" > "$WORK/cell"
	cat "$WORK/cell"
	read -r kind pct < "$WORK/cell"
	[ "$kind" = lock ]
	[ "${pct%\%}" -ge 50 ]
}

@test "top -p: sync_wait on the simulated GPU waits in CUDA synchronisations: sync" {
	require_bpf
	require_cmd jq
	require_steps_lib
	LD_LIBRARY_PATH=$FC "$PYTHON" "$SRC/sync_wait.py" --steps 150 > "$WORK/sync.out" 3>&- &
	SYNC=$!
	PIDS+=("$SYNC")
	# on the simulator a synchronisation sleeps in clock_nanosleep (230): the loop runs
	wait_for_syscall "$SYNC" 230
	top_once "$SYNC" 2s --format json --no-inject --no-cupti
	row "$SYNC"
	# about 83% of each step is the blocking copy that waits for the kernel
	jq -e --argjson p "$SYNC" '.[] | select(.pid == $p) |
		.mode == "uprobes" and .wait == "sync" and .wait_pct >= 50 and .wait_tid == $p' \
		"$WORK/top.out"
}

@test "top -p: io_wait reads with O_DIRECT, in D state most of each step: io" {
	require_bpf
	require_cmd jq
	mkdir -p /var/tmp/gpuspy-top-wait
	"$PYTHON" "$SRC/io_wait.py" --steps 200 --dir /var/tmp/gpuspy-top-wait > "$WORK/io.out" 2>&1 3>&- &
	IO=$!
	PIDS+=("$IO")
	# its reads: preadv2 (327), once the file is written and out of the page cache
	if ! wait_for_syscall "$IO" 327; then
		grep -q "FAIL O_DIRECT open" "$WORK/io.out" && skip "no O_DIRECT in /var/tmp (tmpfs?)"
		false
	fi
	top_once "$IO" 2s --format json
	row "$IO"
	jq -e --argjson p "$IO" '.[] | select(.pid == $p) | .wait == "io" and .wait_pct >= 50' \
		"$WORK/top.out"
}
