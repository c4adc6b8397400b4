#!/usr/bin/env bats
# gpuspy must never harm a target (issue 9): a SIGKILL of gpuspy at the worst moment of a bridge
# load or of a hold leaves the target running and correct; gpuspy does not borrow a thread while
# ld.so's lock is held, nor load the bridge into seccomp-sandboxed or setuid/non-dumpable
# processes (unless named with -p); the bridge ignores a setuid program's caller's environment.
# Real ptrace, real processes, the simulated GPU. Each target must end with "DONE ok" and
# status 0 whatever gpuspy did to it.
# bats file_tags=bpf,cuda,inject

load helpers
bats_require_minimum_version 1.5.0

FC=$BUILD/fakecuda
TGT=$BUILD/targets/cuda
LIBS=$BUILD/targets
BRIDGE=$BUILD/libgpuspy_cupti.so

setup() {
	require_bpf
	if [ ! -e "$FC/libcudart.so.13" ] || [ ! -e "$TGT/cuda_loop" ] || [ ! -e "$TGT/dlopen_host" ]; then
		skip "run 'make fakecuda' first"
	fi
	[ -e "$BRIDGE" ] || skip "the CUPTI bridge was not built (no CUPTI headers)"
	WORK=$(mktemp -d)
	TARGET_PID=
	GPUSPY_PID=
}

teardown() {
	exec 4>&-
	[ -n "${GPUSPY_PID:-}" ] && kill -KILL "$GPUSPY_PID" 2>/dev/null
	[ -n "${TARGET_PID:-}" ] && kill -KILL "$TARGET_PID" 2>/dev/null
	rm -rf "$WORK"
}

# Starts `cuda_loop` (or COMMAND) with extra environment, driven through a fifo on fd 4; its
# output goes to $WORK/out, its exit status to $WORK/status once it ends. Sets TARGET_PID.
start_loop() { # [VAR=VALUE...] [-- COMMAND...]
	local env=() cmd=("$TGT/cuda_loop" "$WORK/ready")
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift && cmd=("$@")
	mkfifo "$WORK/ctl"
	(
		env LD_LIBRARY_PATH="$FC" "${env[@]}" "${cmd[@]}" < "$WORK/ctl" > "$WORK/out" 2> "$WORK/err"
		echo $? > "$WORK/status"
	) 3>&- &
	exec 4> "$WORK/ctl"
	wait_for_file "$WORK/ready"
	TARGET_PID=$(cat "/proc/$!/task/$!/children" 2>/dev/null | tr -d ' ')
	[ -n "$TARGET_PID" ] || TARGET_PID=$(pgrep -f -n "cuda_loop $WORK/ready|dlopen_host $WORK/ready")
}

go() { # N: a batch, and its line
	local n
	n=$(grep -c "^BATCH done n=$1\$" "$WORK/out" || true)
	echo "go $1" >&4
	wait_for_count "$WORK/out" "^BATCH done n=$1\$" $((n + 1))
}

state_of() { # PID
	awk '/^State:/ { print $2 }' "/proc/$1/status"
}

# The target is alive and not stopped, does one more batch, then exits 0 with "DONE ok".
target_goes_on() {
	[ -d "/proc/$TARGET_PID" ] || {
		echo "target $TARGET_PID died: status $(cat "$WORK/status" 2>/dev/null)" >&2
		cat "$WORK/err" >&2
		return 1
	}
	[ "$(state_of "$TARGET_PID")" != T ] || {
		echo "target $TARGET_PID left stopped" >&2
		return 1
	}
	go 2
	echo exit >&4
	exec 4>&-
	wait_for_file "$WORK/status"
	[ "$(cat "$WORK/status")" -eq 0 ]
	grep -q '^DONE ok$' "$WORK/out"
	TARGET_PID=
}

start_gpuspy() { # ARGS...
	"$GPUSPY" record -v -f -o "$WORK/t.gpuspy" "$@" > "$WORK/g.out" 2> "$WORK/g.err" 3>&- &
	GPUSPY_PID=$!
}

