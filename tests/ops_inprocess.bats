#!/usr/bin/env bats
# PyTorch operators from the in-process observer (GS_REC_TORCH_OP, GS_REC_TORCH_NAME) in the
# reports and timelines: a real python3 + torch 1.13 training loop recorded with gpuspy record
# -p (tests/targets/torch/observer_loop.py loads build/libgpuspy_torch.so through ctypes, its
# --oracle gives torch.profiler's events of the same loop; tests/lib/torch_links.py the
# profiler's forward/backward links and key_averages() on the same deterministic loop in
# another process), and hand-made traces (tests/lib/make_torch_trace.py) for exact numbers,
# input shapes and odd records.
# bats file_tags=torch

load helpers
bats_require_minimum_version 1.5.0

PYTHON=/usr/bin/python3.11 # Debian's python3-torch is installed for this interpreter only
DRIVER=$ROOT/tests/targets/torch/observer_loop.py
MAKE_TRACE=$ROOT/tests/lib/make_torch_trace.py
LINKS=$ROOT/tests/lib/torch_links.py
ITERS=10

ops_inprocess() {
	"$GPUSPY" record --help | grep -q -- '--ops MODE' && echo "--ops inprocess"
	return 0
}

# One attached recording of ITERS iterations with the observer on (and, from a gpuspy without
# --ops, the at::_ops uprobes), and torch.profiler's view of ITERS more, shared by the tests
# that read them.
setup_file() {
	[ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ] || return 0
	"$PYTHON" -c 'import torch' 2>/dev/null || return 0
	[ -e "$BUILD/libgpuspy_torch.so" ] && [ -x "$GPUSPY" ] || return 0
	export SHARED=$(mktemp -d)
	local loop_pid gpuspy_pid
	"$PYTHON" "$LINKS" --iters "$ITERS" > "$SHARED/links.json"
	mkfifo "$SHARED/go"
	"$PYTHON" "$DRIVER" --lib "$BUILD/libgpuspy_torch.so" serve --iters "$ITERS" \
		--go "$SHARED/go" --oracle "$SHARED/oracle.json" > "$SHARED/loop.out" 2>&1 3>&- &
	loop_pid=$!
	wait_for_line "$SHARED/loop.out" READY
	# a gpuspy that chooses how operators are seen (--ops) is asked for the observer; one
	# that does not probes at::_ops too and turns on the observer the process loaded
	"$GPUSPY" record $(ops_inprocess) -p "$loop_pid" -o "$SHARED/t.gpuspy" \
		2> "$SHARED/gpuspy.err" 3>&- &
	gpuspy_pid=$!
	wait_for_line "$SHARED/gpuspy.err" "recording 1 process"
	exec 4> "$SHARED/go"
	echo go >&4
	wait_for_line "$SHARED/loop.out" "DONE $ITERS"
	kill -INT "$gpuspy_pid"
	wait "$gpuspy_pid"
	echo exit >&4
	exec 4>&-
	wait "$loop_pid"
	echo "$loop_pid" > "$SHARED/pid"
}

teardown_file() {
	[ -n "${SHARED:-}" ] && rm -rf "$SHARED"
	return 0
}

setup() {
	require_cmd jq
	WORK=$(mktemp -d)
}

teardown() {
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
	return 0
}

require_recording() {
	require_bpf
	"$PYTHON" -c 'import torch' 2>/dev/null || skip "needs python3-torch for $PYTHON"
	[ -e "$BUILD/libgpuspy_torch.so" ] || skip "needs $BUILD/libgpuspy_torch.so (make torch-observer)"
	[ -s "${SHARED:-/nonexistent}/t.gpuspy" ] || skip "the shared recording was not made"
	grep -q "libgpuspy_torch.so: turned on" "$SHARED/gpuspy.err"
}

