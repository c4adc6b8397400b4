#!/bin/sh
# What `gpuspy serve` and `gpuspy top` cost while they run host-wide (issue #24's goals): the
# slowdown of a syscall-heavy workload (bench/syscall_bench: getppid + read + write) and of a
# launch-heavy one (launch_bench on the simulated CUDA stack: empty kernels launched back to
# back through the runtime), untraced, under each floor and under each view, with the view's
# CPU use meanwhile and on the idle host (the machine as it is: others' processes included). top runs as scripts use it (--format json each
# second, to /dev/null). The floors (lib.sh's floor_start):
#   syscalls  empty tp_btf programs on sys_enter/sys_exit
#   timer     (syscalls) the same hooks doing the least an exact per-call timer must: a clock
#             read at both ends, the start in task storage, a per-thread total
#             (empty_probes --timer): where its ratio passes 1.5, no exact per-syscall
#             durations can meet the goal on this machine
#   count     (syscalls, not a floor) empty_probes --count: sys_enter alone counting each call per
#             (process, thread, syscall) in a hash map, nothing on sys_exit: what exact counts
#             without any durations would cost
#   launches  one empty entry uprobe on the driver's launch functions (empty_probes --launch):
#             the least any uprobe tracer counting launches pays
# serve counts syscalls without timing them unless --syscall-time (a row of its own). The last
# row is serve -p of another CUDA process (cuda_loop on the same libraries): what the
# workloads pay while not traced.
# The ratio in brackets is the view's added cost over the floor's (goal: ≤ 1.5). Each figure is
# the best (lowest) of ROUNDS rounds; a round measures every configuration once, so a slow
# phase of the (shared) machine hits all of them.
# usage: bench/live_bench.sh BUILD_DIR [ROUNDS]     (as root; default 3)
#   IDLE_SECONDS  the idle-host window, measured in the first round (default 30); view CPU is
#              in ns of CPU from /proc/PID/task/*/schedstat (bench/serve_cost.sh: serve's own
#              cost, quiet, host-wide and under process churn)
#   GPUSPY     the gpuspy binary (default BUILD_DIR/gpuspy)
#   VIEW_OPTS  options for both views (default --no-inject: the launch-heavy workload starts
#              after the view, which would otherwise load the CUPTI bridge into it half-way, and
#              the simulator's CUPTI work is neither gpuspy's cost nor the floor's)
set -eu
build=$1
rounds=${2:-3}
view_opts=${VIEW_OPTS---no-inject}
gpuspy=${GPUSPY:-$build/gpuspy}
bench_name=live_bench
work=$(mktemp -d)
. "$(dirname "$0")/lib.sh"
sysb=$build/bench/syscall_bench
launch=$build/targets/cuda/launch_bench
fc=$build/fakecuda
bench_need "make all fakecuda, and the bench programs" "$gpuspy" "$sysb" "$launch" \
	"$fc/libcudart.so.13" "$build/bench/empty_probes"
