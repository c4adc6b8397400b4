#!/usr/bin/env bats
# Python stacks on the real kernel: gpuspy attaches to a running interpreter (or launches one),
# and the stacks it captures at syscalls must equal the ones the program itself reads at the
# same moments (tests/targets/python/stack_target.py, checked by tests/lib/check_py_stacks.py),
# on Debian's python3.11 and each pyenv CPython 3.8-3.13 present.
# bats file_tags=bpf

load helpers
bats_require_minimum_version 1.5.0

PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
TARGET=$ROOT/tests/targets/python/stack_target.py
CHECK=$ROOT/tests/lib/check_py_stacks.py

setup() {
	require_bpf
	require_cmd python3
	WORK=$(mktemp -d)
}

teardown() {
	[ -n "${TARGET_PID:-}" ] && kill "$TARGET_PID" 2>/dev/null || true
	[ -n "${GPUSPY_PID:-}" ] && kill "$GPUSPY_PID" 2>/dev/null || true
	rm -rf "$WORK"
}

# The interpreter of pyenv version $1 (e.g. 3.8.18), or a skip saying it is missing.
pyenv_python() {
	local bin
	bin=$(ls "$PYENV/$1/bin/python"[23].* 2>/dev/null | grep -E 'python[23]\.[0-9]+$' | head -1)
	[ -x "$bin" ] || skip "pyenv $1 is not installed under $PYENV"
	echo "$bin"
}

# Starts stack_target.py on interpreter $1 (target options follow), attaches gpuspy
# ($GPUSPY_OPTS) once it is ready and lets it run; once it is done gpuspy is stopped while
# the target still lives (it names code objects the target may free on exit), then the
# target is let go.
attach_and_run() {
	local py=$1
	shift
	mkfifo "$WORK/go"
	"$py" "$TARGET" "$WORK/go" "$WORK/oracle.json" "$@" > "$WORK/target.out" 2>&1 3>&- &
	TARGET_PID=$!
	wait_for_line "$WORK/target.out" READY
	# shellcheck disable=SC2086
	"$GPUSPY" record ${GPUSPY_OPTS:-} -p "$TARGET_PID" -o "$WORK/t.gpuspy" \
		2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/gpuspy.err" "recording 1 process"
	echo go > "$WORK/go"
	wait_for_line "$WORK/target.out" DONE
	kill -INT "$GPUSPY_PID"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
	echo exit > "$WORK/go"
	wait "$TARGET_PID"
	TARGET_PID=
	cat "$WORK/gpuspy.err"
}

# The captured stacks against the target's oracle (check_py_stacks.py options follow).
check_stacks() {
	local oracle=$1
	shift
	"$GPUSPY" report "$WORK/t.gpuspy" --report python_stacks --format json > "$WORK/stacks.json"
	python3 "$CHECK" "$WORK/stacks.json" "$oracle" "$@"
}

stacks_equal_oracle() { # PYTHON VERSION
	attach_and_run "$1"
	grep -Eq "^gpuspy: python $2 in pid [0-9]+: stacks on$" "$WORK/gpuspy.err"
	check_stacks "$WORK/oracle.json"
}

