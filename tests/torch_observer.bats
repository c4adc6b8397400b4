#!/usr/bin/env bats
# The in-process PyTorch operator observer (build/libgpuspy_torch.so, docs/TORCH_OBSERVER.md)
# in real python3 + torch 1.13 processes, driven through ctypes by
# tests/targets/torch/observer_loop.py on train_loop.py's training loop: its records against
# torch.profiler's events, enable/disable cycles with another thread running operators, the
# refusals, and its ABI table against Debian's libtorch headers. No BPF, no root.
# bats file_tags=torch

load helpers
bats_require_minimum_version 1.5.0

PYTHON=/usr/bin/python3.11 # Debian's python3-torch is installed for this interpreter only
DRIVER=$ROOT/tests/targets/torch/observer_loop.py
LIB=$BUILD/libgpuspy_torch.so
ITERS=20

setup() {
	"$PYTHON" -c 'import torch' 2>/dev/null || skip "needs python3-torch for $PYTHON"
	require_cmd jq
	[ -e "$LIB" ] || skip "needs $LIB (make torch-observer)"
	WORK=$(mktemp -d)
}

teardown() {
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
	return 0
}

# The observer's records of one run against the profiler's events ($1: the driver's JSON).
check_against_profiler() {
	local f=$1
	# every name torch.profiler recorded, aten:: operators and the rest, as often; every
	# start ended, in nesting order
	jq -e '.starts == .torch' "$f" || {
		jq -c '[(.starts + .torch) | keys[] as $k | select(.starts[$k] != .torch[$k])
			| {op: $k}]' "$f"
		false
	}
	jq -e '.ends == .starts and .unpaired == 0 and .open == 0' "$f"
	jq -e '.stats.dropped == 0 and .stats.no_buffer == 0' "$f"
	# a real loop, not an empty one: its forward, backward and optimizer operators
	jq -e '[.starts | keys[] | select(startswith("aten::"))] | length >= 20' "$f"
	jq -e --argjson n "$ITERS" '.starts["aten::convolution"] == $n and
		.starts["aten::addmm"] == $n and .starts["aten::convolution_backward"] == $n' "$f"
	# the operators that carry an autograd sequence number are the profiler's
	jq -e '.seq == .torch_seq and (.seq | length) > 0' "$f"
}

@test "every operator is recorded as often as torch.profiler records it on the same loop" {
	"$PYTHON" "$DRIVER" --lib "$LIB" counts --iters "$ITERS" > "$WORK/c.json"
	check_against_profiler "$WORK/c.json"
	jq -e '.stats.enables == 1 and .stats.buffers == 1' "$WORK/c.json"
}

@test "the observer and torch.profiler on the same iterations see the same operators" {
	"$PYTHON" "$DRIVER" --lib "$LIB" both --iters "$ITERS" > "$WORK/b.json"
	check_against_profiler "$WORK/b.json"
}

@test "200 enable/disable cycles while another thread runs operators; nothing after disable" {
	run --separate-stderr "$PYTHON" "$DRIVER" --lib "$LIB" toggle --cycles 200
	[ "$status" -eq 0 ]
	echo "$output" > "$WORK/t.json"
	jq -e '.stats.enables == 200 and .recorded_after_disable == 0' "$WORK/t.json"
	jq -e '.worker_iters > 0 and .stats.buffers == 2' "$WORK/t.json"
	# both threads' records nest; a range cut by a disable has a start and no end, never an
	# end without its start
	jq -e '.unpaired == 0' "$WORK/t.json"
	jq -e --argjson n 200 '.starts["aten::convolution"] >= $n and
		.ends["aten::convolution"] >= $n' "$WORK/t.json"
}

@test "initialised but not enabled: nothing registered, nothing allocated, ops run on" {
	run --separate-stderr "$PYTHON" "$DRIVER" --lib "$LIB" refuse --syms libtorch
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.rc == 0 and .why == "" and .stats.recorded == 0 and
		.stats.buffers == 0 and .stats.enables == 0'
}

# A library with libtorch's four entry points and the given soname.
fake_libtorch() { # SONAME
	cc -shared -fPIC -O1 -Wl,-soname,"$1" -o "$WORK/$1" "$ROOT/tests/targets/torch/fake_libtorch.c"
	echo "$WORK/$1"
}

