#!/bin/sh
# The in-process PyTorch operator observer (build/libgpuspy_torch.so, issue #23) against
# torch.profiler on bench/torch_loop.py's CNN step, in one warm process, best of ROUNDS
# (bench/observer_bench.py says what each configuration is): untraced; the floor (the
# observer's global RecordFunction callbacks registered but returning at once: libtorch's own
# cost of having any global callback); the observer recording; torch.profiler(activities=[CPU]).
# Ratios are to the untraced loop of the same run, per-operator costs over untraced divided by
# the operator calls (RecordFunction starts) the observer counted per iteration. No root.
# usage: bench/observer_bench.sh [BUILD_DIR] [ITERS] [ROUNDS]   (PYTHON: a python3 with torch,
#        default /usr/bin/python3.11)
set -eu
build=${1:-build}
iters=${2:-200}
rounds=${3:-5}
py=${PYTHON:-/usr/bin/python3.11}
lib=$build/libgpuspy_torch.so
bench_name=observer_bench

[ -e "$lib" ] || { echo "$bench_name: $lib not found: make torch-observer" >&2; exit 1; }
"$py" -c 'import torch' 2> /dev/null || { echo "$bench_name: $py has no torch (set PYTHON)" >&2; exit 1; }
command -v jq > /dev/null || { echo "$bench_name: needs jq" >&2; exit 1; }

echo "machine: $(nproc) CPUs, kernel $(uname -r), $("$py" -c 'import torch; print("torch", torch.__version__)'), $iters iterations, best of $rounds"
out=$("$py" "$(dirname "$0")/observer_bench.py" --lib "$lib" --iters "$iters" --rounds "$rounds")
echo "$out" | jq -r '
	"operator calls per iteration (RecordFunction starts): \(.ops_per_iter)",
	"",
	"| configuration | µs/iteration | slowdown | added ns/op |",
	"|---|---:|---:|---:|",
	(["untraced", "floor", "observer", "profiler"][] as $k
	 | "| \($k) | \(.iter_us[$k] * 10 | round / 10) | \(.ratio[$k] * 1000 | round / 1000)x | \(if $k == "untraced" then "-" else (.added_ns_per_op[$k] | round | tostring) end) |"),
	"",
	"observer own work over the floor: \((.added_ns_per_op.observer - .added_ns_per_op.floor) | round) ns/op",
	"torch.profiler leaving profile(): \(.profiler_exit_ms | round) ms for \(.iters) iterations",
	"reading the observer rings (ctypes, per iteration): \(.observer_read_us_per_iter | round) µs"'