view_pid=
target_pid=
cleanup() {
	stop_pid "$view_pid"
	stop_pid "$target_pid"
	bench_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# the view's CPU so far, in ns (schedstat: not clock ticks, which a second or ten of a view that
# uses a few ms of it cannot resolve): its threads and its watchdog's (a child process)
cpu_ns() {
	for p in $1 $(ps -o pid= --ppid "$1"); do
		cat "/proc/$p/task/"*/schedstat 2> /dev/null || true
	done | awk '{ s += $1 } END { printf "%.0f\n", s }'
}
idle_s=${IDLE_SECONDS:-30}

# The target of `serve -p` (the serve_p row): a CUDA process on the same simulated libraries,
# so their probes are attached and the untraced workloads run through them, as an untraced
# process beside a traced one on a shared host would.
mkfifo "$work/ctl"
LD_LIBRARY_PATH=$fc "$build/targets/cuda/cuda_loop" "$work/ready" < "$work/ctl" > /dev/null 2>&1 &
target_pid=$!
exec 5> "$work/ctl"
i=0
while [ ! -e "$work/ready" ]; do
	i=$((i + 1))
	if [ $i -ge 6000 ] || ! kill -0 "$target_pid" 2> /dev/null; then
		bench_fail "cuda_loop did not start"
	fi
	sleep 0.01
done

view_start() { # serve|serve_time|serve_p|top
	: > "$work/view.err"
	if [ "$1" != top ]; then
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		time_opt=
		[ "$1" != serve_time ] || time_opt=--syscall-time
		[ "$1" != serve_p ] || time_opt="-p $target_pid"
		# shellcheck disable=SC2086
		"$gpuspy" serve $view_opts $time_opt --listen "127.0.0.1:$port" 2> "$work/view.err" &
		view_pid=$!
		wait_line "$work/view.err" "gpuspy: collecting" 60 "$view_pid"
	else
		# shellcheck disable=SC2086
		"$gpuspy" top $view_opts --format json > /dev/null 2> "$work/view.err" &
		view_pid=$!
		wait_line "$work/view.err" "gpuspy: watching" 60 "$view_pid"
	fi
}

view_stop() {
	kill "$view_pid"
	wait "$view_pid" 2> /dev/null || true
	view_pid=
}

one() { "$@" | sed -n 's/.*ns_per_[a-z]*=\([0-9.]*\).*/\1/p'; }
syscalls() { one "$sysb" 300000; }
launches() { LD_LIBRARY_PATH=$fc one "$launch" 100000; }

# cpu_pct PID START_CPU_NS START_NS: the view's CPU use since then, in % of one CPU
cpu_pct() {
	awk -v c0="$2" -v c1="$(cpu_ns "$1")" -v ns="$(($(now_ns) - $3))" \
		'BEGIN { printf "%.3f", 100 * (c1 - c0) / ns }'
}

# added_ratio VALUE FLOOR BASE: (VALUE - BASE) / (FLOOR - BASE)
added_ratio() { awk -v v="$1" -v f="$2" -v b="$3" 'BEGIN { printf "%.2f", (v - b) / (f - b) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# shellcheck disable=SC2034 # read through eval
b_sys='' b_lau='' f_sys='' t_sys='' c_sys='' f_lau='' serve_sys='' serve_lau='' top_sys='' top_lau=''
# shellcheck disable=SC2034 # read through eval
serve_idle='' top_idle='' serve_sys_cpu='' serve_lau_cpu='' top_sys_cpu='' top_lau_cpu=''
# shellcheck disable=SC2034 # read through eval
serve_time_sys='' serve_time_lau='' serve_time_idle='' serve_time_sys_cpu='' serve_time_lau_cpu=''
# shellcheck disable=SC2034 # read through eval
serve_p_sys='' serve_p_lau='' serve_p_idle='' serve_p_sys_cpu='' serve_p_lau_cpu=''
views="serve serve_time top serve_p"
# a gpuspy from before serve had --syscall-time timed every syscall anyway
"$gpuspy" serve --help | grep -q -- --syscall-time || views="serve top serve_p"
for round in $(seq "$rounds"); do
	echo "$bench_name: round $round of $rounds" >&2
	b_sys=$(min "$(syscalls)" "$b_sys")
	b_lau=$(min "$(launches)" "$b_lau")
	floor_start --syscalls
	f_sys=$(min "$(syscalls)" "$f_sys")
	floor_stop
	floor_start --timer --syscalls
	t_sys=$(min "$(syscalls)" "$t_sys")
	floor_stop
	floor_start --count --syscalls
	c_sys=$(min "$(syscalls)" "$c_sys")
	floor_stop
	floor_start --launch "$fc/libcuda.so.1"
	f_lau=$(min "$(launches)" "$f_lau")
	floor_stop
	for view in $views; do
		view_start "$view"
		if [ "$round" = 1 ] && [ "$view" != serve_p ]; then
			t0=$(cpu_ns "$view_pid")
			s0=$(now_ns)
			sleep "$idle_s"
			eval "${view}_idle=\$(cpu_pct $view_pid $t0 $s0)"
		fi
		t0=$(cpu_ns "$view_pid")
		s0=$(now_ns)
		v=$(syscalls)
		c=$(cpu_pct "$view_pid" "$t0" "$s0")
		eval "old=\$${view}_sys"
		[ "$(min "$v" "$old")" != "$v" ] || eval "${view}_sys=$v ${view}_sys_cpu=$c"
		t0=$(cpu_ns "$view_pid")
		s0=$(now_ns)
		v=$(launches)
		c=$(cpu_pct "$view_pid" "$t0" "$s0")
		eval "old=\$${view}_lau"
		[ "$(min "$v" "$old")" != "$v" ] || eval "${view}_lau=$v ${view}_lau_cpu=$c"
		view_stop
	done
done

echo "machine: $(nproc) CPUs, kernel $(uname -r), $(ls -d /proc/[0-9]* | wc -l) processes," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg); best of $rounds rounds; views: ${view_opts:-defaults}"
echo
echo "| | idle host: view CPU | syscall-heavy: ns/syscall (× untraced, × floor's added) | view CPU | launch-heavy: ns/launch (× untraced, × floor's added) | view CPU |"
echo "|---|---:|---:|---:|---:|---:|"
echo "| untraced | | $b_sys | | $b_lau | |"
echo "| floor | | $f_sys ($(ratio "$f_sys" "$b_sys")×, 1×) | | $f_lau ($(ratio "$f_lau" "$b_lau")×, 1×) | |"
echo "| timer floor | | $t_sys ($(ratio "$t_sys" "$b_sys")×, $(added_ratio "$t_sys" "$f_sys" "$b_sys")×) | | | |"
echo "| count-only prototype | | $c_sys ($(ratio "$c_sys" "$b_sys")×, $(added_ratio "$c_sys" "$f_sys" "$b_sys")×) | | | |"
for view in $views; do
	eval "sys=\$${view}_sys lau=\$${view}_lau idle=\$${view}_idle sc=\$${view}_sys_cpu lc=\$${view}_lau_cpu"
	[ "$view" != serve_time ] || view="serve --syscall-time"
	[ "$view" != serve_p ] || view="serve -p OTHER (workload untraced)"
	[ -z "$idle" ] || idle="$idle%"
	printf '| %s | %s | %s (%s×, %s×) | %s%% | %s (%s×, %s×) | %s%% |\n' "$view" "$idle" \
		"$sys" "$(ratio "$sys" "$b_sys")" "$(added_ratio "$sys" "$f_sys" "$b_sys")" "$sc" \
		"$lau" "$(ratio "$lau" "$b_lau")" "$(added_ratio "$lau" "$f_lau" "$b_lau")" "$lc"
done
echo
echo "goals (#24, added cost over the floor's): per launch under serve and top ≤ 1.5×; per syscall under serve ≤ 1.5×"
