#!/bin/sh
# `gpuspy serve` under process churn for a while: does it stay bounded, and do the series of
# processes that exited go once their grace period is over? While serve runs host-wide, a
# shell loop starts short processes (/bin/true) and another starts CUDA programs on the
# simulated stack (cuda_loop: 5 launches, then exit), one after the other. Every SAMPLE
# seconds it notes serve's resident memory, the processes it tracks and the series it exports.
# At the end the load stops; a process with series that is gone from /proc must have lost
# them one grace period later, and the memory of the second half of the run must not exceed the
# first half's by more than 10% + 2 MiB. Prints the samples and a verdict; exits 1 on failure.
# usage: bench/serve_soak.sh BUILD_DIR SECONDS     (as root; CI runs a minute, README hours)
# Environment: SOAK_GRACE (default 5s; whole seconds), SOAK_SAMPLE (seconds, default SECONDS/12, at least 2).
set -eu
usage="usage: bench/serve_soak.sh BUILD_DIR SECONDS"
[ $# -eq 2 ] || {
	echo "$usage" >&2
	exit 1
}
build=$1
seconds=$2
bench_name=serve_soak
case $seconds in '' | *[!0-9]*)
	echo "$usage" >&2
	exit 1
	;;
esac
grace=${SOAK_GRACE:-5s}
sample=${SOAK_SAMPLE:-$((seconds / 12))}
[ "$sample" -ge 2 ] || sample=2
gpuspy=$build/gpuspy
loop=$build/targets/cuda/cuda_loop
fc=$build/fakecuda
. "$(dirname "$0")/lib.sh"
bench_need "make all fakecuda" "$gpuspy" "$loop" "$fc/libcudart.so.13"
work=$(mktemp -d)
serve_pid=
load_pids=
cleanup() {
	touch "$work/stop"
	for p in $load_pids $serve_pid; do
		stop_pid "$p"
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
addr=127.0.0.1:$port
"$gpuspy" serve --listen "$addr" --interval 500ms --grace "$grace" > /dev/null 2> "$work/serve.err" &
serve_pid=$!
wait_line "$work/serve.err" "gpuspy: collecting" 60 "$serve_pid"

metrics() { curl -sf "http://$addr/metrics"; }
# the loads: each ends when $work/stop appears, counting its iterations
(
	n=0
	while [ ! -e "$work/stop" ]; do
		/bin/true
		n=$((n + 1))
	done
	echo "$n" > "$work/spawned"
) &
load_pids="$load_pids $!"
(
	n=0
	while [ ! -e "$work/stop" ]; do
		printf 'go 5\nexit\n' | LD_LIBRARY_PATH=$fc "$loop" "$work/ready" > /dev/null
		n=$((n + 1))
	done
	echo "$n" > "$work/cuda_runs"
) &
load_pids="$load_pids $!"

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$serve_pid/status"; }
echo "| t (s) | serve RSS (KiB) | processes tracked | process series | exposition (bytes) |"
echo "|---:|---:|---:|---:|---:|"
start=$(date +%s)
t=0
first_half=0
second_half=0
peak_tracked=0
while [ "$t" -lt "$seconds" ]; do
	sleep "$sample"
	t=$(($(date +%s) - start))
	metrics > "$work/m" || bench_fail "no answer from /metrics"
	rss=$(rss_kib)
	tracked=$(awk '/^gpuspy_processes/ { s += $2 } END { print s + 0 }' "$work/m")
	series=$(grep -c '^gpuspy_process_info{' "$work/m" || true)
	echo "| $t | $rss | $tracked | $series | $(wc -c < "$work/m") |"
	peak_tracked=$(max "$peak_tracked" "$tracked")
	if [ "$t" -le $((seconds / 2)) ]; then
		first_half=$(max "$first_half" "$rss")
	else
		second_half=$(max "$second_half" "$rss")
	fi
done
touch "$work/stop"
# the loads end within a run of their loop; one that does not has a process that was left
# stopped (gpuspy holds a process while it probes new CUDA libraries, then resumes it)
for _ in $(seq 300); do
	alive=0
	for p in $load_pids; do ! kill -0 "$p" 2> /dev/null || alive=1; done
	[ "$alive" -eq 0 ] && break
	sleep 0.1
done
if [ "$alive" -ne 0 ]; then
	ps -eo pid,stat,comm | awk '$2 ~ /^T/' >&2
	bench_fail "the load did not end: a process stayed stopped"
fi
for p in $load_pids; do wait "$p" 2> /dev/null || true; done
load_pids=
echo "load: $(cat "$work/spawned") short processes, $(cat "$work/cuda_runs") CUDA programs"

# every process with series but gone from /proc now must have lost them one grace period
# (and two refreshes) later: the load's, and the short-lived helpers of this script's own
grace_s=$(echo "$grace" | sed 's/s$//')
sleep $((grace_s + 2))
metrics > "$work/m"
gone=
for pid in $(sed -n 's/^gpuspy_process_info{pid="\([0-9]*\)".*/\1/p' "$work/m"); do
	[ -d "/proc/$pid" ] || gone="$gone $pid"
done
sleep $((grace_s + 2))
metrics > "$work/m"
stale=0
for pid in $gone; do
	! grep -q "^gpuspy_process_info{pid=\"$pid\"" "$work/m" || stale=$((stale + 1))
done
tracked=$(awk '/^gpuspy_processes/ { s += $2 } END { print s + 0 }' "$work/m")
echo "processes gone at the first look: $(echo $gone | wc -w); their series left one grace period later: $stale"
echo "processes tracked: $peak_tracked at the peak of the load, $tracked after it"
echo "peak RSS: first half $first_half KiB, second half $second_half KiB"
[ "$stale" -eq 0 ] || bench_fail "$stale exited processes still have series"
# what is left is the host's live processes and its last seconds' exits, not the load's
[ $((tracked * 10)) -lt "$peak_tracked" ] || bench_fail "$tracked processes still tracked"
limit=$((first_half + first_half / 10 + 2048))
[ "$second_half" -le "$limit" ] || bench_fail "RSS grew: $second_half KiB > $limit KiB"
echo "verdict: bounded"