# bats test_tags=bpf
@test "in-process: every RecordFunction name is counted as torch.profiler records it, none twice" {
	require_recording
	# without --ops the process had the at::_ops uprobes too: its OP_CALLs are left out, else
	# aten:: rows would count double
	[ -n "$(ops_inprocess)" ] || grep -q "probing [0-9]* PyTorch operators" "$SHARED/gpuspy.err"
	"$GPUSPY" report "$SHARED/t.gpuspy" --report ops --format json > "$WORK/ops.json"
	jq -s -e '(.[0] | map({(.name): .calls}) | add) as $g | .[1].torch as $t |
		[($g + $t) | keys[] | select($g[.] != $t[.])] == []' \
		"$WORK/ops.json" "$SHARED/oracle.json" || {
		jq -s -c '(.[0] | map({(.name): .calls}) | add) as $g | .[1].torch as $t |
			[($g + $t) | keys[] | select($g[.] != $t[.]) | {op: ., gpuspy: $g[.], torch: $t[.]}]' \
			"$WORK/ops.json" "$SHARED/oracle.json"
		false
	}
	# not only aten: the autograd engine's ranges, the nodes, the optimizer's user ranges
	jq -e --argjson n "$ITERS" 'map({(.name): .calls}) | add |
		.["autograd::engine::evaluate_function: AddmmBackward0"] == $n and
		.AddmmBackward0 == $n and .ConvolutionBackward0 == $n and
		.["Optimizer.step#SGD.step"] == $n and .["Optimizer.zero_grad#SGD.zero_grad"] == $n and
		.["aten::addmm"] == $n' "$WORK/ops.json"
}

# bats test_tags=bpf
@test "in-process: key_averages() differs only where it merges same-name calls" {
	require_recording
	"$GPUSPY" report "$SHARED/t.gpuspy" --report ops --format json > "$WORK/ops.json"
	# _remove_dup_nodes (train_loop.py's docstring) merges a call into a same-name parent:
	# there key_averages() counts fewer than the raw events, which gpuspy's counts equal
	jq -s -e '(.[0] | map({(.name): .calls}) | add) as $g | .[1] as $o |
		[$g | keys[] | select($g[.] != $o.averages[.] and
			($o.averages[.] >= $o.torch[.] or $g[.] != $o.torch[.]))] == []' \
		"$WORK/ops.json" "$SHARED/links.json"
	jq -s -e '(.[0] | map(.name) | sort) == (.[1].averages | keys | sort)' \
		"$WORK/ops.json" "$SHARED/links.json"
}

