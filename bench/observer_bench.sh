#!/bin/sh
# The in-process PyTorch operator observer (build/libgpuspy_torch.so, issue #23) against
# torch.profiler on bench/torch_loop.py's CNN step, in one warm process, best of ROUNDS
# (bench/observer_bench.py says what each configuration is): untraced; the floor (the
# observer's global RecordFunction callbacks registered but returning at once: libtorch's own
# cost of having any global callback); the observer recording (rings read between iterations
# by ctypes); torch.profiler(activities=[CPU]); and the same with input shapes: the floor
# registered asking libtorch for inputs (its boxing alone), the observer recording shapes,
# torch.profiler(record_shapes=True). With --gpuspy (root) also, in the same
# process: gpuspy record -p --no-python --no-ops, whose attach turns the observer on and
# which receives its records (in-process), and gpuspy record -p --no-python --no-cupti (the
# operators' uprobes, observer off).
# Ratios are to the untraced loop of the same run, per-operator costs over untraced divided by
# the operator calls (RecordFunction starts) the observer counted per iteration.
# usage: bench/observer_bench.sh [--gpuspy] [BUILD_DIR] [ITERS] [ROUNDS]   (PYTHON: a python3
#        with torch, default /usr/bin/python3.11; CLOCK=cpu, without --gpuspy: iterations
#        timed by the loop thread's CPU clock, for a machine other work shares)
set -eu
with_gpuspy=0
if [ "${1:-}" = --gpuspy ]; then
	with_gpuspy=1
	shift
fi
build=${1:-build}
iters=${2:-200}
rounds=${3:-5}
py=${PYTHON:-/usr/bin/python3.11}
lib=$build/libgpuspy_torch.so
bench_name=observer_bench
here=$(dirname "$0")

[ -e "$lib" ] || { echo "$bench_name: $lib not found: make torch-observer" >&2; exit 1; }
"$py" -c 'import torch' 2> /dev/null || { echo "$bench_name: $py has no torch (set PYTHON)" >&2; exit 1; }
command -v jq > /dev/null || { echo "$bench_name: needs jq" >&2; exit 1; }

clock=${CLOCK:-wall}
[ $with_gpuspy -eq 0 ] || clock=wall # gpuspy's own threads' work must count
echo "clock: $clock; machine: $(nproc) CPUs, kernel $(uname -r), $("$py" -c 'import torch; print("torch", torch.__version__)'), $iters iterations, best of $rounds"

if [ $with_gpuspy -eq 0 ]; then
	out=$("$py" "$here/observer_bench.py" --lib "$lib" --iters "$iters" --rounds "$rounds" \
		--clock "$clock")
	echo "$out" | jq -r '
	"operator calls per iteration (RecordFunction starts): \(.ops_per_iter)",
	"",
	"| configuration | µs/iteration | slowdown | added ns/op |",
	"|---|---:|---:|---:|",
	(["untraced", "floor", "observer", "profiler", "shapes_floor", "shapes", "profiler_shapes"][] as $k
	 | "| \($k) | \(.iter_us[$k] * 10 | round / 10) | \(.ratio[$k] * 1000 | round / 1000)x | \(if $k == "untraced" then "-" else (.added_ns_per_op[$k] | round | tostring) end) |"),
	"",
	"observer own work over the floor: \((.added_ns_per_op.observer - .added_ns_per_op.floor) | round) ns/op",
	"observer with shapes, own work over its floor: \((.added_ns_per_op.shapes - .added_ns_per_op.shapes_floor) | round) ns/op",
	"torch.profiler leaving profile(): \(.profiler_exit_ms | round) ms for \(.iters) iterations, with shapes \(.profiler_shapes_exit_ms | round) ms",
	"reading the observer rings (ctypes, per iteration): \(.observer_read_us_per_iter | round) µs"'
	exit 0
fi

[ "$(id -u)" -eq 0 ] || { echo "$bench_name: --gpuspy must run as root" >&2; exit 1; }
[ -x "$build/gpuspy" ] || { echo "$bench_name: $build/gpuspy not found" >&2; exit 1; }
work=$(mktemp -d)
. "$here/lib.sh"
trap bench_cleanup EXIT
loop=$here/observer_bench.py

# run NAME: one configuration in the waiting process; sets med (µs per iteration) and ops
run() {
	loop_send "$1" observer_bench.py
	med=$(grep "^RESULT $1 " "$work/loop.out" | tail -1 | field median)
	ops=$(grep "^RESULT $1 " "$work/loop.out" | tail -1 | field ops)
}

loop_start --lib "$lib"
u='' f='' o='' p='' g='' q='' opi=0
r=0
while [ $r -lt "$rounds" ]; do
	run untraced
	u=$(min "$med" "$u")
	run floor
	f=$(min "$med" "$f")
	run observer
	o=$(min "$med" "$o")
	opi=$(max "$ops" "$opi")
	run profiler
	p=$(min "$med" "$p")
	rec_start "$work/g.gpuspy" "$loop_pid" --no-python --no-ops
	run inprocess
	rec_stop
	g=$(min "$med" "$g")
	rec_start "$work/q.gpuspy" "$loop_pid" --no-python --no-cupti
	run plain
	rec_stop
	q=$(min "$med" "$q")
	r=$((r + 1))
done
loop_end

awk -v u="$u" -v f="$f" -v o="$o" -v p="$p" -v g="$g" -v q="$q" -v n="$opi" 'BEGIN {
	printf "operator calls per iteration (RecordFunction starts): %.0f\n\n", n
	printf "| configuration | µs/iteration | slowdown | added ns/op |\n|---|---:|---:|---:|\n"
	printf "| untraced | %.1f | 1 | - |\n", u
	printf "| floor: callbacks registered, returning at once | %.1f | %.3fx | %.0f |\n", f, f / u, (f - u) * 1000 / n
	printf "| observer, rings read by ctypes between iterations | %.1f | %.3fx | %.0f |\n", o, o / u, (o - u) * 1000 / n
	printf "| gpuspy record -p --no-python --no-ops: in-process | %.1f | %.3fx | %.0f |\n", g, g / u, (g - u) * 1000 / n
	printf "| gpuspy record -p --no-python --no-cupti: uprobes | %.1f | %.3fx | %.0f |\n", q, q / u, (q - u) * 1000 / n
	printf "| torch.profiler(activities=[CPU]), in the loop | %.1f | %.3fx | %.0f |\n", p, p / u, (p - u) * 1000 / n
}'
