#!/bin/sh
# The README's demo: record the bundled workload, print its tables, write its timeline.
# usage: tests/demo.sh BUILD_DIR
set -eu
build=${1:-build}
out=$build/demo
# the distribution's interpreter: a pyenv or venv shim would add its own wrapper processes
python=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
mkdir -p "$out"
echo "== gpuspy record: a toy training loop with two data-loader worker processes"
"$build/gpuspy" record -f -o "$out/demo.gpuspy" -- "$python" tests/targets/demo_workload.py
echo
echo "== gpuspy report: OS-runtime summary, off-CPU time per thread, processes"
"$build/gpuspy" report "$out/demo.gpuspy" --report osrt_sum,offcpu,processes --limit 12
echo "== gpuspy record: an nvcc-built CUDA program on the simulated GPU (tests/fakecuda)"
echo "   (its synchronising calls block for the simulated kernel and copy time)"
"$build/gpuspy" record -q -f -o "$out/cuda.gpuspy" -- \
	env LD_LIBRARY_PATH="$build/fakecuda" "$build/targets/cuda/streams_events" | tail -n 1
"$build/gpuspy" report "$out/cuda.gpuspy" --report osrt_sum,offcpu --limit 3
echo "== gpuspy export: timeline"
"$build/gpuspy" export "$out/demo.gpuspy" --format chrome -o "$out/demo.json"
echo "trace:    $out/demo.gpuspy"
echo "timeline: $out/demo.json  (open it in https://ui.perfetto.dev)"
