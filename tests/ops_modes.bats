#!/usr/bin/env bats
# How gpuspy sees a process's PyTorch operators (--ops): its in-process observer
# (build/libgpuspy_torch.so), which `record` loads into torch processes with ptrace, at the
# attach or once `import torch` is done, or uprobes where the observer cannot be used (auto),
# each process's way and why in its trace. Real python3 + torch 1.13 processes, real BPF; the
# observer's records against torch.profiler's events on the same loop
# (tests/targets/torch/train_loop.py). The reports of those records: ops_inprocess.bats.
# bats file_tags=bpf,torch

load helpers
bats_require_minimum_version 1.5.0

PYTHON=/usr/bin/python3.11 # Debian's python3-torch is installed for this interpreter only
LOOP=$ROOT/tests/targets/torch/train_loop.py
READ=$ROOT/tests/lib/read_torch_ops.py
ITERS=20

setup() {
	require_bpf
	require_cmd jq
	"$PYTHON" -c 'import torch' 2>/dev/null || skip "needs python3-torch for $PYTHON"
	[ -e "$BUILD/libgpuspy_torch.so" ] || skip "needs $BUILD/libgpuspy_torch.so"
	WORK=$(mktemp -d)
}

teardown() {
	[ -n "${GPUSPY_PID:-}" ] && kill -INT "$GPUSPY_PID" 2>/dev/null
	[ -n "${TARGET_PID:-}" ] && kill "$TARGET_PID" 2>/dev/null
	rm -rf "$WORK"
	return 0
}

# Runs CMD... (which prints READY, reads a line from $WORK/go, prints DONE, reads a line and
# exits) under `gpuspy record -p` with OPTIONS: $WORK/t.gpuspy, $WORK/gpuspy.err, $WORK/out.
record_p() { # "OPTIONS" CMD...
	local opts=$1
	shift
	mkfifo "$WORK/go"
	"$@" > "$WORK/out" 2>&1 3>&- &
	TARGET_PID=$!
	wait_for_line "$WORK/out" READY
	# shellcheck disable=SC2086
	"$GPUSPY" record $opts -p "$TARGET_PID" -o "$WORK/t.gpuspy" 2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/gpuspy.err" "recording 1 process"
	exec 4> "$WORK/go"
	echo go >&4
	wait_for_line "$WORK/out" "DONE"
	kill -INT "$GPUSPY_PID"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
	echo exit >&4
	exec 4>&-
	wait "$TARGET_PID"
	cat "$WORK/gpuspy.err"
}

@test "-p (auto): the observer is loaded into the running process, on before 'recording'; torch.profiler's counts" {
	"$PYTHON" "$LOOP" --iters "$ITERS" --oracle "$WORK/torch.json" 2> /dev/null
	record_p "--ops auto" "$PYTHON" "$LOOP" --iters "$ITERS" --go "$WORK/go"
	# its recording was on before gpuspy said it was recording
	grep -n "PyTorch operators recorded in-process" "$WORK/gpuspy.err" | cut -d: -f1 > "$WORK/on"
	grep -n "recording 1 process" "$WORK/gpuspy.err" | cut -d: -f1 > "$WORK/rec"
	[ "$(cat "$WORK/on")" -lt "$(cat "$WORK/rec")" ]
	run ! grep -q "probing [0-9]* PyTorch operators" "$WORK/gpuspy.err"
	python3 "$READ" "$WORK/t.gpuspy" "$TARGET_PID" > "$WORK/r.json"
	jq -e '.torch_loads | length == 1 and .[0].outcome == 1 and
		(.[0].message | startswith("dlopen in thread"))' "$WORK/r.json"
	# ACTIVE at the attach, FLUSHED at the stop; every name as often as torch.profiler
	jq -e '.statuses == [1, 5] and .unpaired == 0 and .open == 0' "$WORK/r.json"
	jq -s -e '.[0].starts == .[1] and .[0].ends == .[0].starts' "$WORK/r.json" "$WORK/torch.json"
	# the ops report says how, per process
	run -0 "$GPUSPY" report "$WORK/t.gpuspy" --report ops --limit 1
	[[ "$output" == *"  pid $TARGET_PID: in-process observer (dlopen in thread "* ]]
}