# bats test_tags=bpf
@test "in-process: sequence numbers and forward/backward flows are torch.profiler's" {
	require_recording
	"$GPUSPY" export "$SHARED/t.gpuspy" --format chrome -o "$WORK/c.json"
	python3 - "$WORK/c.json" > "$WORK/export_links.json" <<'EOF'
import collections, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ops = {(e["pid"], e["tid"], e["ts"]): e for e in ev
       if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")}
flows = collections.defaultdict(dict)
for e in ev:
    if e.get("cat") == "fwdbwd":
        flows[e["id"]][e["ph"]] = e
links = collections.Counter()
for f in flows.values():
    a, b = (ops[(f[p]["pid"], f[p]["tid"], f[p]["ts"])]["name"] for p in ("s", "f"))
    links[a + " -> " + b] += 1
seq = collections.Counter(e["name"] for e in ops.values() if "Sequence number" in e["args"])
# a backward op's forward thread is torch's logical id of the forward op's thread (1 here)
fwd = sorted({e["args"]["Fwd thread id"] for e in ops.values() if "Sequence number" in e["args"]})
print(json.dumps({"links": links, "seq": seq, "flows": len(flows), "fwd_tids": fwd,
                  "whole": all(len(f) == 2 for f in flows.values())}))
EOF
	cat "$WORK/export_links.json"
	# each flow starts at the forward op Kineto links and ends at the backward op it links to
	# (the evaluate_function range, the first backward start with that number)
	jq -s -e '.[0].links == .[1].links and .[0].whole and
		.[0].flows == (.[1].links | add)' "$WORK/export_links.json" "$SHARED/links.json"
	jq -e --argjson n "$ITERS" '.links["aten::addmm -> autograd::engine::evaluate_function: AddmmBackward0"] == $n' \
		"$SHARED/links.json"
	# the calls with a sequence number are the profiler's events with one, evaluate_function
	# ranges included (they take their node's), in the recorded process and the other one
	jq -s -e '.[0].seq == .[1].torch_seq and .[0].seq == .[2].seq' "$WORK/export_links.json" \
		"$SHARED/oracle.json" "$SHARED/links.json"
	jq -e '.fwd_tids == [0, 1]' "$WORK/export_links.json"
}

# bats test_tags=bpf
@test "in-process: user ranges are user_annotation slices, in Kineto's dialect too" {
	require_recording
	"$GPUSPY" export "$SHARED/t.gpuspy" --format kineto -o "$WORK/k.json"
	jq -e --argjson n "$ITERS" '[.traceEvents[] | select(.cat == "user_annotation") | .name] |
		(map(select(. == "Optimizer.step#SGD.step")) | length) == $n and
		(map(select(. == "Optimizer.zero_grad#SGD.zero_grad")) | length) == $n' "$WORK/k.json"
	jq -e '[.traceEvents[] | select(.cat == "cpu_op" and .name == "AddmmBackward0") |
		.args | has("Sequence number") and has("Fwd thread id") and has("External id")] |
		length > 0 and all' "$WORK/k.json"
	jq -e '[.traceEvents[] | select(.cat == "fwdbwd")] | length > 0' "$WORK/k.json"
	# as Kineto's consumers read it (fwdbwd flows from and to ops of one sequence number), and
	# slices that nest on every thread
	python3 "$ROOT/tests/lib/check_kineto.py" "$WORK/k.json" --no-gpu
	"$GPUSPY" export "$SHARED/t.gpuspy" -o "$WORK/c.json"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/c.json"
	python3 "$ROOT/tests/lib/check_tef.py" "$WORK/c.json"
}

@test "hand-made: rows, self times and sequence numbers of the scenario" {
	python3 "$MAKE_TRACE" "$WORK/h.gpuspy"
	"$GPUSPY" report "$WORK/h.gpuspy" --report ops --format json > "$WORK/ops.json"
	jq -e 'map({(.name): [.calls, .self_cpu_ns, .cpu_total_ns]}) | add ==
		{"aten::linear": [2, 30000, 85000], "aten::addmm": [2, 55000, 55000],
		 "autograd::engine::evaluate_function: AddmmBackward0": [2, 22000, 90000],
		 "AddmmBackward0": [2, 38000, 68000], "aten::mm": [2, 30000, 30000],
		 "Optimizer.step#SGD.step": [1, 50000, 50000]}' "$WORK/ops.json"
	"$GPUSPY" export "$WORK/h.gpuspy" -o "$WORK/c.json"
	# the flows: addmm of number 6 (75 us) to the range of number 6 (200 us), 5 to 5
	jq -e '[.traceEvents[] | select(.cat == "fwdbwd") | [.ph, .ts]] ==
		[["s", 10], ["f", 300], ["s", 75], ["f", 200]]' "$WORK/c.json"
	jq -e '[.traceEvents[] | select(.name == "autograd::engine::evaluate_function: AddmmBackward0") |
		[.ts, .args["Sequence number"], .args["Fwd thread id"]]] == [[200, 6, 1], [300, 5, 1]]' \
		"$WORK/c.json"
	jq -e '[.traceEvents[] | select(.cat == "user_annotation") | .name] == ["Optimizer.step#SGD.step"]' \
		"$WORK/c.json"
	jq -e '[.traceEvents[] | select(.name == "aten::addmm") | .args["Input Dims"]] ==
		[[[10], [16, 2048], [2048, 10], [], []], [[10], [16, 2048], [2048, 10], [], []]]' "$WORK/c.json"
}

