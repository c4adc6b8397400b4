#!/bin/sh
# gpuspy benchmarks: overhead on a syscall-heavy workload, sustained events/s with the loss
# count, bytes per event, and attach time. Results go to stdout as README-ready lines.
# usage: bench/run.sh BUILD_DIR [ITERATIONS] [REPEATS]     (as root)
set -eu
build=${1:-build}
iters=${2:-300000}
repeats=${3:-5}
gpuspy=$build/gpuspy
bench=$build/bench/syscall_bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

# best (lowest) ns/syscall over the repeats of a command line
best_ns() {
	best=
	i=0
	while [ $i -lt "$repeats" ]; do
		ns=$("$@" | field ns_per_syscall)
		best=$(echo "$ns ${best:-$ns}" | awk '{ print ($1 < $2) ? $1 : $2 }')
		i=$((i + 1))
	done
	echo "$best"
}

echo "machine: $(nproc) CPUs, kernel $(uname -r), $iters iterations x 3 syscalls, best of $repeats"

plain=$(best_ns "$bench" "$iters")
traced=$(best_ns "$gpuspy" record -q -f -o "$work/t.gpuspy" -- "$bench" "$iters")
spanned=$(best_ns "$gpuspy" record -q -f --osrt-threshold 0 --buffer-size 64 -o "$work/s.gpuspy" -- "$bench" "$iters")
awk -v p="$plain" -v t="$traced" -v s="$spanned" 'BEGIN {
	printf "untraced:                        %8.1f ns/syscall\n", p
	printf "traced (default 1 us threshold): %8.1f ns/syscall  ratio %.2fx  +%.0f ns/syscall\n", t, t / p, t - p
	printf "traced, every syscall a span:    %8.1f ns/syscall  ratio %.2fx  +%.0f ns/syscall\n", s, s / p, s - p
}'

# sustained events/s: every syscall a span, so the ring buffer carries one record per call
"$gpuspy" record -f --osrt-threshold 0 --buffer-size 64 -o "$work/e.gpuspy" -- \
	"$bench" "$iters" > "$work/e.out" 2> "$work/e.err"
secs=$(field seconds < "$work/e.out")
events=$(sed -n 's/.*(\([0-9]*\) records, \([0-9]*\) events, \([0-9]*\) lost).*/\2/p' "$work/e.err")
lost=$(sed -n 's/.*(\([0-9]*\) records, \([0-9]*\) events, \([0-9]*\) lost).*/\3/p' "$work/e.err")
bytes=$(stat -c %s "$work/e.gpuspy")
awk -v e="$events" -v s="$secs" -v l="$lost" -v b="$bytes" 'BEGIN {
	printf "sustained: %d events in %.3f s = %.0f events/s, %d lost\n", e, s, e / s, l
	printf "trace size: %d bytes = %.1f bytes/event\n", b, b / e
}'

# attach time: from starting gpuspy to its "recording" line, for a running process
sleep 30 &
target=$!
start=$(date +%s%N)
"$gpuspy" record -p "$target" -f -o "$work/a.gpuspy" 2> "$work/a.err" &
rec=$!
while ! grep -q recording "$work/a.err" 2>/dev/null; do sleep 0.005; done
end=$(date +%s%N)
kill -INT "$rec"
wait "$rec" || true
kill "$target"
echo "attach: $(((end - start) / 1000000)) ms from start to probes live (pid $target)"
