#!/usr/bin/env bats
# PyTorch operator tracing on the simulated GPU: libtorch_aten_like_cuda.so
# (tests/targets/cuda/aten_like.cu) is libtorch's operator layer in miniature — at::_ops::<op>::call
# functions with libtorch's schema strings, nested (linear -> matmul -> mm, dropout ->
# bernoulli_), launching nvcc kernels whose simulated durations it sets — driven from Python
# through ctypes. The library counts its own calls, kernels and times; the `ops` report must give
# the same calls and exactly the same GPU time per operator (tests/lib/check_ops.py says why
# exactly), and CPU times that contain what each operator measured inside itself.
# bats file_tags=bpf,cuda,cupti,ops

load helpers
bats_require_minimum_version 1.5.0

FC=$BUILD/fakecuda
LIB=$BUILD/targets/cuda/libtorch_aten_like_cuda.so
DRIVER=$ROOT/tests/targets/cuda/aten_like.py
BRIDGE=$BUILD/libgpuspy_cupti.so

setup() {
	require_bpf
	require_cmd jq
	require_cmd python3
	[ -e "$FC/libcudart.so.13" ] && [ -e "$LIB" ] || skip "run 'make fakecuda' first"
	[ -e "$BRIDGE" ] || skip "the CUPTI bridge was not built (no CUPTI headers)"
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

# Records aten_like.py (the library is dlopen-ed after the recording starts, as libtorch is);
# its expectations go to $WORK/NAME.expect.json, gpuspy's stderr to $WORK/NAME.err.
record_aten_like() { # NAME [GPUSPY OPTIONS...]
	local name=$1
	shift
	"$GPUSPY" record -f -o "$WORK/$name.gpuspy" "$@" -- env LD_LIBRARY_PATH="$FC" \
		python3 "$DRIVER" "$LIB" 20 > "$WORK/$name.expect.json" 2> "$WORK/$name.err" 3>&- || {
		cat "$WORK/$name.err" >&2
		return 1
	}
	cat "$WORK/$name.err"
}

@test "ops: calls, self and total GPU time per operator equal the library's own counts, CPU times contain its own" {
	"$GPUSPY" report --list | grep -q '^ops '
	record_aten_like ops
	grep -q "libgpuspy_cupti.so: turned on" "$WORK/ops.err"
	"$GPUSPY" report "$WORK/ops.gpuspy" --report ops --format json > "$WORK/ops.json"
	"$GPUSPY" report "$WORK/ops.gpuspy" --report cuda_gpu_kern_sum --format json > "$WORK/kern.json"
	cat "$WORK/ops.json"
	python3 "$ROOT/tests/lib/check_ops.py" "$WORK/ops.expect.json" "$WORK/ops.json" "$WORK/kern.json"
	# the GPU side is whole: nothing unmatched that could have shifted time between operators
	run "$GPUSPY" report "$WORK/ops.gpuspy" --report gpu_unmatched
	[[ "$output" == *"gpu unmatched: 0 gpu records without api record, 0 api records without uprobe span, 0 launches without gpu record"* ]]
	run "$GPUSPY" report "$WORK/ops.gpuspy" --report losses --format json
	jq -e 'map(.lost) | add == 0' <<< "$output"
}

@test "ops: the table has torch.profiler's key_averages columns and the operators" {
	record_aten_like table
	run "$GPUSPY" report "$WORK/table.gpuspy" --report ops
	echo "$output"
	[ "$status" -eq 0 ]
	for column in "Name" "Self CPU" "CPU total" "Self CUDA" "CUDA total" "# of Calls"; do
		[[ "$output" == *"$column"* ]]
	done
	for op in aten::linear aten::matmul aten::mm aten::add aten::softmax aten::view \
		aten::dropout aten::bernoulli_ aten::_local_scalar_dense; do
		[[ "$output" == *"$op "* ]]
	done
	# --sort by a column key, largest first: mm (all the GEMM time) leads self_cuda_ns
	"$GPUSPY" report "$WORK/table.gpuspy" --report ops --format json --sort self_cuda_ns |
		jq -e '.[0].name == "aten::mm"'
}

@test "ops: --no-ops records no operator, the CUDA side is unchanged" {
	record_aten_like noops --no-ops
	run "$GPUSPY" report "$WORK/noops.gpuspy" --report ops --format json
	[ "$status" -eq 0 ]
	jq -e 'length == 0' <<< "$output"
	"$GPUSPY" report "$WORK/noops.gpuspy" --report cuda_gpu_kern_sum --format json |
		jq -e --argjson want "$(jq .kernel_ns_total "$WORK/noops.expect.json")" \
			'map(.total_ns) | add == $want'
}