@test "SIGKILL of gpuspy while the bridge's dlopen is in progress (its constructor runs): the target finishes the load and goes on" {
	start_loop GPUSPY_BRIDGE_LOAD_DELAY_MS=3000
	go 1
	start_gpuspy -p "$TARGET_PID"
	# mapped while its constructor sleeps: the borrowed thread is inside dlopen, holding
	# ld.so's lock, with gpuspy as its tracer
	for _ in $(seq 100); do
		grep -q libgpuspy_cupti "/proc/$TARGET_PID/maps" && break
		sleep 0.05
	done
	grep -q libgpuspy_cupti "/proc/$TARGET_PID/maps"
	kill -KILL "$GPUSPY_PID"
	GPUSPY_PID=
	# the constructor ends, dlopen returns through the frame gpuspy left, the read(2) the
	# thread was borrowed from is run again: the next command is read as usual
	target_goes_on
}

@test "a thread inside a dlopen whose constructor sleeps holds ld.so's lock: gpuspy does not start the call, says who holds it, and a SIGKILL meanwhile harms nothing" {
	cp "$LIBS/libslow_dlopen.so" "$WORK/slow_copy.so"
	start_loop LD_PRELOAD="$LIBS/libslow_dlopen.so" SLOW_TRIGGER="$WORK/trigger" \
		SLOW_LIB="$WORK/slow_copy.so" SLOW_MARK="$WORK/in_ctor" SLOW_CTOR_MS=8000
	go 1
	touch "$WORK/trigger"
	wait_for_file "$WORK/in_ctor"
	start_gpuspy -p "$TARGET_PID" -d 1
	wait $GPUSPY_PID
	GPUSPY_PID=
	grep -q "ld.so's lock is held by thread [0-9]* (a dlopen or a library constructor in progress)" "$WORK/g.err"
	# the thread named is the target's loading thread, not its main thread
	holder=$(sed -n "s/.*ld.so's lock is held by thread \([0-9]*\).*/\1/p" "$WORK/g.err" | head -n 1)
	[ "$holder" != "$TARGET_PID" ]
	[ -d "/proc/$TARGET_PID/task/$holder" ]
	run -0 "$GPUSPY" report "$WORK/t.gpuspy" --report gpu_mode --format json
	echo "$output" | jq -e --argjson pid "$TARGET_PID" '.[] | select(.pid == $pid) | .bridge == "skipped"'
	run ! grep -q libgpuspy_cupti "/proc/$TARGET_PID/maps"
	# again, killed while it waits for the lock
	start_gpuspy -p "$TARGET_PID"
	wait_for_line "$WORK/g.err" "probing CUDA runtime"
	sleep 0.5
	kill -KILL "$GPUSPY_PID"
	GPUSPY_PID=
	wait_for_file "$WORK/in_ctor.done"
	target_goes_on
}

# Starts dlopen_host recorded with -p, stops gpuspy, and has the target dlopen its kernel
# library: BPF holds it at ld.so, with no gpuspy to resume it.
held_while_gpuspy_stopped() {
	start_loop -- "$TGT/dlopen_host" "$WORK/ready" "$TGT/libdlkernels.so" 3
	start_gpuspy -p "$TARGET_PID"
	wait_for_line "$WORK/g.err" "recording 1 process"
	pgrep -x gpuspy-watchdog > /dev/null
	kill -STOP "$GPUSPY_PID"
	echo go >&4
	for _ in $(seq 100); do
		[ "$(state_of "$TARGET_PID")" = T ] && break
		sleep 0.05
	done
	[ "$(state_of "$TARGET_PID")" = T ]
}

# Waits up to 30 s for the held target to finish (with --resume, sending it SIGCONT meanwhile,
# as another gpuspy done first would), then lets gpuspy go on to its end: the target's load is
# counted as not held.
finish_held() { # [--resume]
	for _ in $(seq 300); do
		[ -e "$WORK/status" ] && break
		[ "${1:-}" != --resume ] || kill -CONT "$TARGET_PID" 2> /dev/null || true
		sleep 0.1
	done
	[ "$(cat "$WORK/status")" -eq 0 ]
	grep -q '^DONE ok$' "$WORK/out"
	TARGET_PID=
	kill -CONT "$GPUSPY_PID"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
	"$GPUSPY" report "$WORK/t.gpuspy" --report losses --format json |
		jq -e '[.[] | select(.kind | startswith("library loads not held")) | .lost] | add >= 1'
}