@test "hand-made: two forward threads sharing numbers; each backward op linked to its own thread's op" {
	python3 "$MAKE_TRACE" "$WORK/t.gpuspy" --threads
	"$GPUSPY" export "$WORK/t.gpuspy" -o "$WORK/c.json"
	# [forward op's tid, its start, the backward op's start], by flow
	jq -c '[.traceEvents[] | select(.cat == "fwdbwd" and .pid == 700)] | group_by(.id) |
		map([(.[] | select(.ph == "s") | .tid, .ts), (.[] | select(.ph == "f") | .ts)]) |
		sort_by(.[2])' "$WORK/c.json" > "$WORK/flows.json"
	cat "$WORK/flows.json"
	[ "$(cat "$WORK/flows.json")" = '[[700,10,100],[701,12,110],[700,0,120],[701,2,130],[701,20,140]]' ]
}

@test "--group-by-input-shape: an Input Shapes column after the calls, as torch prints it" {
	python3 "$MAKE_TRACE" "$WORK/h.gpuspy"
	run --separate-stderr "$GPUSPY" report "$WORK/h.gpuspy" --report ops --group-by-input-shape
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	echo "$output" > "$WORK/table.txt"
	# torch's build_table: right-aligned, as wide as the longest shapes + 4, "[]" for none
	grep -qE '^ +aten::addmm( +[^ ]+){6}  +\[\[10\], \[16, 2048\], \[2048, 10\], \[\], \[\]\]  $' \
		"$WORK/table.txt"
	grep -qE '^ +aten::mm( +[^ ]+){6} {42}\[\]  $' "$WORK/table.txt"
	grep -qE '^ +# of Calls +Input Shapes  $' <(sed -n 's/.*CPU time avg//p' "$WORK/table.txt")
	"$GPUSPY" report "$WORK/h.gpuspy" --report ops --group-by-input-shape --format json \
		--sort name > "$WORK/ops.json"
	jq -e 'map([.name, .input_shapes, .calls]) | .[0:3] ==
		[["AddmmBackward0", "[]", 2], ["Optimizer.step#SGD.step", "[]", 1],
		 ["aten::addmm", "[[10], [16, 2048], [2048, 10], [], []]", 2]]' "$WORK/ops.json"
	# with --group-by-stack too: Input Shapes, then Source Location, as torch orders them
	"$GPUSPY" report "$WORK/h.gpuspy" --report ops --group-by-input-shape --group-by-stack 1 \
		--format csv | head -1 | grep -q '"# of Calls","Input Shapes","Source Location"$'
	# a help line, and the README's ops paragraph says it
	"$GPUSPY" report --help | grep -q -- '--group-by-input-shape'
	grep -q -- '--group-by-input-shape' "$ROOT/README.md"
}

@test "--group-by-input-shape on a trace without shapes: one warning, torch's table by name" {
	python3 "$MAKE_TRACE" "$WORK/n.gpuspy" --no-shapes
	run --separate-stderr "$GPUSPY" report "$WORK/n.gpuspy" --report ops --group-by-input-shape
	[ "$status" -eq 0 ]
	[ "$stderr" = "gpuspy: warning: $WORK/n.gpuspy has no operator input shapes: --group-by-input-shape groups by name only" ]
	# as torch.profiler without record_shapes: no Input Shapes column, one row per name
	[ "$(grep -c "Input Shapes" <<< "$output")" -eq 0 ]
	[ "$(grep -c '^ *aten::addmm ' <<< "$output")" -eq 1 ]
}