@test "python 3.11 (Debian, static executable): stacks at syscalls equal the program's own" {
	[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"
	stacks_equal_oracle /usr/bin/python3.11 "3\.11\.[0-9]+"
}

@test "pyenv python 3.8: stacks at syscalls equal the program's own" {
	stacks_equal_oracle "$(pyenv_python 3.8.18)" "3\.8\.18"
}

@test "pyenv python 3.9: stacks at syscalls equal the program's own" {
	stacks_equal_oracle "$(pyenv_python 3.9.18)" "3\.9\.18"
}

@test "pyenv python 3.10: stacks at syscalls equal the program's own" {
	stacks_equal_oracle "$(pyenv_python 3.10.13)" "3\.10\.13"
}

@test "pyenv python 3.11 (shared libpython): stacks at syscalls equal the program's own" {
	stacks_equal_oracle "$(pyenv_python 3.11.7)" "3\.11\.7"
}

@test "pyenv python 3.12: stacks at syscalls equal the program's own" {
	stacks_equal_oracle "$(pyenv_python 3.12.1)" "3\.12\.1"
}

@test "pyenv python 3.13: stacks at syscalls equal the program's own" {
	stacks_equal_oracle "$(pyenv_python 3.13.0)" "3\.13\.0"
}

@test "a stack deeper than 128 frames keeps its 128 leaf-most frames and is flagged truncated" {
	[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"
	attach_and_run /usr/bin/python3.11 --deep 150
	check_stacks "$WORK/oracle.json"
	jq -e '[.[] | select(.flags == "truncated")] | length > 0 and all(.depth == 128)' \
		"$WORK/stacks.json"
}

@test "CPU samples of a busy function have it as their leaf" {
	[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"
	GPUSPY_OPTS="--sample-hz 99" attach_and_run /usr/bin/python3.11 --busy 0.5
	# 0.5 s on CPU at 99 Hz is about 50 samples; the VM may take some CPU time away
	check_stacks "$WORK/oracle.json" --samples 15
}

@test "a forked child inherits stack capture" {
	[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"
	attach_and_run /usr/bin/python3.11 --fork
	check_stacks "$WORK/oracle.json.fork"
}

@test "a launched python gets stacks once its interpreter is up" {
	[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"
	mkfifo "$WORK/go"
	"$GPUSPY" record -o "$WORK/t.gpuspy" -- /usr/bin/python3.11 "$TARGET" "$WORK/go" \
		"$WORK/oracle.json" > "$WORK/target.out" 2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/gpuspy.err" "stacks on"
	echo go > "$WORK/go"
	wait_for_line "$WORK/target.out" DONE
	# stopping the recording stops the command too (SIGTERM), after the drain
	kill -INT "$GPUSPY_PID"
	wait "$GPUSPY_PID" || true
	GPUSPY_PID=
	check_stacks "$WORK/oracle.json"
}

@test "--no-python captures no stacks" {
	[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"
	GPUSPY_OPTS="--no-python" attach_and_run /usr/bin/python3.11
	run ! grep -q "stacks on" "$WORK/gpuspy.err"
	"$GPUSPY" report "$WORK/t.gpuspy" --report python_stacks --format json |
		jq -e 'length == 0'
}

# Interpreters gpuspy does not read: reported once, and the recording goes on without stacks.
unsupported() { # VERSION
	local py
	py=$(pyenv_python "$1")
	mkfifo "$WORK/go"
	"$py" -c 'import sys, time
sys.stdout.write("READY\n"); sys.stdout.flush()
open(sys.argv[1]).readline()
time.sleep(0.05)
sys.stdout.write("DONE\n")' "$WORK/go" > "$WORK/target.out" 2>&1 3>&- &
	TARGET_PID=$!
	wait_for_line "$WORK/target.out" READY
	"$GPUSPY" record -p "$TARGET_PID" -o "$WORK/t.gpuspy" 2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/gpuspy.err" "recording 1 process"
	echo go > "$WORK/go"
	wait "$TARGET_PID"
	wait "$GPUSPY_PID"
	TARGET_PID= GPUSPY_PID=
	cat "$WORK/gpuspy.err"
	grep -q DONE "$WORK/target.out"
	grep -Eq "^gpuspy: python $1 in pid [0-9]+: not supported: .*3\.8 to 3\.13" "$WORK/gpuspy.err"
	"$GPUSPY" report "$WORK/t.gpuspy" --report python_stacks --format json | jq -e 'length == 0'
	# the rest of the recording is whole: the 50 ms sleep is there
	"$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --format json |
		jq -e '[.[] | select(.max_ns >= 50000000)] | length > 0'
}

@test "python 3.7 is reported unsupported and the recording goes on" {
	unsupported 3.7.16
}

@test "python 3.6 is reported unsupported and the recording goes on" {
	unsupported 3.6.15
}

@test "python 2.7 is reported unsupported and the recording goes on" {
	unsupported 2.7.18
}