@test "--record-shapes: each operator's input shapes are torch.profiler's record_shapes=True ones" {
	"$PYTHON" "$LOOP" --iters "$ITERS" --oracle "$WORK/torch.json" \
		--oracle-shapes "$WORK/torch_shapes.json" 2> /dev/null
	record_p "--ops auto --record-shapes" "$PYTHON" "$LOOP" --iters "$ITERS" --go "$WORK/go"
	grep -q "PyTorch operators recorded in-process" "$WORK/gpuspy.err"
	python3 "$READ" "$WORK/t.gpuspy" "$TARGET_PID" > "$WORK/r.json"
	jq -s -e '.[0].starts == .[1]' "$WORK/r.json" "$WORK/torch.json"
	jq -s -e '.[0].shapes == .[1]' "$WORK/r.json" "$WORK/torch_shapes.json" || {
		jq -s -c '[(.[0].shapes + .[1]) | keys[] as $k | select(.[0].shapes[$k] != .[1][$k])
			| $k]' "$WORK/r.json" "$WORK/torch_shapes.json"
		false
	}
	jq -e '.shapes["aten::conv2d"] | length == 1' "$WORK/r.json"
}

@test "launched (auto): uprobes from the first operator, and the trace says why" {
	run -0 "$GPUSPY" record -o "$WORK/t.gpuspy" -- "$PYTHON" "$LOOP" --iters 5
	echo "$output" | grep -Eq "probing [0-9]+ PyTorch operators in .*libtorch_cpu"
	[[ "$output" != *"observer"* && "$output" != *"warning"* ]]
	local pid
	pid=$(sed -n "s/.*recording '.*' (pid \([0-9]*\)).*/\1/p" <<< "$output")
	run -0 "$GPUSPY" report "$WORK/t.gpuspy" --report ops --format json
	# the warm-up iterations too: probed while ld.so held the process
	jq -e 'map(select(.name == "aten::conv2d")) | .[0].calls == 7' <<< "$output"
	run -0 "$GPUSPY" report "$WORK/t.gpuspy" --report ops --limit 1
	[[ "$output" == *"  pid $pid: libtorch loaded after the attach: the observer could only be loaded once the import is done, after the first operators (--ops inprocess does that); operators traced by uprobes instead"* ]]
}

@test "launched (--ops inprocess): the observer is loaded once 'import torch' is done" {
	run -0 "$GPUSPY" record --ops inprocess -o "$WORK/t.gpuspy" -- "$PYTHON" "$LOOP" --iters 5
	[[ "$output" == *"DONE 5"* ]]
	[[ "$output" == *"PyTorch operators recorded in-process"* ]]
	local pid
	pid=$(sed -n 's/.*observer in pid \([0-9]*\): .*libgpuspy_torch.so: turned on.*/\1/p' <<< "$output")
	python3 "$READ" "$WORK/t.gpuspy" "$pid" > "$WORK/r.json"
	jq -e '.torch_loads[0].outcome == 1 and
		(.torch_loads[0].message | endswith("(libtorch loaded after the attach)"))' "$WORK/r.json"
	# ACTIVE, then INACTIVE from the exit handler; the 5 iterations at least (2 warm-up ones
	# more when the load came before them), every start ended
	jq -e '.statuses == [1, 2] and .unpaired == 0 and .open == 0 and .ends == .starts' \
		"$WORK/r.json"
	jq -e '.starts["aten::conv2d"] >= 5 and .starts["aten::conv2d"] <= 7 and
		.starts["aten::convolution_backward"] == .starts["aten::conv2d"]' "$WORK/r.json"
}

