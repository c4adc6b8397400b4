#!/bin/sh
# Per-event cost of gpuspy's Python stack capture, against an empty probe on the same hook:
# bench/py_depth.py calls os.getppid() (libc getppid) CALLS times from a Python stack DEPTH
# frames deep; build/bench/py_stack_cost attaches either an empty entry uprobe (the floor) or
# one that walks and emits the Python stack with gpuspy's walker (bpf/py_stack.bpf.h, py_procs
# filled by gpuspy's own interpreter check) to getppid in that process only. Per call: untraced,
# floor, stack; the stack's added cost as a ratio to the floor's added cost, and the walker's
# own cost (stack - floor) per call and per frame. Best of REPEATS for each.
# usage: bench/py_stack_cost.sh BUILD_DIR [CALLS] [REPEATS] [DEPTHS]   (as root; PYTHON: any
#        CPython 3.8-3.13, default python3; DEPTHS default "10 30 60")
set -eu
build=${1:-build}
calls=${2:-100000}
repeats=${3:-3}
depths=${4:-10 30 60}
py=${PYTHON:-python3}
tool=$build/bench/py_stack_cost
driver=$(dirname "$0")/py_depth.py
work=$(mktemp -d)
py_pid=
tool_pid=
cleanup() {
	for p in $tool_pid $py_pid; do kill "$p" 2> /dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

[ -x "$tool" ] || { echo "py_stack_cost: $tool not found: make BUILD=$build $tool" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "py_stack_cost: must run as root" >&2; exit 1; }

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
min() { echo "$1 ${2:-$1}" | awk '{ print ($1 < $2) ? $1 : $2 }'; }

wait_line() { # FILE PATTERN: up to 30 s
	i=0
	while ! grep -q -- "$2" "$1" 2> /dev/null; do
		i=$((i + 1))
		[ $i -lt 6000 ] || { echo "py_stack_cost: no '$2' in $1:" >&2; cat "$1" >&2; exit 1; }
		sleep 0.005
	done
}

# One run at DEPTH with no probe, the empty probe or the stack probe: sets ns (per call) and,
# with a probe, the tool's summary line in tool_out.
run_one() { # DEPTH none|empty|stack
	rm -f "$work/ctl" "$work/py.out" "$work/tool.err" "$work/tool.out"
	mkfifo "$work/ctl"
	"$py" "$driver" "$1" "$calls" --wait < "$work/ctl" > "$work/py.out" &
	py_pid=$!
	exec 4> "$work/ctl"
	wait_line "$work/py.out" READY
	if [ "$2" != none ]; then
		"$tool" "$2" "$py_pid" > "$work/tool.out" 2> "$work/tool.err" &
		tool_pid=$!
		wait_line "$work/tool.err" "attached"
	fi
	echo go >&4
	wait_line "$work/py.out" ns_per_call
	tool_out=
	if [ -n "$tool_pid" ]; then
		kill -INT "$tool_pid"
		wait "$tool_pid" || { cat "$work/tool.err" >&2; exit 1; }
		tool_pid=
		tool_out=$(cat "$work/tool.out")
	fi
	echo exit >&4
	exec 4>&-
	wait "$py_pid"
	py_pid=
	ns=$(field ns_per_call < "$work/py.out")
}

echo "machine: $(nproc) CPUs, kernel $(uname -r), $("$py" -V 2>&1), $calls calls of os.getppid() per run, best of $repeats"
for hook in uprobe sys; do
	if [ $hook = uprobe ]; then
		empty_mode=empty stack_mode=stack
		echo "hook: entry uprobe on libc getppid (the floor: an empty uprobe there)"
	else
		empty_mode=empty-sys stack_mode=stack-sys
		echo "hook: sys_enter tracepoint, the target's getppid (the floor: the same filter, no walk)"
	fi
	printf '%6s %10s %10s %10s %12s %12s %12s  %s\n' depth untraced floor stack "stack/floor" "walker/call" "walker/frame" "stacks seen by the stack probe"
	for depth in $depths; do
		none='' empty='' stack=''
		r=0
		while [ $r -lt "$repeats" ]; do
			run_one "$depth" none
			none=$(min "$ns" "$none")
			run_one "$depth" $empty_mode
			empty=$(min "$ns" "$empty")
			run_one "$depth" $stack_mode
			stack=$(min "$ns" "$stack")
			seen=$tool_out
			r=$((r + 1))
		done
		frames=$(echo "$seen" | field frames_avg)
		awk -v d="$depth" -v n="$none" -v e="$empty" -v s="$stack" -v f="$frames" -v seen="$seen" 'BEGIN {
			printf "%6d %8.0fns %8.0fns %8.0fns %11.2fx %10.0fns %10.1fns  %s\n", d, n, e, s,
				(s - n) / (e - n), s - e, (f > 0) ? (s - e) / f : 0, seen
		}'
	done
done
echo "(stack/floor: the stack probe's added cost per call over the floor's, both against untraced;"
echo " walker: stack - floor, finding, walking and emitting the stack itself; frames: depth + 2)"