@test "a process held at ld.so while gpuspy is stopped is resumed by the watchdog once gpuspy is SIGKILLed, and finishes its work" {
	held_while_gpuspy_stopped
	kill -KILL "$GPUSPY_PID"
	GPUSPY_PID=
	exec 4>&-
	wait_for_file "$WORK/status"
	[ "$(cat "$WORK/status")" -eq 0 ]
	grep -q '^DONE ok$' "$WORK/out"
	TARGET_PID=
}

@test "no hold outlasts 10 s: a process held while gpuspy is stopped is resumed by the watchdog, and gpuspy counts the load as not held" {
	held_while_gpuspy_stopped
	# gpuspy stays stopped: the watchdog alone can resume the target (bound: 10 s)
	finish_held
	grep -q "was held longer than 10 s and resumed by the watchdog" "$WORK/g.err"
}

@test "a hold someone else ends first (another gpuspy's SIGCONT) while gpuspy is busy is counted as not held, with a warning" {
	held_while_gpuspy_stopped
	# what a second gpuspy holding the same loads does when it is done first: the target's
	# later loads are held too, and resumed the same way, long before the watchdog's 10 s
	finish_held --resume
	grep -q "was resumed by another process (another gpuspy?) or ended while its new libraries were probed" "$WORK/g.err"
	! grep -q "resumed by the watchdog" "$WORK/g.err" || false
}

# Starts cuda_loop, which then sandboxes itself with a filter answering openat with ACTION, and
# records it with -p for a second.
record_sandboxed() { # kill|trap
	start_loop LD_PRELOAD="$LIBS/libseccomp_later.so" SECCOMP_TRIGGER="$WORK/trigger" SECCOMP_ACTION="$1"
	go 1
	touch "$WORK/trigger"
	wait_for_file "$WORK/trigger.done"
	start_gpuspy -p "$TARGET_PID" -d 1
	wait $GPUSPY_PID
	GPUSPY_PID=
}

@test "a process that installed a seccomp filter after start (openat -> KILL_PROCESS) is left alone, with the reason; it goes on" {
	record_sandboxed kill
	grep -q "runs under 1 seccomp filter(s): the bridge's dlopen could be refused or kill the process" "$WORK/g.err"
	run ! grep -q libgpuspy_cupti "/proc/$TARGET_PID/maps"
	target_goes_on
}

@test "seccomp with RET_TRAP: refused with the real cause, not 'dlopen failed: Bad address'" {
	record_sandboxed trap
	grep -q "seccomp filter" "$WORK/g.err"
	run ! grep -q "Bad address" "$WORK/g.err"
	target_goes_on
}

# A host-wide recording leaves the target alone, saying WHY; one that names it with -p loads the
# bridge into it.
left_alone_unless_named() { # WHY
	start_gpuspy -a -d 1
	wait $GPUSPY_PID || { cat "$WORK/g.err" >&2; false; }
	GPUSPY_PID=
	grep -qF "pid $TARGET_PID: CUPTI bridge not loaded: $1: its environment may come from another user (name it with -p" "$WORK/g.err"
	run ! grep -q libgpuspy_cupti "/proc/$TARGET_PID/maps"
	start_gpuspy -p "$TARGET_PID" -d 1
	wait $GPUSPY_PID || { cat "$WORK/g.err" >&2; false; }
	GPUSPY_PID=
	grep -q libgpuspy_cupti "/proc/$TARGET_PID/maps"
}

@test "a process running with other credentials than its real ids is left alone by -a, loaded when named with -p" {
	chmod 1777 "$WORK" # it writes its ready file as uid 65534
	start_loop LD_PRELOAD="$LIBS/libdrop_euid.so" DROP_EUID=65534
	go 1
	grep -q "^Uid:.0.65534" "/proc/$TARGET_PID/status"
	left_alone_unless_named "it runs setuid (real uid 0, effective 65534)"
	target_goes_on
}

