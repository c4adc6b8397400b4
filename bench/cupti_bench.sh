#!/bin/sh
# CUPTI bridge benchmarks on the simulated CUDA stack, all in one run:
#  - untraced cost of the loaded bridge (no recorder attached: its gate is closed), against no
#    injection at all and against an injection that only starts an idle thread (the bridge's
#    one footprint while closed);
#  - traced cost per launch with GPU records (gpuspy record) against uprobes only (--no-cupti);
#  - GPU records per second sustained, with gpuspy's loss counters.
# Each figure is best of REPEATS, timing measured inside launch_bench. Results go to stdout.
# usage: bench/cupti_bench.sh BUILD_DIR [LAUNCHES] [REPEATS]     (as root)
set -eu
build=${1:-build}
launches=${2:-100000}
repeats=${3:-5}
gpuspy=$build/gpuspy
bench=$build/targets/cuda/launch_bench
bridge=$build/libgpuspy_cupti.so
idle=$build/bench/idle_thread_inject.so
libs=$build/fakecuda
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for f in "$gpuspy" "$bench" "$bridge" "$idle" "$libs/libcudart.so.13"; do
	[ -e "$f" ] || { echo "cupti_bench: $f not found: make all fakecuda bridge $idle" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "cupti_bench: must run as root" >&2; exit 1; }

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

best_ns() {
	best=
	i=0
	while [ $i -lt "$repeats" ]; do
		ns=$("$@" 2> "$work/err" | field ns_per_launch)
		[ -n "$ns" ] || { echo "cupti_bench: failed: $* ($(tail -1 "$work/err"))" >&2; exit 1; }
		best=$(echo "$ns ${best:-$ns}" | awk '{ print ($1 < $2) ? $1 : $2 }')
		i=$((i + 1))
	done
	echo "$best"
}

run() { env LD_LIBRARY_PATH="$libs" "$@" "$bench" "$launches"; }

echo "machine: $(nproc) CPUs, kernel $(uname -r), $launches launches, best of $repeats"
plain=$(best_ns run)
thread=$(best_ns run CUDA_INJECTION64_PATH="$idle")
closed=$(best_ns run CUDA_INJECTION64_PATH="$bridge")
uprobes=$(best_ns "$gpuspy" record -q -f --no-cupti -o "$work/u.gpuspy" -- env LD_LIBRARY_PATH="$libs" "$bench" "$launches")
cupti=$(best_ns "$gpuspy" record -q -f -o "$work/c.gpuspy" -- env LD_LIBRARY_PATH="$libs" "$bench" "$launches")
awk -v p="$plain" -v t="$thread" -v c="$closed" -v u="$uprobes" -v g="$cupti" 'BEGIN {
	printf "untraced, no injection:                 %8.1f ns/launch\n", p
	printf "untraced, idle-thread injection:        %8.1f ns/launch  %+.1f%%\n", t, 100 * (t - p) / p
	printf "untraced, bridge loaded (gate closed):  %8.1f ns/launch  %+.1f%% (%+.1f%% vs idle thread)\n", \
		c, 100 * (c - p) / p, 100 * (c - t) / t
	printf "gpuspy record --no-cupti (uprobes):     %8.1f ns/launch\n", u
	printf "gpuspy record (uprobes + GPU records):  %8.1f ns/launch  +%.0f ns/launch for GPU records\n", g, g - u
}'

# sustained GPU records per second: every launch is a kernel record plus CUPTI's API records
"$gpuspy" record -f --buffer-size 64 -o "$work/s.gpuspy" -- env LD_LIBRARY_PATH="$libs" \
	"$bench" "$launches" > "$work/s.out" 2> "$work/s.err"
secs=$(field seconds < "$work/s.out")
kernels=$("$gpuspy" report "$work/s.gpuspy" --report cuda_gpu_kern_sum --format json |
	sed -n 's/.*"instances": *\([0-9]*\).*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
lost=$("$gpuspy" report "$work/s.gpuspy" --report losses --format json |
	sed -n 's/.*"lost": *\([0-9]*\).*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
awk -v k="$kernels" -v s="$secs" -v l="$lost" -v n="$launches" 'BEGIN {
	printf "sustained: %d kernel records for %d launches in %.3f s = %.0f kernel records/s, %d lost\n", \
		k, n, s, k / s, l
}'