@test "another libtorch release is refused by its soname, with a one-line reason" {
	require_cmd cc
	local lib
	lib=$(fake_libtorch libtorch_cpu.so.2.1)
	run --separate-stderr "$PYTHON" "$DRIVER" --lib "$LIB" refuse --syms "$lib"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.rc == -1 and .enable_rc == -1'
	echo "$output" | jq -e --arg lib "$lib" '.why == "libtorch_cpu.so.2.1 (\($lib)) is not a libtorch the in-process observer knows (libtorch_cpu.so.1.13 only)"'
}

@test "the known soname with another RecordFunction layout is refused" {
	require_cmd cc
	local lib
	lib=$(fake_libtorch libtorch_cpu.so.1.13)
	run --separate-stderr "$PYTHON" "$DRIVER" --lib "$LIB" refuse --syms "$lib"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.rc == -1 and (.why | endswith("RecordFunction'"'"'s layout differs"))'
	# Debian's own library with name() and isAsync() swapped: the code check reads them
	run --separate-stderr "$PYTHON" "$DRIVER" --lib "$LIB" refuse --syms swapped
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.rc == -1 and (.why | startswith("libtorch_cpu.so.1.13 (")) and
		(.why | endswith("is not the torch 1.13 build gpuspy knows: RecordFunction'"'"'s layout differs"))'
}

@test "addresses outside any libtorch are refused, not called" {
	run --separate-stderr "$PYTHON" "$DRIVER" --lib "$LIB" refuse --syms libc
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.rc == -1 and (.why | startswith("libc.so.6 ("))'
}

# bats test_tags=abi
@test "torch_abi.c's table is what Debian's libtorch-dev headers compile to" {
	require_cmd g++
	[ -e /usr/include/ATen/record_function.h ] || skip "needs libtorch-dev's headers"
	# NDEBUG as Debian built libtorch (inputs() asserts otherwise; the layout is the same)
	g++ -std=c++17 -O1 -DNDEBUG -o "$WORK/rf_layout" "$ROOT/tests/targets/torch/rf_layout.cpp" -lc10
	"$WORK/rf_layout" > "$WORK/layout.json"
	cat "$WORK/layout.json"
	local field want
	# RecordFunction and its callback; for input shapes, IValue and TensorImpl
	for field in off_seq_nr off_fwd_tid off_scope callback_size callback_off_needs_inputs \
		off_needs_inputs off_inputs off_inputs_size ivalue_size off_ivalue_payload \
		off_ivalue_tag off_impl_sizes sizes_inline_max off_impl_key_set nested_key_mask; do
		want=$(sed -n "s/^[[:space:]]*\.$field = \(0x[0-9a-f]*\|[0-9]*\),.*/\1/p" \
			"$ROOT/cupti_bridge/torch_abi.c")
		[ -n "$want" ]
		jq -e --arg f "$field" --argjson want "$((want))" '.[$f] == $want' "$WORK/layout.json"
	done
	want=$(sed -n 's/^[[:space:]]*\.tag_tensor = \([0-9]*\),.*/\1/p' "$ROOT/cupti_bridge/torch_abi.c")
	jq -e --argjson want "$want" '.ivalue_tag_tensor == $want' "$WORK/layout.json"
	# the undefined tensor is the object torch_abi.c looks up
	grep -q "\"$(jq -r .undefined_impl_symbol "$WORK/layout.json")\"" "$ROOT/cupti_bridge/torch_abi.c"
	# passed by value in memory as a C struct of the same size, not by hidden pointer
	jq -e '.callback_trivially_copyable and .callback_trivially_destructible' "$WORK/layout.json"
}

# Per operator name, how often each input shapes text came: the observer's against
# torch.profiler(record_shapes=True)'s input_shapes on the same loop ($1: the driver's JSON).
check_shapes() {
	jq -e '.shapes == .torch_shapes' "$1" || {
		jq -c '[(.shapes + .torch_shapes) | keys[] as $k
			| select(.shapes[$k] != .torch_shapes[$k])
			| {op: $k, observer: .shapes[$k], profiler: .torch_shapes[$k]}]' "$1"
		false
	}
	# every start had its shapes, and the registration asked libtorch for inputs
	jq -e '((.set_shapes_rc // 0) == 0) and .shapes_on == 1 and .no_shapes == 0 and
		.stats.no_shapes == 0' "$1"
	# not trivially equal: the convolution's tensors and its None/list/int arguments
	jq -e --argjson n "$ITERS" '.shapes["aten::convolution"]
		["[[16, 3, 16, 16], [8, 3, 3, 3], [8], [], [], [], [], [], []]"] == $n' "$1"
}

@test "input shapes on: every operator's shapes are torch.profiler's record_shapes=True ones" {
	"$PYTHON" "$DRIVER" --lib "$LIB" --shapes counts --iters "$ITERS" > "$WORK/s.json"
	check_against_profiler "$WORK/s.json"
	check_shapes "$WORK/s.json"
}

@test "input shapes of every kind: ranks 0 to 7, lists, scalars, None, nested, undefined" {
	"$PYTHON" "$DRIVER" --lib "$LIB" --shapes --odd both --iters "$ITERS" > "$WORK/o.json"
	check_against_profiler "$WORK/o.json"
	check_shapes "$WORK/o.json"
	# what odd_step() is there for: out-of-line sizes (rank 6, 7), a TensorList, an
	# undefined gradient, a nested tensor, all as the profiler writes them
	jq -e --argjson n "$ITERS" '
		.shapes["aten::add"]["[[2, 1, 3, 1, 2, 1], [2, 1, 3, 1, 2, 4], []]"] == $n and
		.shapes["aten::view"]["[[1, 2, 1, 3, 1, 2, 1], []]"] == $n and
		.shapes["aten::cat"]["[[], []]"] >= $n and
		.shapes["SplitBackward0"]["[[2, 3], []]"] == $n and
		.shapes["aten::unbind"]["[[], []]"] == $n' "$WORK/o.json"
}

@test "input shapes beyond the limits: 17 dimensions, a text over 1,023 bytes: none, counted" {
	"$PYTHON" "$DRIVER" --lib "$LIB" --shapes limits > "$WORK/l.json"
	jq -e '.shapes_on == 1 and .set_shapes_rc == 0' "$WORK/l.json"
	jq -e '.shapes["aten::add"] == {"[[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [], []]": 1}' \
		"$WORK/l.json"
	# aten::add of the 17-dim tensor, and what it calls with it, counted, not cut or guessed
	jq -e '.starts["aten::add"] == 2 and .rank17_no_shapes >= 1' "$WORK/l.json"
	jq -e '.shapes.rank17 == {"[]": 1}' "$WORK/l.json"
	# a text the wire would cut is not recorded at all, at either call
	jq -e '.starts["aten::native_layer_norm_backward"] == 2 and
		.shapes["aten::native_layer_norm_backward"] == null and .long_no_shapes == 2 and
		.stats.no_shapes == .rank17_no_shapes + 2' "$WORK/l.json"
}

@test "input shapes off (the default): no shapes ids, inputs not asked of libtorch" {
	"$PYTHON" "$DRIVER" --lib "$LIB" counts --iters "$ITERS" > "$WORK/n.json"
	check_against_profiler "$WORK/n.json"
	jq -e '.shapes == {} and .shapes_on == 0 and .stats.shapes_on == 0' "$WORK/n.json"
	jq -e '.no_shapes == ([.starts[]] | add)' "$WORK/n.json"
}

@test "input shapes as sent to gpuspy: each text a GS_REC_TORCH_NAME before its first use" {
	"$PYTHON" "$DRIVER" --lib "$LIB" --shapes wire --iters "$ITERS" > "$WORK/ws.json"
	jq -e '.bad == []' "$WORK/ws.json"
	# the names and the shapes texts share the id space
	jq -e '.wire_names == (.starts | length) + ([.shapes[] | keys[]] | unique | length)' \
		"$WORK/ws.json"
	check_against_profiler "$WORK/ws.json"
	check_shapes "$WORK/ws.json"
}

@test "as sent to gpuspy (GS_REC_TORCH_OP, GS_REC_TORCH_NAME): the same counts, names first" {
	"$PYTHON" "$DRIVER" --lib "$LIB" wire --iters "$ITERS" > "$WORK/w.json"
	# every record framed and of a known layout, every operator's name sent before it
	jq -e '.bad == [] and .wire_names == (.starts | length)' "$WORK/w.json"
	check_against_profiler "$WORK/w.json"
}

@test "the control thread follows gpuspy:records' semaphore: on, everything read out, off" {
	run --separate-stderr "$PYTHON" "$DRIVER" --lib "$LIB" gate --iters "$ITERS"
	[ "$status" -eq 0 ]
	echo "$output" > "$WORK/g.json"
	# closed: not enabled; raised (as the kernel raises it when gpuspy attaches): enabled
	# once, and the thread read every record out; lowered: nothing recorded any more
	jq -e '.start_gate == 0 and .enables_closed == 0 and .opened and .stats.enables == 1' \
		"$WORK/g.json"
	jq -e '.drained and .left_for_us == 0 and .stats.dropped == 0' "$WORK/g.json"
	jq -e '.recorded == 2 * .profiler_events and .recorded_when_closed == 0' "$WORK/g.json"
	jq -e '.shapes_on == 0' "$WORK/g.json"
}

@test "gpuspy_torch:shapes' semaphore raised when the gate opens: shapes for that recording" {
	run --separate-stderr "$PYTHON" "$DRIVER" --lib "$LIB" --shapes gate --iters "$ITERS"
	[ "$status" -eq 0 ]
	echo "$output" > "$WORK/gs.json"
	jq -e '.opened and .shapes_on == 1 and .stats.enables == 1' "$WORK/gs.json"
	jq -e '.drained and .left_for_us == 0 and .stats.dropped == 0 and .stats.no_shapes == 0' \
		"$WORK/gs.json"
	# a semaphore-only probe: its site is in the library's USDT notes
	if command -v readelf > /dev/null; then
		readelf -n "$LIB" | grep -A1 'Provider: gpuspy_torch' | grep -q 'Name: shapes'
	fi
}

# bats test_tags=bpf
@test "gpuspy record -p attaches the observer: every record reaches the trace, torch's counts" {
	require_bpf
	[ -x "$GPUSPY" ] || skip "needs $GPUSPY"
	local loop_pid gpuspy_pid
	mkfifo "$WORK/go"
	"$PYTHON" "$DRIVER" --lib "$LIB" serve --iters "$ITERS" --go "$WORK/go" \
		--oracle "$WORK/oracle.json" > "$WORK/loop.out" 2>&1 3>&- &
	loop_pid=$!
	wait_for_line "$WORK/loop.out" READY
	"$GPUSPY" record --ops inprocess -p "$loop_pid" -o "$WORK/t.gpuspy" 2> "$WORK/gpuspy.err" 3>&- &
	gpuspy_pid=$!
	wait_for_line "$WORK/gpuspy.err" "recording 1 process"
	exec 4> "$WORK/go"
	echo go >&4
	# the loop waits for the observer to be on (its semaphore raised by the attach, seen
	# at two polls), runs, and waits until the control thread sent everything
	wait_for_line "$WORK/loop.out" "DONE $ITERS"
	kill -INT "$gpuspy_pid"
	wait "$gpuspy_pid"
	echo exit >&4
	exec 4>&-
	wait "$loop_pid"
	grep -q "libgpuspy_torch.so: turned on" "$WORK/gpuspy.err"
	python3 "$ROOT/tests/lib/read_torch_ops.py" "$WORK/t.gpuspy" "$loop_pid" > "$WORK/r.json"
	# ACTIVE when the attach turned it on, FLUSHED when gpuspy stopped
	jq -e '.statuses == [1, 5] and .op_before_name == 0 and .unpaired == 0 and .open == 0' \
		"$WORK/r.json"
	# every record the observer made reached the trace, and they are torch.profiler's
	local made
	made=$(sed -n 's/.*"recorded": \([0-9]*\), "stats".*/\1/p' "$WORK/loop.out")
	jq -e --argjson made "$made" '.records == $made' "$WORK/r.json"
	jq -s -e '.[0].starts == .[1].torch and .[0].ends == .[0].starts and
		.[0].seq == .[1].torch_seq' "$WORK/r.json" "$WORK/oracle.json"
}

# bats test_tags=bpf
@test "gpuspy record -p with gpuspy_torch:shapes raised: the shapes texts reach the trace" {
	require_bpf
	[ -x "$GPUSPY" ] || skip "needs $GPUSPY"
	local loop_pid gpuspy_pid made
	mkfifo "$WORK/go"
	# the driver raises the shapes semaphore by hand, as gpuspy's attach of the probe will
	"$PYTHON" "$DRIVER" --lib "$LIB" --shapes serve --iters "$ITERS" --go "$WORK/go" \
		--oracle "$WORK/oracle.json" > "$WORK/loop.out" 2>&1 3>&- &
	loop_pid=$!
	wait_for_line "$WORK/loop.out" READY
	"$GPUSPY" record -p "$loop_pid" -o "$WORK/t.gpuspy" 2> "$WORK/gpuspy.err" 3>&- &
	gpuspy_pid=$!
	wait_for_line "$WORK/gpuspy.err" "recording 1 process"
	exec 4> "$WORK/go"
	echo go >&4
	wait_for_line "$WORK/loop.out" "DONE $ITERS"
	kill -INT "$gpuspy_pid"
	wait "$gpuspy_pid"
	echo exit >&4
	exec 4>&-
	wait "$loop_pid"
	python3 "$ROOT/tests/lib/read_torch_ops.py" "$WORK/t.gpuspy" "$loop_pid" > "$WORK/r.json"
	jq -e '.op_before_name == 0 and .unpaired == 0 and .open == 0' "$WORK/r.json"
	made=$(sed -n 's/.*"recorded": \([0-9]*\), "stats".*/\1/p' "$WORK/loop.out")
	jq -e --argjson made "$made" '.records == $made' "$WORK/r.json"
	grep -q '"no_shapes": 0' "$WORK/loop.out"
	jq -s -e '.[0].starts == .[1].torch and .[0].shapes == .[1].torch_shapes' \
		"$WORK/r.json" "$WORK/oracle.json"
}

# bats test_tags=bpf
@test "gpuspy record -- CMD: a process that exits while recorded delivers every record at exit" {
	require_bpf
	[ -x "$GPUSPY" ] || skip "needs $GPUSPY"
	local pid made
	"$PYTHON" "$ROOT/tests/targets/torch/train_loop.py" --iters "$ITERS" \
		--oracle "$WORK/torch.json" 2> /dev/null
	# the driver loads the observer after the exec (gpuspy, which loads it too once libtorch
	# is imported, finds the same library); the loop exits right after its iterations, rings
	# not yet read out
	"$GPUSPY" record --ops inprocess -o "$WORK/t.gpuspy" -- "$PYTHON" "$DRIVER" --lib "$LIB" serve \
		--iters "$ITERS" > "$WORK/loop.out" 2> "$WORK/gpuspy.err"
	grep -q "DONE $ITERS" "$WORK/loop.out"
	pid=$(sed -n 's/.*observer in pid \([0-9]*\): .*libgpuspy_torch.so: turned on.*/\1/p' \
		"$WORK/gpuspy.err")
	[ -n "$pid" ]
	python3 "$ROOT/tests/lib/read_torch_ops.py" "$WORK/t.gpuspy" "$pid" > "$WORK/r.json"
	# ACTIVE at the attach, INACTIVE from the exit handler, which sent what was left
	jq -e '.statuses == [1, 2] and .op_before_name == 0 and .unpaired == 0 and .open == 0' \
		"$WORK/r.json"
	# every record made reached the trace: the loop's, and the warm-up's when gpuspy's own
	# load turned the observer on before them
	made=$(sed -n 's/.*"total": \([0-9]*\).*/\1/p' "$WORK/loop.out")
	jq -e --argjson made "$made" '.records == $made' "$WORK/r.json"
	jq -s -e '.[0].ends == .[0].starts and
		([.[1] | to_entries[] | select(.value > 0)] | length) > 20 and
		all(.[1] | to_entries[]; $r[0].starts[.key] >= .value)' --slurpfile r "$WORK/r.json" \
		"$WORK/r.json" "$WORK/torch.json"
}
