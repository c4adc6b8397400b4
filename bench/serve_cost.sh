#!/bin/sh
# What `gpuspy serve` itself costs (issue #24): its CPU use at the default settings, in ns of
# CPU from /proc/PID/task/*/schedstat (serve's threads and its watchdog process) over a window,
# not clock ticks, and its resident memory. Three rows:
#   quiet     serve -p of IDLE_PROCS sleeping processes: an idle host of that many processes,
#             without the activity of the rest of this one (a shared machine is never idle)
#   host      serve host-wide on the machine as it is, with the processes it started per
#             second meanwhile (/proc/stat's `processes`) beside it
#   churn     serve host-wide while RATE short CUDA programs a second start (cuda_loop on the
#             simulated GPU: 5 launches, then exit; started by a paced launcher, not as fast as
#             they go as bench/serve_soak.sh does): its CPU share, and its RSS over the run
# serve runs with --no-inject (SERVE_OPTS), like bench/live_bench.sh: the simulator's CUPTI work
# is not serve's, and a host-wide serve must not load the bridge into other people's programs.
# usage: bench/serve_cost.sh BUILD_DIR [IDLE_SECONDS [CHURN_SECONDS [RATE]]]
#   (as root; defaults 60, 60 and 100; make bench runs the defaults, tests/bench.bats a few s)
# environment: GPUSPY (default BUILD_DIR/gpuspy), IDLE_PROCS (default 200), SERVE_OPTS
#   (default --no-inject)
set -eu
build=$1
idle_s=${2:-60}
churn_s=${3:-60}
rate=${4:-100}
idle_procs=${IDLE_PROCS:-200}
serve_opts=${SERVE_OPTS---no-inject}
gpuspy=${GPUSPY:-$build/gpuspy}
loop=$build/targets/cuda/cuda_loop
fc=$build/fakecuda
bench_name=serve_cost
work=$(mktemp -d)
. "$(dirname "$0")/lib.sh"
bench_need "make all fakecuda" "$gpuspy" "$loop" "$fc/libcudart.so.13"
serve_pid=
sleepers=
cleanup() {
	stop_pid "$serve_pid"
	for p in $sleepers; do kill "$p" 2> /dev/null || true; done
	bench_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

serve_start() { # OPTIONS...
	: > "$work/serve.err"
	# shellcheck disable=SC2086
	"$gpuspy" serve $serve_opts --listen 127.0.0.1:0 "$@" > /dev/null 2> "$work/serve.err" &
	serve_pid=$!
	wait_line "$work/serve.err" "gpuspy: collecting" 60 "$serve_pid" || bench_fail "serve did not start"
	# the first intervals read every process once; what follows is the steady state
	sleep 3
}

serve_stop() {
	kill "$serve_pid"
	wait "$serve_pid" 2> /dev/null || true
	serve_pid=
}

# serve's CPU so far, in ns: its threads and its watchdog's (a child process)
serve_cpu_ns() {
	for p in $serve_pid $(ps -o pid= --ppid "$serve_pid"); do
		cat "/proc/$p/task/"*/schedstat 2> /dev/null || true
	done | awk '{ s += $1 } END { printf "%.0f\n", s }'
}
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$serve_pid/status"; }
forks() { awk '/^processes/ { print $2 }' /proc/stat; }
pct() { awk -v ns="$1" -v wall="$2" 'BEGIN { printf "%.3f", 100 * ns / wall }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# measure SECONDS: sets cpu (% of one CPU), wall_s, forks_s, rss_first, rss_second (peaks of
# each half, KiB), sampling RSS every second
measure() {
	c0=$(serve_cpu_ns)
	f0=$(forks)
	t0=$(now_ns)
	rss_first=0
	rss_second=0
	i=0
	while [ "$i" -lt "$1" ]; do
		sleep 1
		i=$((i + 1))
		r=$(rss_kib)
		if [ $((i * 2)) -le "$1" ]; then
			rss_first=$(max "$rss_first" "$r")
		else
			rss_second=$(max "$rss_second" "$r")
		fi
	done
	c1=$(serve_cpu_ns)
	t1=$(now_ns)
	cpu=$(pct $((c1 - c0)) $((t1 - t0)))
	wall_s=$(awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.0f", ns / 1e9 }')
	forks_s=$(awk -v n=$(($(forks) - f0)) -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f", n / (ns / 1e9) }')
}

# the quiet row: IDLE_PROCS sleeping processes, each its own
pids=
for _ in $(seq "$idle_procs"); do
	sleep 100000 &
	sleepers="$sleepers $!"
	pids=${pids:+$pids,}$!
done
serve_start -p "$pids"
measure "$idle_s"
q_cpu=$cpu q_wall=$wall_s q_rss=$rss_second
serve_stop
for p in $sleepers; do kill "$p" 2> /dev/null || true; done
for p in $sleepers; do wait "$p" 2> /dev/null || true; done
sleepers=

serve_start
measure "$idle_s"
h_cpu=$cpu h_wall=$wall_s h_forks=$forks_s h_rss=$rss_second
serve_stop

# the churn row: a paced launcher, one fork and exec per program, stdin from a file
printf 'go 5\nexit\n' > "$work/cmds"
serve_start
python3 - "$loop" "$fc" "$work/ready" "$work/cmds" "$rate" "$churn_s" > "$work/started" << 'EOF' &
import os, subprocess, sys, time
prog, fc, ready, cmds = sys.argv[1:5]
rate, secs = float(sys.argv[5]), float(sys.argv[6])
env = dict(os.environ, LD_LIBRARY_PATH=fc)
started, running, t0 = 0, [], time.monotonic()
while time.monotonic() - t0 < secs:
    while started < int((time.monotonic() - t0) * rate) + 1:
        with open(cmds) as f:
            running.append(subprocess.Popen([prog, ready], stdin=f, stdout=subprocess.DEVNULL, env=env))
        started += 1
    running = [p for p in running if p.poll() is None]
    time.sleep(max(0.0, started / rate - (time.monotonic() - t0)))
for p in running:
    p.wait()
print(started)
EOF
launcher=$!
measure "$churn_s"
wait "$launcher" || bench_fail "the launcher failed"
c_cpu=$cpu c_wall=$wall_s c_forks=$forks_s c_first=$rss_first c_second=$rss_second
c_started=$(cat "$work/started")
serve_stop

echo "machine: $(nproc) CPUs, kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg);" \
	"serve ${serve_opts:-(defaults)}, interval 1s"
echo
echo "| serve | window | serve CPU (% of one CPU) | serve RSS (MiB) | meanwhile |"
echo "|---|---:|---:|---:|---|"
echo "| quiet: -p $idle_procs sleeping processes | $q_wall s | $q_cpu% | $(mib "$q_rss") | |"
echo "| host-wide, this host as it is | $h_wall s | $h_cpu% | $(mib "$h_rss") | $h_forks processes started/s |"
echo "| host-wide, $rate CUDA programs/s | $c_wall s | $c_cpu% | $(mib "$c_first") → $(mib "$c_second") | $c_started programs started, $c_forks processes/s in all |"
echo
met() { awk -v v="$1" -v g="$2" 'BEGIN { print (v < g) ? "met" : "not met" }'; }
echo "goals (#24): idle < 0.2% of one CPU (quiet: $(met "$q_cpu" 0.2)); $rate CUDA programs/s < 3% ($(met "$c_cpu" 3)), RSS flat (first half's peak → second half's)"