@test "odd in-process records: no crash, bounded, what can be paired is, the rest counted out" {
	python3 "$MAKE_TRACE" "$WORK/odd.gpuspy" --odd
	local bin=$GPUSPY
	[ -x "$BUILD/gpuspy-san" ] && bin=$BUILD/gpuspy-san
	"$bin" report "$WORK/odd.gpuspy" --report ops --format json > "$WORK/ops.json"
	# 256 of 300 nested ranges kept, the ones never named shown as such, pid 300's OP_CALL
	# left out (it has in-process calls), pid 400's two kept; the end without a start and the
	# start without an end are not calls, nor is a range whose end was dropped, whose parent's
	# end still closes its parent
	jq -e 'map({(.name): .calls}) | add | .["user::deep"] == 256 and
		.["<unknown operator>"] == 2 and .["aten::uprobed"] == 2 and
		(has("user::open") | not) and .["aten::addmm"] == 2 and
		.["user::outer"] == 1 and (has("user::lost") | not)' "$WORK/ops.json"
	jq -e '.[] | select(.name == "user::outer") | .cpu_total_ns == 10000' "$WORK/ops.json"
	# the text header says what was left out
	"$bin" report "$WORK/odd.gpuspy" --report ops | grep -qx 'pytorch operator calls: 272 (270 in-process; probed calls of those processes left out: 1; starts without an end: 2; ends without a start: 1; nested too deep: 44)'
	"$bin" report "$WORK/odd.gpuspy" --report ops --group-by-input-shape > /dev/null
	"$bin" export "$WORK/odd.gpuspy" -o "$WORK/c.json"
	"$bin" export "$WORK/odd.gpuspy" --format kineto -o "$WORK/k.json"
	"$bin" export "$WORK/odd.gpuspy" --format sqlite -o "$WORK/o.sqlite"
	jq -e '.traceEvents | length > 0' "$WORK/c.json" "$WORK/k.json" > /dev/null
	# random well-framed records, and every cut of the file, read without a crash
	python3 "$MAKE_TRACE" "$WORK/odd.gpuspy" --odd --random 7
	"$bin" report "$WORK/odd.gpuspy" --report ops --group-by-input-shape > /dev/null
	"$bin" export "$WORK/odd.gpuspy" --format kineto -o "$WORK/k.json"
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$WORK/k.json"
	local size cut
	size=$(stat -c %s "$WORK/odd.gpuspy")
	for cut in 200 1000 5000 20000 100000 $((size - 30)); do
		head -c "$cut" "$WORK/odd.gpuspy" > "$WORK/cut.gpuspy"
		run "$bin" report "$WORK/cut.gpuspy" --report ops
		[ "$status" -lt 128 ]
		run "$bin" export "$WORK/cut.gpuspy" -o "$WORK/cut.json"
		[ "$status" -lt 128 ]
	done
}

@test "Perfetto's protobuf: the fwdbwd flows keep their own ids, apart from the ac2g flows'" {
	require_cmd protoc
	python3 "$MAKE_TRACE" "$WORK/h.gpuspy"
	"$GPUSPY" export "$WORK/h.gpuspy" --format perfetto -o "$WORK/h.pftrace"
	protoc --decode=perfetto.protos.Trace -I "$ROOT/docs" "$ROOT/docs/gpuspy_perfetto.proto" \
		< "$WORK/h.pftrace" > "$WORK/h.txt"
	python3 "$ROOT/tests/lib/perfetto_events.py" < "$WORK/h.txt" > "$WORK/h.jsonl"
	# Perfetto tells flows apart by id alone: Chrome's ids 2 and 4 (categories keep them apart
	# from ac2g's correlation ids there) with the top bit set, each started and ended once
	python3 - "$WORK/h.jsonl" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
starts = sorted(i for e in ev if e.get("name") == "fwdbwd" for i in e.get("flow_ids") or [])
ends = sorted(i for e in ev if e.get("name") == "fwdbwd" for i in e.get("terminating_flow_ids") or [])
assert starts == ends == [2 | 1 << 63, 4 | 1 << 63], (starts, ends)
PY
}

