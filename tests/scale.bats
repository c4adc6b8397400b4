#!/usr/bin/env bats
# Process churn at default settings: statistics of exited threads leave the BPF maps as they
# exit, so shell loops and thousands of short processes keep exact counts (strace -f -c is
# the oracle).
# bats file_tags=bpf

load helpers
bats_require_minimum_version 1.5.0

setup() {
	require_bpf
	require_cmd strace
	WORK=$(mktemp -d)
}

teardown() {
	[ -n "${GPUSPY_PID:-}" ] && kill "$GPUSPY_PID" 2>/dev/null || true
	rm -rf "$WORK"
}

# "name calls" lines of strace -f -c for a command, sorted
strace_counts() { # OUT CMD...
	local out=$1
	shift
	# stdout to a file, as under gpuspy below: stdio makes an ioctl on a terminal or /dev/null
	strace -f -c -U name,calls -o "$out.raw" "$@" > "$out.stdout"
	awk '/^-/ { rule++; next } rule == 1 { print $1, $2 }' "$out.raw" | sort > "$out"
}

# the same from a trace's osrt_sum report
gpuspy_counts() { # TRACE OUT
	"$GPUSPY" report "$1" --report osrt_sum --format json |
		jq -r '.[] | "\(.name) \(.calls)"' | sort > "$2"
}

@test "a shell loop of 2,000 processes: every syscall counted, as strace counts them" {
	loop='for i in $(seq 2000); do /bin/true; done'
	strace_counts "$WORK/expected" bash -c "$loop"
	"$GPUSPY" record -o "$WORK/t.gpuspy" -- bash -c "$loop" > "$WORK/out" 2> "$WORK/err"
	grep -q " 0 lost)" "$WORK/err"
	gpuspy_counts "$WORK/t.gpuspy" "$WORK/actual"
	diff -u "$WORK/expected" "$WORK/actual"
	# the command's execve and each /bin/true's (and seq's): no PATH search of gpuspy's own
	grep -qx "execve 2002" "$WORK/actual"
	grep -qx "clone 2001" "$WORK/actual"
}

@test "20,000 short processes: exact counts at the default --max-stat-keys" {
	strace_counts "$WORK/expected" "$TARGETS/spawner" 20000
	"$GPUSPY" record -o "$WORK/t.gpuspy" -- "$TARGETS/spawner" 20000 > "$WORK/out" 2> "$WORK/err"
	grep -q "spawned 20000 children, 0 failed" "$WORK/out"
	grep -q " 0 lost)" "$WORK/err"
	gpuspy_counts "$WORK/t.gpuspy" "$WORK/actual"
	diff -u "$WORK/expected" "$WORK/actual"
	grep -qx "getppid 20000" "$WORK/actual"
	# every child is a process of its own in the reports
	"$GPUSPY" report "$WORK/t.gpuspy" --report osrt_thread --format json |
		jq -e '[.[] | select(.name == "getpid") | .pid] | unique | length == 20000'
}

@test "the statistics map only holds live threads: 80,000 keys' worth of churn in 64 entries" {
	run "$GPUSPY" record --max-stat-keys 64 -o "$WORK/t.gpuspy" -- "$TARGETS/spawner" 20000
	[ "$status" -eq 0 ]
	[[ "$output" == *" 0 lost)"* ]]
	gpuspy_counts "$WORK/t.gpuspy" "$WORK/actual"
	for name in getppid getpid clone wait4; do
		grep -qx "$name 20000" "$WORK/actual"
	done
}

@test "a thread with more syscalls than the statistics slots hold: exact counts from both maps" {
	# --max-stat-keys 64 gives 32 slots (loader/session/stat_slots.c) and a hash of 32: bash
	# alone makes 35 distinct syscalls, so some of its statistics are hash keys, while its 200
	# children take slots and free them as they exit (bpf/osrt.bpf.c)
	loop='for i in $(seq 200); do /bin/true; done'
	strace_counts "$WORK/expected" bash -c "$loop"
	[ "$(wc -l < "$WORK/expected")" -gt 32 ]
	"$GPUSPY" record --max-stat-keys 64 -o "$WORK/t.gpuspy" -- bash -c "$loop" \
		> "$WORK/out" 2> "$WORK/err"
	grep -q " 0 lost)" "$WORK/err"
	gpuspy_counts "$WORK/t.gpuspy" "$WORK/actual"
	diff -u "$WORK/expected" "$WORK/actual"
	grep -qx "execve 202" "$WORK/actual" # bash, seq and 200 /bin/true
	# the main thread's statistics, hash and slots alike: one row per syscall, min <= max
	"$GPUSPY" report "$WORK/t.gpuspy" --report osrt_thread --format json > "$WORK/t.json"
	jq -e '[.[] | select(.thread == "bash" and .pid == .tid)] | length > 32 and
		(map(.name) | unique | length) == length and all(.[]; .min_ns <= .max_ns)' \
		"$WORK/t.json"
}

@test "statistics stay exact when the ring buffer is full as threads exit" {
	# gpuspy is stopped while the children exit: their final statistics cannot be sent, so
	# they stay in the map until a checkpoint finds their threads gone
	"$GPUSPY" record --buffer-size 1 --osrt-threshold 0 --stats-interval 200ms \
		-o "$WORK/t.gpuspy" -- "$TARGETS/spawner" 3000 > "$WORK/spawner.out" \
		2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/gpuspy.err" "recording '"
	kill -STOP "$GPUSPY_PID"
	sleep 2
	kill -CONT "$GPUSPY_PID"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
	grep -q "spawned 3000 children, 0 failed" "$WORK/spawner.out"
	grep -q "lost [0-9]* syscall spans (ring buffer full)" "$WORK/gpuspy.err"
	run ! grep -q "statistics" "$WORK/gpuspy.err"
	gpuspy_counts "$WORK/t.gpuspy" "$WORK/actual"
	for name in getppid getpid clone wait4; do
		grep -qx "$name 3000" "$WORK/actual"
	done
	# statistics were never lost, only spans: calls = spans + lost spans
	calls=$(awk '{ n += $2 } END { print n }' "$WORK/actual")
	spans=$("$GPUSPY" export "$WORK/t.gpuspy" -o - |
		jq '[.traceEvents[] | select(.cat == "os_runtime")] | length')
	lost=$("$GPUSPY" report "$WORK/t.gpuspy" --report losses --format json |
		jq '[.[] | select(.kind | startswith("syscall spans")) | .lost] | add')
	echo "calls $calls spans $spans lost $lost"
	[ "$((spans + lost))" -eq "$calls" ]
}
