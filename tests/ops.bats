#!/usr/bin/env bats
# PyTorch operators: at::_ops::<op>::call probes (--ops uprobes) against torch.profiler on the
# same training loop (tests/targets/torch/train_loop.py), attached to a running process and
# launched. The in-process observer, the default where it can load: ops_modes.bats.
# bats file_tags=bpf,torch

load helpers
bats_require_minimum_version 1.5.0

PYTHON=/usr/bin/python3.11 # Debian's python3-torch is installed for this interpreter only
LOOP=$ROOT/tests/targets/torch/train_loop.py
ITERS=20

require_torch() {
	"$PYTHON" -c 'import torch' 2>/dev/null || skip "needs python3-torch for $PYTHON"
}

# One attached recording of ITERS iterations and the profiler's view of the same iterations,
# shared by the tests that read them.
setup_file() {
	[ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ] || return 0
	"$PYTHON" -c 'import torch' 2>/dev/null || return 0
	export SHARED=$(mktemp -d)
	"$PYTHON" "$LOOP" --iters "$ITERS" --oracle "$SHARED/torch.json" \
		--oracle-averages "$SHARED/averages.json" 2> "$SHARED/torch_table.txt"
	record_attached "$SHARED"
}

teardown_file() {
	[ -n "${SHARED:-}" ] && rm -rf "$SHARED"
	return 0
}

# Starts the loop, attaches gpuspy with -p once it is READY, lets ITERS iterations run, stops
# gpuspy while the loop waits, then lets the loop exit.
record_attached() { # DIR
	local dir=$1 loop_pid gpuspy_pid
	mkfifo "$dir/go"
	"$PYTHON" "$LOOP" --iters "$ITERS" --go "$dir/go" > "$dir/loop.out" 2>&1 3>&- &
	loop_pid=$!
	wait_for_line "$dir/loop.out" READY
	"$GPUSPY" record --ops uprobes -p "$loop_pid" -o "$dir/t.gpuspy" 2> "$dir/gpuspy.err" 3>&- &
	gpuspy_pid=$!
	wait_for_line "$dir/gpuspy.err" "recording 1 process"
	exec 4> "$dir/go"
	echo go >&4
	wait_for_line "$dir/loop.out" "DONE $ITERS"
	kill -INT "$gpuspy_pid"
	wait "$gpuspy_pid"
	echo exit >&4
	exec 4>&-
	wait "$loop_pid"
}