@test "--ops uprobes: no observer loaded, operators by uprobes" {
	run -0 "$GPUSPY" record --ops uprobes -o "$WORK/t.gpuspy" -- "$PYTHON" "$LOOP" --iters 2
	echo "$output" | grep -Eq "probing [0-9]+ PyTorch operators in .*libtorch_cpu"
	[[ "$output" != *"PyTorch observer"* ]]
	local pid
	pid=$(sed -n "s/.*recording '.*' (pid \([0-9]*\)).*/\1/p" <<< "$output")
	python3 "$READ" "$WORK/t.gpuspy" "$pid" > "$WORK/r.json"
	jq -e '.records == 0 and .torch_loads == []' "$WORK/r.json"
	"$GPUSPY" report "$WORK/t.gpuspy" --report ops --format json |
		jq -e 'map(select(.name == "aten::conv2d")) | .[0].calls == 4'
}

@test "auto: an observer gpuspy cannot find means uprobes, and the trace says why; --ops inprocess records none" {
	GPUSPY_TORCH_OBSERVER="$WORK/none.so" record_p "--ops auto" "$PYTHON" "$LOOP" --iters 2 \
		--go "$WORK/go"
	grep -q "PyTorch observer not used: libgpuspy_torch.so not found next to gpuspy (or \$GPUSPY_TORCH_OBSERVER); operators traced by uprobes instead" \
		"$WORK/gpuspy.err"
	grep -Eq "probing [0-9]+ PyTorch operators in .*libtorch_cpu" "$WORK/gpuspy.err"
	run -0 env GPUSPY_TORCH_OBSERVER="$WORK/none.so" "$GPUSPY" record --ops inprocess \
		-o "$WORK/i.gpuspy" -- "$PYTHON" "$LOOP" --iters 2
	[[ "$output" == *"--ops inprocess: no operators recorded"* ]]
	[[ "$output" != *"probing"*"PyTorch operators"* ]]
	local pid
	pid=$(sed -n "s/.*recording '.*' (pid \([0-9]*\)).*/\1/p" <<< "$output")
	python3 "$READ" "$WORK/i.gpuspy" "$pid" > "$WORK/r.json"
	jq -e '.records == 0 and .torch_loads[0].outcome == 4 and
		(.torch_loads[0].message | endswith("--ops inprocess: no operators recorded"))' \
		"$WORK/r.json"
	"$GPUSPY" report "$WORK/i.gpuspy" --report ops --format json | jq -e 'length == 0'
}

@test "--no-inject: nothing loaded, uprobes, said why" {
	record_p "--ops auto --no-inject" "$PYTHON" "$LOOP" --iters 2 --go "$WORK/go"
	grep -q "PyTorch observer not used: --no-inject: gpuspy loads nothing into processes; operators traced by uprobes instead" \
		"$WORK/gpuspy.err"
	run ! grep -q "observer in pid" "$WORK/gpuspy.err"
}

@test "a libtorch the observer refuses: its one-line reason read back from the process, then uprobes" {
	require_cmd cc
	# another release's soname, with the four entry points (which abort if ever called)
	cc -shared -fPIC -O1 -Wl,-soname,libtorch_cpu.so.2.1 -o "$WORK/libtorch_cpu.so.2.1" \
		"$ROOT/tests/targets/torch/fake_libtorch.c"
	record_p "--ops auto" "$PYTHON" -c '
import ctypes, os, sys
ctypes.CDLL(sys.argv[1])
print("READY", flush=True)
go = os.fdopen(os.open(sys.argv[2], os.O_RDWR))
go.readline()
print("DONE", flush=True)
go.readline()' "$WORK/libtorch_cpu.so.2.1" "$WORK/go"
	python3 "$READ" "$WORK/t.gpuspy" "$TARGET_PID" > "$WORK/r.json"
	cat "$WORK/r.json"
	jq -e --arg lib "$WORK/libtorch_cpu.so.2.1" '.torch_loads | length == 1 and
		.[0].outcome == 4 and .[0].message == "the PyTorch observer did not start: libtorch_cpu.so.2.1 (\($lib)) is not a libtorch the in-process observer knows (libtorch_cpu.so.1.13 only); operators traced by uprobes instead"' \
		"$WORK/r.json"
	grep -q "PyTorch observer not used: the PyTorch observer did not start: libtorch_cpu.so.2.1" \
		"$WORK/gpuspy.err"
	run -0 "$GPUSPY" report "$WORK/t.gpuspy" --report ops
	[[ "$output" == *"  pid $TARGET_PID: the PyTorch observer did not start: libtorch_cpu.so.2.1 ("*"); operators traced by uprobes instead"* ]]
	# the process went on, untouched by the refusal
	grep -q DONE "$WORK/out"
}

