#!/bin/sh
# The cost of the live views' kernel records, and what --gpu-sample saves between its windows:
# launch_bench (empty kernels, bridge loaded at its start) watched by `gpuspy top -p` with
# --no-cupti (uprobes only), --gpu-sample always (every kernel recorded), and --gpu-sample
# 1s/10s with the run placed after the first window (kernel records paused; CUPTI's API
# records stay on). Best of REPEATS, timing measured inside launch_bench. Results to stdout.
# usage: bench/gpu_sample_bench.sh BUILD_DIR [LAUNCHES] [REPEATS]     (as root)
set -eu
build=${1:-build}
launches=${2:-300000}
repeats=${3:-3}
gpuspy=$build/gpuspy
bench=$build/targets/cuda/launch_bench
bridge=$build/libgpuspy_cupti.so
libs=$build/fakecuda
work=$(mktemp -d)
top_pid=
trap '[ -z "$top_pid" ] || kill "$top_pid" 2>/dev/null; rm -rf "$work"' EXIT

for f in "$gpuspy" "$bench" "$bridge" "$libs/libcudart.so.13"; do
	[ -e "$f" ] || { echo "gpu_sample_bench: $f not found: make all fakecuda bridge" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "gpu_sample_bench: must run as root" >&2; exit 1; }

# One run under top with OPTIONS: ns per launch. The command waits on a fifo, so top watches
# it before its first CUDA call; DELAY seconds after top is live it runs.
one() { # DELAY OPTION...
	delay=$1
	shift
	rm -f "$work/go" "$work/err"
	mkfifo "$work/go"
	sh -c 'read x < "$1"; shift; exec "$@"' sh "$work/go" env LD_LIBRARY_PATH="$libs" \
		CUDA_INJECTION64_PATH="$bridge" "$bench" "$launches" > "$work/out" 2>&1 &
	cmd=$!
	"$gpuspy" top -p "$cmd" --format json "$@" > /dev/null 2> "$work/err" &
	top_pid=$!
	until grep -q "gpuspy: watching" "$work/err" 2>/dev/null; do sleep 0.1; done
	sleep "$delay"
	echo go > "$work/go"
	wait "$cmd"
	kill "$top_pid"
	wait "$top_pid" || true
	top_pid=
	sed -n 's/.*ns_per_launch=\([0-9.]*\).*/\1/p' "$work/out"
}

best() { # DELAY OPTION...
	b=
	i=0
	while [ $i -lt "$repeats" ]; do
		ns=$(one "$@")
		[ -n "$ns" ] || { echo "gpu_sample_bench: failed: top $*" >&2; exit 1; }
		b=$(echo "$ns ${b:-$ns}" | awk '{ print ($1 < $2) ? $1 : $2 }')
		i=$((i + 1))
	done
	echo "$b"
}

echo "machine: $(nproc) CPUs, kernel $(uname -r), $launches launches, best of $repeats"
u=$(best 0.5 --no-cupti)
a=$(best 0.5 --gpu-sample always)
p=$(best 1.5 --gpu-sample 1s/10s)
awk -v u="$u" -v a="$a" -v p="$p" 'BEGIN {
	printf "top --no-cupti (uprobes only):               %8.1f ns/launch\n", u
	printf "top --gpu-sample always (every kernel):      %8.1f ns/launch  +%.0f ns for GPU records\n", a, a - u
	printf "top --gpu-sample 1s/10s, between windows:    %8.1f ns/launch  +%.0f ns (kernel records paused)\n", p, p - u
}'
