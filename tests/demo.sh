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
echo "== gpuspy record: an nvcc-built CUDA program on the simulated GPU (tests/fakecuda);"
echo "   libcudart and libcuda are found and probed as the program starts, and gpuspy's"
echo "   CUPTI bridge (loaded by the CUDA driver) sends the real GPU kernel and copy times"
"$build/gpuspy" record -f -o "$out/cuda.gpuspy" -- \
	env LD_LIBRARY_PATH="$build/fakecuda" "$build/targets/cuda/streams_events" 2>&1 |
	grep -E '^(gpuspy: probing|gpuspy: CUPTI|DONE)'
echo
echo "== gpuspy report: CUDA API calls (host time, errors), kernels by name, GPU memory;"
echo "   its synchronising calls block the thread off-CPU for the simulated kernel time"
"$build/gpuspy" report "$out/cuda.gpuspy" --report cuda_api_sum,cuda_launches,gpu_mem,offcpu --limit 6
echo "== gpuspy report: GPU time of each kernel, GPU busy per stream, the longest GPU-idle gaps"
echo "   and what the host threads were doing meanwhile"
"$build/gpuspy" report "$out/cuda.gpuspy" --report cuda_gpu_kern_sum,gpu_util,gpu_idle --limit 4
"$build/gpuspy" export "$out/cuda.gpuspy" --format chrome -o "$out/cuda.json"
"$build/gpuspy" export "$out/cuda.gpuspy" --format kineto -o "$out/cuda.kineto.json"
echo "== gpuspy export: timeline"
"$build/gpuspy" export "$out/demo.gpuspy" --format chrome -o "$out/demo.json"
echo "trace:    $out/demo.gpuspy"
echo "timeline: $out/demo.json  (open it in https://ui.perfetto.dev)"
echo "CUDA timeline: $out/cuda.json  (CUDA API spans, GPU tracks per stream with launch flows)"
echo "Kineto trace:  $out/cuda.kineto.json  (for Holistic Trace Analysis / TensorBoard)"
