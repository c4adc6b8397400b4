# Shared by the bats suites. GPUSPY and BUILD come from `make test`; defaults let a single
# suite run by hand: `bats tests/record.bats`.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
GPUSPY=${GPUSPY:-$BUILD/gpuspy}
TARGETS=$BUILD/targets
# ASan's leak checker must not turn a deliberate early exit into a failure code of its own
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (BPF)"
}

require_btf() {
	[ -r /sys/kernel/btf/vmlinux ] || skip "needs kernel BTF at /sys/kernel/btf/vmlinux"
}

require_bpf() {
	require_root
	require_btf
}

require_cmd() {
	command -v "$1" >/dev/null 2>&1 || skip "needs $1"
}

# NVIDIA's CUDA toolkit (headers, nvcc, its libcudart/libcupti and stub libcuda), which Debian
# does not package: what the fakecuda ABI checks compare the simulator against.
require_cuda_toolkit() {
	local home=${CUDA_HOME:-/usr/local/cuda} f
	for f in include/cuda.h include/cupti.h bin/nvcc lib64/libcudart.so.13 \
		lib64/libcupti.so.13 lib64/stubs/libcuda.so; do
		[ -e "$home/$f" ] ||
			skip "needs NVIDIA's CUDA toolkit in CUDA_HOME=$home (no $f; not in Debian, see README)"
	done
}

# Waits up to 10 s for a file to exist or a pattern to appear in a file.
wait_for_file() {
	local i
	for i in $(seq 100); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for $1" >&2
	return 1
}

# Ends a test's background processes: each is resumed first (one a gpuspy left stopped at
# ld.so's hold would keep its SIGTERM pending), then terminated and reaped.
stop_pids() { # PID...
	local p
	for p in "$@"; do
		kill -CONT "$p" 2>/dev/null || true
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}

wait_for_line() {
	local i
	for i in $(seq 100); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "timed out waiting for '$2' in $1:" >&2
	cat "$1" >&2
	return 1
}

# osrt_thread JSON rows for one thread and syscall: prints the call count (0 when absent)
calls_of() { # TRACE PID TID SYSCALL
	"$GPUSPY" report "$1" --report osrt_thread --format json |
		jq --argjson pid "$2" --argjson tid "$3" --arg name "$4" \
			'[.[] | select(.pid == $pid and .tid == $tid and .name == $name) | .calls] | add // 0'
}

# Number of timeline spans of a syscall in the Chrome export.
spans_of() { # TRACE SYSCALL
	"$GPUSPY" export "$1" -o - |
		jq --arg name "$2" '[.traceEvents[] | select(.cat == "os_runtime" and .name == $name)] | length'
}

# Waits up to 10 s for N lines matching a pattern in a file.
wait_for_count() { # FILE PATTERN N
	local i
	for i in $(seq 100); do
		[ "$(grep -c -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for $3 x '$2' in $1:" >&2
	cat "$1" >&2
	return 1
}
