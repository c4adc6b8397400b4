#!/bin/sh
# gpuspy CUDA API tracing benchmark: ns per kernel launch untraced, with the floor (empty entry +
# return uprobes on the same CUDA functions, bench/empty_probes) and under gpuspy record, all in
# one run; gpuspy's added cost is reported as a ratio to the floor's. Then what an untraced
# process pays: the same workload, not traced, while gpuspy records another CUDA process (an
# idle cuda_loop on the same libraries: their probes are attached to the files, so every process
# that maps them takes the traps, and the programs leave at their first test). Then sustained
# launches/s and the loss count under a small ring buffer. Results go to stdout as README-ready lines.
# The programs run against the simulated CUDA stack ($BUILD/fakecuda, `make fakecuda`).
# usage: bench/cuda_bench.sh BUILD_DIR [LAUNCHES] [REPEATS]     (as root)
set -eu
usage="usage: bench/cuda_bench.sh BUILD_DIR [LAUNCHES] [REPEATS]"
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
	echo "$usage" >&2
	exit 1
fi
build=$1
launches=${2:-200000}
repeats=${3:-5}
gpuspy=$build/gpuspy
bench=$build/targets/cuda/launch_bench
floor=$build/bench/empty_probes
libs=$build/fakecuda
work=$(mktemp -d)
bench_name=cuda_bench
. "$(dirname "$0")/lib.sh"

fail() { bench_fail "$@"; }

# The floor (lib.sh's floor_start) is attached once for all its repeats, and stopped on every
# exit path (bench_cleanup).
other_pid=
stop_other() {
	if [ -n "$other_pid" ]; then
		exec 5>&- # cuda_loop exits at the end of its input
		wait "$other_pid" 2> /dev/null || true
		other_pid=
	fi
}
trap 'stop_other; bench_cleanup' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

case $launches in '' | *[!0-9]* | 0*) fail "LAUNCHES must be a positive integer: $launches" ;; esac
case $repeats in '' | *[!0-9]* | 0*) fail "REPEATS must be a positive integer: $repeats" ;; esac
[ "$(id -u)" -eq 0 ] || fail "must run as root (uprobes)"
for f in "$bench" "$floor"; do
	[ -x "$f" ] || fail "$f not found: build it first"
done
for f in "$libs/libcudart.so.13" "$libs/libcuda.so.1"; do
	[ -f "$f" ] || fail "$f not found: run make fakecuda"
done

# best (lowest) ns/launch over the repeats of a command line; empty if any run fails
best_ns() {
	best=
	i=0
	while [ $i -lt "$repeats" ]; do
		"$@" > "$work/run.out" 2> "$work/run.err" || {
			echo "cuda_bench: failed ($?): $*" >&2
			sed 's/^/  /' "$work/run.err" | tail -5 >&2
			return 0
		}
		ns=$(field ns_per_launch < "$work/run.out")
		[ -n "$ns" ] || {
			echo "cuda_bench: no ns_per_launch from: $*" >&2
			return 0
		}
		best=$(echo "$ns ${best:-$ns}" | awk '{ print ($1 < $2) ? $1 : $2 }')
		i=$((i + 1))
	done
	echo "$best"
}

workload() { env LD_LIBRARY_PATH="$libs" "$bench" "$launches"; }

echo "machine: $(nproc) CPUs, kernel $(uname -r), $launches launches, best of $repeats"

# (a) untraced
plain=$(best_ns workload)
[ -n "$plain" ] || fail "the untraced workload failed"

# (b) the floor: empty programs on entry and return of every probed function of both libraries
floor_start "$libs/libcudart.so.13" "$libs/libcuda.so.1"
probes=$floor_probes
empty=$(best_ns workload)
# (d) the floor under gpuspy's syscall tracing (--no-cuda): every uretprobe returns through a
# syscall (Linux 6.11+), which gpuspy's syscall tracepoints see, so this is the floor that
# gpuspy's own CUDA programs replace the empty ones on
floor_osrt=
[ -x "$gpuspy" ] && floor_osrt=$(best_ns "$gpuspy" record -q -f --no-cuda -o "$work/d.gpuspy" -- \
	env LD_LIBRARY_PATH="$libs" "$bench" "$launches")
