#!/bin/sh
# What `gpuspy serve` and `gpuspy top` cost while they run host-wide: their own CPU use on an
# idle host, then the slowdown of a syscall-heavy workload (bench/syscall_bench: getppid +
# read + write) and of a launch-heavy one (launch_bench on the simulated CUDA stack: empty
# kernels launched back to back), each best of REPEATS untraced and under the live view in
# the same run, with the view's CPU use meanwhile. top runs as scripts use it (--format json
# each second, to /dev/null). The floors, measured in the same run (lib.sh's floor_start):
# empty tp_btf programs on sys_enter/sys_exit for the syscall workload, empty entry and
# return uprobes on the same CUDA functions for the launch workload; the ratio in brackets is
# the view's added cost over the floor's.
# usage: bench/live_bench.sh BUILD_DIR [REPEATS]     (as root; default 3)
set -eu
build=$1
repeats=${2:-3}
bench_name=live_bench
work=$(mktemp -d)
. "$(dirname "$0")/lib.sh"
sysb=$build/bench/syscall_bench
launch=$build/targets/cuda/launch_bench
fc=$build/fakecuda
for f in "$build/gpuspy" "$sysb" "$launch" "$fc/libcudart.so.13"; do
	[ -e "$f" ] || bench_fail "$f missing (make all fakecuda, and the bench programs)"
done
view_pid=
cleanup() {
	[ -z "$view_pid" ] || kill "$view_pid" 2> /dev/null || true
	[ -z "$view_pid" ] || wait "$view_pid" 2> /dev/null || true
	floor_stop
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

# --no-inject: the launch-heavy workload starts after the view, which would otherwise load the
# CUPTI bridge into it half-way through, and the simulator's CUPTI work is not gpuspy's cost
# (nor is it what the floor, uprobes alone, has)
view_start() { # serve|top
	: > "$work/view.err"
	if [ "$1" = serve ]; then
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		"$build/gpuspy" serve --no-inject --listen "127.0.0.1:$port" 2> "$work/view.err" &
		view_pid=$!
		wait_line "$work/view.err" "gpuspy: collecting" 60 "$view_pid"
	else
		"$build/gpuspy" top --no-inject --format json > /dev/null 2> "$work/view.err" &
		view_pid=$!
		wait_line "$work/view.err" "gpuspy: watching" 60 "$view_pid"
	fi
}

view_stop() {
	kill "$view_pid"
	wait "$view_pid" 2> /dev/null || true
	view_pid=
}

# best_of CMD...: the smallest ns_per_* the workload printed over the repeats
best_of() {
	bo_best=
	for _ in $(seq "$repeats"); do
		bo_v=$("$@" | sed -n 's/.*ns_per_[a-z]*=\([0-9.]*\).*/\1/p')
		bo_best=$(min "$bo_v" "$bo_best")
	done
	echo "$bo_best"
}

syscalls() { best_of "$sysb" 300000; }
launches() { LD_LIBRARY_PATH=$fc best_of "$launch" 100000; }

# cpu_pct PID START_TICKS START_NS: the view's CPU use since then, in % of one CPU
cpu_pct() {
	awk -v t0="$2" -v t1="$(cpu_ticks "$1")" -v ns="$(($(now_ns) - $3))" -v hz="$hz" \
		'BEGIN { printf "%.2f", 100 * (t1 - t0) / hz / (ns / 1e9) }'
}

# added_ratio VALUE FLOOR BASE: (VALUE - BASE) / (FLOOR - BASE)
added_ratio() { awk -v v="$1" -v f="$2" -v b="$3" 'BEGIN { printf "%.2f", (v - b) / (f - b) }'; }

base_sys=$(syscalls)
base_launch=$(launches)
floor_start --syscalls
floor_sys=$(syscalls)
floor_stop
floor_start "$fc/libcudart.so.13" "$fc/libcuda.so.1"
floor_launch=$(launches)
floor_stop
echo "machine: $(nproc) CPUs, kernel $(uname -r), $(ls -d /proc/[0-9]* | wc -l) processes"
echo "untraced: $base_sys ns/syscall, $base_launch ns/launch; floors: $floor_sys ns/syscall," \
	"$floor_launch ns/launch (best of $repeats)"
echo
echo "| view | idle host: view CPU | syscall-heavy: ns/syscall (× untraced, × floor's added) | view CPU | launch-heavy: ns/launch (× untraced, × floor's added) | view CPU |"
echo "|---|---:|---:|---:|---:|---:|"
for view in serve top; do
	view_start "$view"
	t0=$(cpu_ticks "$view_pid")
	s0=$(now_ns)
	sleep 10
	idle=$(cpu_pct "$view_pid" "$t0" "$s0")
	t0=$(cpu_ticks "$view_pid")
	s0=$(now_ns)
	sys=$(syscalls)
	sys_cpu=$(cpu_pct "$view_pid" "$t0" "$s0")
	t0=$(cpu_ticks "$view_pid")
	s0=$(now_ns)
	lau=$(launches)
	lau_cpu=$(cpu_pct "$view_pid" "$t0" "$s0")
	view_stop
	printf '| %s | %s%% | %s (%s×, %s×) | %s%% | %s (%s×, %s×) | %s%% |\n' "$view" "$idle" \
		"$sys" "$(awk -v a="$sys" -v b="$base_sys" 'BEGIN { printf "%.2f", a / b }')" \
		"$(added_ratio "$sys" "$floor_sys" "$base_sys")" "$sys_cpu" "$lau" \
		"$(awk -v a="$lau" -v b="$base_launch" 'BEGIN { printf "%.2f", a / b }')" \
		"$(added_ratio "$lau" "$floor_launch" "$base_launch")" "$lau_cpu"
done