@test "--ops: a bad mode is a one-line usage error" {
	run "$GPUSPY" record --ops sometimes -- true
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "gpuspy: invalid value 'sometimes' for --ops: expected auto, uprobes or inprocess" ]]
}

@test "one process with both libraries: the CUPTI bridge is injected beside an observer it already has, neither's batches taken for lost" {
	local fc=$BUILD/fakecuda aten=$BUILD/targets/cuda/libtorch_aten_like_cuda.so
	[ -e "$aten" ] || skip "needs $aten (make fakecuda)"
	record_p "--ops auto" env LD_LIBRARY_PATH="$fc" "$PYTHON" "$ROOT/tests/targets/torch/torch_cuda.py" \
		"$aten" --go "$WORK/go" --observer "$BUILD/libgpuspy_torch.so" --iters "$ITERS"
	grep -q "CUPTI bridge in pid $TARGET_PID: .*libgpuspy_cupti.so: turned on" "$WORK/gpuspy.err"
	grep -q "PyTorch observer in pid $TARGET_PID: .*libgpuspy_torch.so: turned on" \
		"$WORK/gpuspy.err"
	python3 "$READ" "$WORK/t.gpuspy" "$TARGET_PID" > "$WORK/r.json"
	jq -e '.bridge_loads[0].outcome == 1 and .torch_loads[0].outcome == 2' "$WORK/r.json"
	jq -e --argjson n "$ITERS" '.starts["aten::relu"] == $n and .unpaired == 0' "$WORK/r.json"
	# kernels reached the trace through the bridge (those launched before its CUPTI session
	# was on are not recorded: gpuspy does not wait for the bridge before "recording")
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_gpu_kern_sum --format json |
		jq -e 'map(.instances) | add >= 1'
	"$GPUSPY" report "$WORK/t.gpuspy" --report losses --format json |
		jq -e 'map(.lost) | add == 0'
}

@test "in process, the operator that launched each kernel: a record_function range around CUDA launches has every recorded kernel's GPU time" {
	local fc=$BUILD/fakecuda aten=$BUILD/targets/cuda/libtorch_aten_like_cuda.so
	[ -e "$aten" ] || skip "needs $aten (make fakecuda)"
	record_p "--ops auto" env LD_LIBRARY_PATH="$fc" "$PYTHON" "$ROOT/tests/targets/torch/torch_cuda.py" \
		"$aten" --go "$WORK/go" --iters "$ITERS" --range gpuspy_test.launch
	grep -q "PyTorch observer in pid $TARGET_PID: .*: turned on" "$WORK/gpuspy.err"
	"$GPUSPY" report "$WORK/t.gpuspy" --report ops --format json > "$WORK/ops.json"
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_gpu_kern_sum --format json > "$WORK/kern.json"
	cat "$WORK/ops.json"
	# every kernel in the trace was launched inside the range (the one launched before READY
	# was before the attach): joined to it through its launch, on the launching thread
	local kern_ns
	kern_ns=$(jq 'map(.total_ns) | add' "$WORK/kern.json")
	[ "$kern_ns" -gt 0 ]
	jq -e --argjson n "$ITERS" --argjson k "$kern_ns" '.[] | select(.name == "gpuspy_test.launch") |
		.calls == $n and .self_cuda_ns == $k and .cuda_total_ns == $k' "$WORK/ops.json"
}