floor_stop
[ -n "$empty" ] || fail "the workload failed under empty_probes"

# (c) gpuspy
traced=
if [ -x "$gpuspy" ]; then
	traced=$(best_ns "$gpuspy" record -q -f -o "$work/c.gpuspy" -- \
		env LD_LIBRARY_PATH="$libs" "$bench" "$launches")
else
	echo "cuda_bench: $gpuspy not found: gpuspy not measured" >&2
fi

# (e) the workload untraced while gpuspy records an idle cuda_loop (defaults)
untraced=
loop=$build/targets/cuda/cuda_loop
if [ -x "$gpuspy" ] && [ -x "$loop" ]; then
	rm -f "$work/other.ctl" "$work/other.ready"
	mkfifo "$work/other.ctl"
	env LD_LIBRARY_PATH="$libs" "$loop" "$work/other.ready" < "$work/other.ctl" > /dev/null 2>&1 &
	other_pid=$!
	exec 5> "$work/other.ctl"
	i=0
	while [ ! -e "$work/other.ready" ]; do
		[ $i -lt 600 ] && kill -0 "$other_pid" 2> /dev/null || fail "cuda_loop did not start"
		sleep 0.1
		i=$((i + 1))
	done
	rec_start "$work/u.gpuspy" "$other_pid"
	untraced=$(best_ns workload)
	rec_stop
	stop_other
fi

awk -v p="$plain" -v e="$empty" -v t="$traced" -v n="$probes" -v d="$floor_osrt" \
	-v u="$untraced" 'BEGIN {
	printf "untraced:                           %8.1f ns/launch\n", p
	printf "floor (empty entry+return uprobes): %8.1f ns/launch  +%.0f ns/launch  (%d probes)\n", \
		e, e - p, n
	if (t == "") {
		print "gpuspy record:                      not measured"
		exit
	}
	printf "gpuspy record:                      %8.1f ns/launch  +%.0f ns/launch\n", t, t - p
	if (e - p > 0)
		printf "gpuspy added cost / floor added cost: %.2fx\n", (t - p) / (e - p)
	else
		print "gpuspy added cost / floor added cost: n/a (the floor added no measurable cost)"
	if (d != "" && d - p > 0) {
		printf "floor + gpuspy --no-cuda:           %8.1f ns/launch  +%.0f ns/launch\n", d, d - p
		printf "gpuspy added cost / (floor + syscall tracing) added cost: %.2fx\n", \
			(t - p) / (d - p)
	}
	if (u != "") {
		printf "untraced, gpuspy recording another: %8.1f ns/launch  +%.0f ns/launch", u, u - p
		if (e - p > 0)
			printf "  (%.2fx the floor added cost)", (u - p) / (e - p)
		printf "\n"
	}
}'

# sustained launches/s with a small ring buffer, and what it lost
[ -x "$gpuspy" ] || exit 0
if "$gpuspy" record -f --buffer-size 64 -o "$work/e.gpuspy" -- \
	env LD_LIBRARY_PATH="$libs" "$bench" "$launches" > "$work/e.out" 2> "$work/e.err"; then
	secs=$(field seconds < "$work/e.out")
	wrote='.*(\([0-9]*\) records, \([0-9]*\) events, \([0-9]*\) lost).*'
	events=$(sed -n "s/$wrote/\2/p" "$work/e.err")
	lost=$(sed -n "s/$wrote/\3/p" "$work/e.err")
	if [ -n "$secs" ] && [ -n "$lost" ]; then
		awk -v n="$launches" -v s="$secs" -v e="$events" -v l="$lost" 'BEGIN {
			printf "sustained (--buffer-size 64): %.0f launches/s, %d events, %d lost\n", \
				n / s, e, l
			if (e < n)
				printf "  (fewer events than launches: is CUDA tracing on?)\n"
		}'
	else
		echo "cuda_bench: no seconds= or \"N lost\" figure from the sustained run" >&2
	fi
else
	echo "cuda_bench: sustained run failed: $(tail -1 "$work/e.err")" >&2
fi