setup() {
	require_bpf
	require_cmd jq
	require_torch
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

ops_json() { # TRACE [report options]
	"$GPUSPY" report "$@" --report ops --format json
}

@test "-p: every aten operator is called as often as torch.profiler records it" {
	grep -Eq "probing [0-9]+ PyTorch operators in .*libtorch_cpu.* \(pid [0-9]+\)" \
		"$SHARED/gpuspy.err"
	ops_json "$SHARED/t.gpuspy" | jq 'map({(.name): .calls}) | add // {}' > "$WORK/gpuspy.json"
	# only aten:: names: the profiler's other events are its own (autograd nodes such as
	# AddmmBackward0, Optimizer.step#SGD.step), not operators
	jq -n --slurpfile t "$SHARED/torch.json" --slurpfile g "$WORK/gpuspy.json" '
		($t[0] | with_entries(select(.key | startswith("aten::")))) as $t
		| $g[0] as $g
		| [($t + $g) | keys[] | select($t[.] != $g[.])
		   | {op: ., torch: $t[.], gpuspy: $g[.]}]' > "$WORK/diff.json"
	cat "$WORK/diff.json"
	jq -e 'length == 0' "$WORK/diff.json"
	# the loop's operators are there, per iteration as the model makes them
	jq -e --argjson n "$ITERS" '."aten::conv2d" == $n and ."aten::addmm" == $n and
		."aten::mm" == 2 * $n and ."aten::convolution_backward" == $n' "$WORK/gpuspy.json"
	[ "$(jq length "$WORK/gpuspy.json")" -ge 40 ]
}

@test "-p: key_averages() differs only where it merges same-name calls" {
	# key_averages() drops a call whose parent by microsecond timestamps has the same name
	# (train_loop.py says why): its count may only be lower than the recorded events'
	ops_json "$SHARED/t.gpuspy" | jq 'map({(.name): .calls}) | add' > "$WORK/gpuspy.json"
	jq -n --slurpfile a "$SHARED/averages.json" --slurpfile g "$WORK/gpuspy.json" '
		($a[0] | with_entries(select(.key | startswith("aten::")) | .value |= .count)) as $a
		| [$a | keys[] | select($a[.] != $g[0][.])
		   | {op: ., key_averages: $a[.], gpuspy: $g[0][.]}]' > "$WORK/diff.json"
	cat "$WORK/diff.json"
	jq -e 'all(.key_averages < .gpuspy)' "$WORK/diff.json"
}

@test "-p: self CPU time is each operator's time less its nested operators', and --sort ranks by it" {
	# self time is arithmetic on the recorded calls, not a timing to hold against another
	# run's (bench/ops_bench.sh (e) compares the ranking with torch.profiler's): from the
	# timeline's cpu_op slices, each call's interval on its thread, an operator's self time is
	# its calls' durations less those of the calls directly inside them; the ops report must
	# give exactly that, and its total, per operator, and rank by it
	"$GPUSPY" export "$SHARED/t.gpuspy" -o "$WORK/t.json"
	ops_json "$SHARED/t.gpuspy" --sort self_cpu_time_total > "$WORK/ops.json"
	python3 - "$WORK/t.json" "$WORK/ops.json" <<-'PY'
		import collections, json, sys
		calls = collections.defaultdict(list)
		for e in json.load(open(sys.argv[1]))["traceEvents"]:
		    if e.get("cat") == "cpu_op":
		        s = round(e["ts"] * 1000)
		        calls[(e["pid"], e["tid"])].append((s, s + round(e["dur"] * 1000), e["name"]))
		self_ns, total_ns = collections.Counter(), collections.Counter()
		for thread in calls.values():
		    open_calls = []  # [start, end, name, self] of the calls around the current one
		    for s, e, name in sorted(thread, key=lambda c: (c[0], -c[1])):
		        while open_calls and not (open_calls[-1][0] <= s and e <= open_calls[-1][1]):
		            done = open_calls.pop()
		            self_ns[done[2]] += max(done[3], 0)
		        if open_calls:
		            open_calls[-1][3] -= e - s
		        open_calls.append([s, e, name, e - s])
		        total_ns[name] += e - s
		    for done in open_calls:
		        self_ns[done[2]] += max(done[3], 0)
		ops = json.load(open(sys.argv[2]))
		bad = [(o["name"], o["self_cpu_ns"], self_ns[o["name"]], o["cpu_total_ns"], total_ns[o["name"]])
		       for o in ops
		       if o["self_cpu_ns"] != self_ns[o["name"]] or o["cpu_total_ns"] != total_ns[o["name"]]]
		ranked = [o["self_cpu_ns"] for o in ops]
		print("%d operators, %d slices; differing (name, self, timeline's, total, timeline's): %s"
		      % (len(ops), sum(map(len, calls.values())), bad[:5]))
		sys.exit(1 if bad or len(ops) < 10 or set(total_ns) != {o["name"] for o in ops}
		         or ranked != sorted(ranked, reverse=True) else 0)
	PY
}

@test "-p: self and total CPU times add up as torch defines them" {
	ops_json "$SHARED/t.gpuspy" > "$WORK/ops.json"
	# self <= total per operator; percentages of the self total; averages per call
	jq -e 'all(.[]; .self_cpu_ns <= .cpu_total_ns and .calls > 0 and
		(.cpu_avg_ns - .cpu_total_ns / .calls | fabs) < 1)' "$WORK/ops.json"
	jq -e '(map(.self_cpu_pct) | add - 100 | fabs) < 0.01' "$WORK/ops.json"
	# linear = t + addmm + its own time: its total covers its children's
	jq -e 'map({(.name): .}) | add as $o |
		$o["aten::linear"].cpu_total_ns >=
		$o["aten::addmm"].cpu_total_ns + $o["aten::linear"].self_cpu_ns' "$WORK/ops.json"
	# no GPU here
	jq -e 'all(.[]; .self_cuda_ns == 0 and .cuda_total_ns == 0)' "$WORK/ops.json"
}

@test "ops text output is torch.profiler's table" {
	run "$GPUSPY" report "$SHARED/t.gpuspy" --report ops --sort cpu_time_total --limit 5
	[ "$status" -eq 0 ]
	echo "$output"
	# header, five rows and the rules, as key_averages().table() prints them
	echo "$output" | grep -Eq '^ +Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  $'
	[ "$(echo "$output" | grep -cE '^-+(  -{12}){6}  $')" -eq 3 ]
	echo "$output" | grep -Eq '^ +aten::[a-z_]+ +[0-9]+\.[0-9]{2}% +[0-9]+\.[0-9]{3}(us|ms|s) +[0-9]+\.[0-9]{2}% +[0-9]+\.[0-9]{3}(us|ms|s) +[0-9]+\.[0-9]{3}(us|ms|s) +[0-9]+  $'
	[ "$(echo "$output" | grep -cE '^ +aten::')" -eq 5 ]
	echo "$output" | grep -Eq '^Self CPU time total: [0-9]+\.[0-9]{3}(us|ms|s)$'
	# no CUDA columns without GPU work
	[[ "$output" != *CUDA* ]]
	# sorted by CPU total, descending
	"$GPUSPY" report "$SHARED/t.gpuspy" --report ops --sort cpu_time_total --format json |
		jq -e '[.[].cpu_total_ns] | . == (sort | reverse)'
	"$GPUSPY" report "$SHARED/t.gpuspy" --report ops --sort count --format json |
		jq -e '[.[].calls] | . == (sort | reverse)'
}

