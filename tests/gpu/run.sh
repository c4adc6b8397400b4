#!/bin/sh
# Runs the CUDA target programs and the CUPTI one-for-one comparison on REAL
# hardware with NVIDIA's own libraries: the checks tests/fakecuda.bats makes
# against the simulator, minus the simulator's exact timing promises.
# Without a GPU it prints why it skipped and exits 0.
#   usage: tests/gpu/run.sh            (from anywhere; builds what is missing)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
FC=$BUILD/fakecuda
TGT=$BUILD/targets/cuda

if ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; } &&
   [ ! -e /dev/nvidia0 ]; then
    echo "SKIP tests/gpu/run.sh: no NVIDIA GPU here (nvidia-smi fails, no /dev/nvidia0);" \
         "real-hardware CUDA checks not run"
    exit 0
fi

# The dump injection library and the nvcc targets come from 'make fakecuda';
# the targets embed compute_75 PTX, so they JIT on any GPU CUDA 13 supports.
if [ ! -e "$FC/libcupti_dump.so" ] || [ ! -e "$TGT/streams_events" ]; then
    make -C "$ROOT" BUILD="$BUILD" fakecuda
fi

# NVIDIA's runtime and CUPTI; libcuda.so.1 comes from the installed driver.
REAL_LIBS=$CUDA_HOME/lib64:$CUDA_HOME/extras/CUPTI/lib64
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failed=0

check() { # NAME COMMAND...
    name=$1
    shift
    echo "== $name"
    if ! env LD_LIBRARY_PATH="$REAL_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            CUDA_INJECTION64_PATH="$FC/libcupti_dump.so" CUPTI_DUMP_FILE="$TMP/$name.jsonl" \
            "$@" > "$TMP/$name.out" 2>&1; then
        cat "$TMP/$name.out"
        echo "FAIL $name: program failed on the GPU"
        failed=1
        return
    fi
    grep -E '^(CHECK|TIMING|DONE)' "$TMP/$name.out"
    if ! grep -q '^DONE ok' "$TMP/$name.out"; then
        echo "FAIL $name: no 'DONE ok'"
        failed=1
        return
    fi
    if ! python3 "$ROOT/tests/fakecuda/compare_cupti.py" "$TMP/$name.out" "$TMP/$name.jsonl"; then
        echo "FAIL $name: CUPTI records do not match the program"
        failed=1
    fi
}

nvidia-smi -L 2>/dev/null || true
check streams_events "$TGT/streams_events"
check memory_errors "$TGT/memory_errors"
check runtime_ctypes python3 "$ROOT/tests/targets/cuda/runtime_ctypes.py"

if [ "$failed" -ne 0 ]; then
    echo "tests/gpu/run.sh: FAILED"
    exit 1
fi
echo "tests/gpu/run.sh: all real-GPU checks passed"