# bats test_tags=bpf
@test "in-process with input shapes: --group-by-input-shape rows are torch.profiler(record_shapes=True)'s" {
	require_bpf
	"$PYTHON" -c 'import torch' 2>/dev/null || skip "needs python3-torch for $PYTHON"
	[ -e "$BUILD/libgpuspy_torch.so" ] || skip "needs $BUILD/libgpuspy_torch.so (make torch-observer)"
	"$PYTHON" "$DRIVER" --help | grep -q -- --shapes ||
		skip "the observer records no input shapes in this tree (observer_loop.py has no --shapes)"
	local loop_pid gpuspy_pid
	mkfifo "$WORK/go"
	# the driver raises the observer's shapes semaphore itself, as gpuspy's attach will
	"$PYTHON" "$DRIVER" --lib "$BUILD/libgpuspy_torch.so" --shapes serve --iters "$ITERS" \
		--go "$WORK/go" --oracle "$WORK/oracle.json" > "$WORK/loop.out" 2>&1 3>&- &
	loop_pid=$!
	wait_for_line "$WORK/loop.out" READY
	"$GPUSPY" record $(ops_inprocess) -p "$loop_pid" -o "$WORK/t.gpuspy" 2> "$WORK/gpuspy.err" \
		3>&- &
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
	run --separate-stderr "$GPUSPY" report "$WORK/t.gpuspy" --report ops --group-by-input-shape \
		--format json
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	echo "$output" > "$WORK/shapes.json"
	# every (name, shapes) row counts what the profiler's events with those shapes count
	jq -s -e '(.[0] | map({key: (.name + "|" + .input_shapes), value: .calls}) | from_entries) as $g |
		(.[1].torch_shapes | to_entries | map(.key as $n | .value | to_entries |
			map({key: ($n + "|" + .key), value: .value})) | add | from_entries) as $t |
		[($g + $t) | keys[] | select($g[.] != $t[.])] == []' \
		"$WORK/shapes.json" "$WORK/oracle.json"
	jq -e --argjson n "$ITERS" 'map(select(.name == "aten::addmm")) ==
		[.[] | select(.name == "aten::addmm" and
			.input_shapes == "[[10], [16, 2048], [2048, 10], [], []]" and .calls == $n)]' \
		"$WORK/shapes.json"
	"$GPUSPY" report "$WORK/t.gpuspy" --report ops --group-by-input-shape | grep -q "Input Shapes"
}

# bats test_tags=bpf
@test "gpuspy loads the observer itself (--ops auto): the ops report counts torch.profiler's events" {
	require_bpf
	"$PYTHON" -c 'import torch' 2>/dev/null || skip "needs python3-torch for $PYTHON"
	[ -e "$BUILD/libgpuspy_torch.so" ] || skip "needs $BUILD/libgpuspy_torch.so (make torch-observer)"
	[ -n "$(ops_inprocess)" ] || skip "this gpuspy does not load the observer (no --ops)"
	local loop=$ROOT/tests/targets/torch/train_loop.py loop_pid gpuspy_pid
	"$PYTHON" "$loop" --iters "$ITERS" --oracle "$WORK/torch.json" 2> /dev/null
	mkfifo "$WORK/go"
	"$PYTHON" "$loop" --iters "$ITERS" --go "$WORK/go" > "$WORK/loop.out" 2>&1 3>&- &
	loop_pid=$!
	wait_for_line "$WORK/loop.out" READY
	"$GPUSPY" record --ops auto -p "$loop_pid" -o "$WORK/t.gpuspy" 2> "$WORK/gpuspy.err" 3>&- &
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
	grep -q "libgpuspy_torch.so: turned on" "$WORK/gpuspy.err"
	"$GPUSPY" report "$WORK/t.gpuspy" --report ops --format json > "$WORK/ops.json"
	jq -s -e '(.[0] | map({(.name): .calls}) | add) as $g | .[1] as $t |
		[($g + $t) | keys[] | select($g[.] != $t[.])] == []' "$WORK/ops.json" "$WORK/torch.json"
	jq -e --argjson n "$ITERS" 'map({(.name): .calls}) | add | .AddmmBackward0 == $n' \
		"$WORK/ops.json"
}