@test "--no-ops probes and records no operator" {
	run "$GPUSPY" record --no-ops -o "$WORK/t.gpuspy" -- "$PYTHON" "$LOOP" --iters 2
	[ "$status" -eq 0 ]
	[[ "$output" == *"DONE 2"* ]]
	[[ "$output" != *"PyTorch operators"* ]]
	ops_json "$WORK/t.gpuspy" | jq -e 'length == 0'
}

@test "a launched python3 gets its operators probed when it imports torch" {
	run "$GPUSPY" record --ops uprobes -o "$WORK/t.gpuspy" -- "$PYTHON" "$LOOP" --iters 5
	[ "$status" -eq 0 ]
	[[ "$output" == *"DONE 5"* ]]
	# libtorch is loaded by `import torch`, after the exec: probed through ld.so's hold
	echo "$output" | grep -Eq "probing [0-9]+ PyTorch operators in .*libtorch_cpu"
	# 5 iterations and 2 warm-up ones
	ops_json "$WORK/t.gpuspy" | jq 'map({(.name): .calls}) | add' > "$WORK/ops.json"
	jq -e '."aten::conv2d" == 7 and ."aten::addmm" == 7 and ."aten::convolution_backward" == 7' \
		"$WORK/ops.json"
	run "$GPUSPY" report "$WORK/t.gpuspy" --report losses --format json
	echo "$output" | jq -e '.[] | select(.kind | startswith("operator calls")) | .lost == 0'
}

@test "a C++ exception thrown through a probed operator unwinds normally" {
	# a return probe's trampoline on the stack would make the unwinder std::terminate() the
	# process: gpuspy puts the return addresses back first (bpf/ops.bpf.c: op_unwind)
	mkfifo "$WORK/go"
	"$PYTHON" "$LOOP" --iters 5 --throw --go "$WORK/go" > "$WORK/loop.out" 2>&1 3>&- &
	local loop_pid=$!
	wait_for_line "$WORK/loop.out" READY
	"$GPUSPY" record --ops uprobes -p "$loop_pid" -o "$WORK/t.gpuspy" 2> "$WORK/gpuspy.err" 3>&- &
	local gpuspy_pid=$!
	wait_for_line "$WORK/gpuspy.err" "recording 1 process"
	exec 4> "$WORK/go"
	echo go >&4
	wait_for_line "$WORK/loop.out" "DONE 5"
	kill -INT "$gpuspy_pid"
	wait "$gpuspy_pid"
	echo exit >&4
	exec 4>&-
	wait "$loop_pid"
	cat "$WORK/loop.out"
	run ! grep -q terminate "$WORK/loop.out"
	ops_json "$WORK/t.gpuspy" | jq 'map({(.name): .calls}) | add' > "$WORK/ops.json"
	cat "$WORK/ops.json"
	# the training ops are all there; the five throwing mm calls are counted as lost
	jq -e '."aten::conv2d" == 5 and ."aten::addmm" == 5 and ."aten::mm" == 10' "$WORK/ops.json"
	"$GPUSPY" report "$WORK/t.gpuspy" --report losses --format json |
		jq -e '.[] | select(.kind | startswith("operator calls")) | .lost == 5'
}

@test "--group-by-stack N: one row per operator and Python stack, with torch's Source Location" {
	ops_json "$SHARED/t.gpuspy" | jq 'map({(.name): .calls}) | add' > "$WORK/by_name.json"
	ops_json "$SHARED/t.gpuspy" --group-by-stack 3 > "$WORK/by_stack.json"
	# the same calls, split by stack; at most 3 frames each, leaf first
	jq -e --slurpfile n "$WORK/by_name.json" '
		(group_by(.name) | map({(.[0].name): (map(.calls) | add)}) | add) == $n[0]' \
		"$WORK/by_stack.json"
	jq -e 'all(.[]; (.source | split("\n") | length) <= 3)' "$WORK/by_stack.json"
	# convolutions run under nn.Conv2d's forward; the backward ops under the loop's step()
	jq -e 'any(.[]; .name == "aten::conv2d" and (.source | test("conv\\.py\\([0-9]+\\): ")))' \
		"$WORK/by_stack.json"
	jq -e 'any(.[]; .name == "aten::convolution_backward" and
		(.source | test("train_loop\\.py\\([0-9]+\\): step")))' "$WORK/by_stack.json"
	run "$GPUSPY" report "$SHARED/t.gpuspy" --report ops --group-by-stack 2 --limit 3
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '# of Calls  Source Location'
}