@test "a process that made itself not dumpable is left alone by -a, loaded when named with -p" {
	chmod 1777 "$WORK" # it runs as uid 65534
	start_loop LD_PRELOAD="$LIBS/libno_dump.so" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TGT/cuda_loop" "$WORK/ready"
	go 1
	TARGET_PID=$(pgrep -f -n "cuda_loop $WORK/ready")
	grep -q "^Uid:.65534.65534.65534.65534" "/proc/$TARGET_PID/status"
	[ "$(stat -c %u "/proc/$TARGET_PID/status")" = 0 ]
	left_alone_unless_named "it is not dumpable"
	target_goes_on
}

@test "the bridge in a set-user-ID program ignores its caller's GPUSPY_CUPTI_LOG: no root-owned file where the caller asked" {
	cp "$BUILD/targets/setuid_host" "$WORK/suh"
	chown root:root "$WORK/suh"
	chmod 4755 "$WORK/suh"
	chmod 755 "$WORK"
	mkdir -m 1777 "$WORK/logs"
	run -0 setpriv --reuid=65534 --regid=65534 --clear-groups \
		env GPUSPY_CUPTI_LOG="$WORK/logs/root.log" "$WORK/suh" "$BRIDGE"
	[ "$output" = "started=1 euid=0" ]
	[ ! -e "$WORK/logs/root.log" ]
	# the same program not set-user-ID: the variable is honoured (so the check above can fail)
	chmod 0755 "$WORK/suh"
	run -0 setpriv --reuid=65534 --regid=65534 --clear-groups \
		env GPUSPY_CUPTI_LOG="$WORK/logs/user.log" "$WORK/suh" "$BRIDGE"
	[ "$output" = "started=1 euid=65534" ]
	grep -q "loaded late" "$WORK/logs/user.log"
}

@test "a process that starts CUDA after the attach while ld.so's lock is held gets the bridge once the load in progress ends (the late load is retried)" {
	cp "$LIBS/libslow_dlopen.so" "$WORK/slow_copy.so"
	mkfifo "$WORK/go" "$WORK/ctl"
	# a parent with no CUDA that execs cuda_loop once told to: CUDA starts after the attach
	(
		env LD_LIBRARY_PATH="$FC" LD_PRELOAD="$LIBS/libslow_dlopen.so" SLOW_TRIGGER="$WORK/trigger" \
			SLOW_LIB="$WORK/slow_copy.so" SLOW_MARK="$WORK/in_ctor" SLOW_CTOR_MS=3500 \
			bash -c 'read -r _ < "$1"; exec "$2" "$3"' _ "$WORK/go" "$TGT/cuda_loop" "$WORK/ready" \
			< "$WORK/ctl" > "$WORK/out" 2> "$WORK/err"
		echo $? > "$WORK/status"
	) 3>&- &
	exec 4> "$WORK/ctl"
	for _ in $(seq 100); do
		TARGET_PID=$(pgrep -f -n "bash -c read -r _ < \"\\\$1\"; exec .* $WORK/ready") && break
		sleep 0.05
	done
	[ -n "$TARGET_PID" ]
	start_gpuspy -p "$TARGET_PID"
	wait_for_line "$WORK/g.err" "recording 1 process"
	echo go > "$WORK/go"
	wait_for_file "$WORK/ready"
	touch "$WORK/trigger" # its loading thread now sleeps in a constructor for 3.5 s
	wait_for_file "$WORK/in_ctor"
	go 1 # its first CUDA calls after the attach: the late load is queued
	for _ in $(seq 150); do
		grep -q "CUPTI bridge loaded.*(CUDA started after the attach)" "$WORK/g.err" && break
		sleep 0.1
	done
	grep -q "CUPTI bridge loaded.*(CUDA started after the attach)" "$WORK/g.err"
	grep -q "ld.so's lock is held by thread .*; trying again in 2 s" "$WORK/g.err"
	run ! grep -q "CUPTI bridge not loaded" "$WORK/g.err"
	[ -e "$WORK/in_ctor.done" ] # loaded after the constructor ended, not during it
	kill -INT "$GPUSPY_PID"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
	target_goes_on
}
