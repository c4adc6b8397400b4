#!/usr/bin/env bats
# The trace file, reports and exports: formats, truncation, corruption, foreign files.

load helpers
bats_require_minimum_version 1.5.0

# the span-heavy recording: LOOPS iterations of getppid, an 8-byte read of /dev/zero and an
# 8-byte write to /dev/null, every syscall a span (bench/syscall_bench.c)
LOOPS=20000

setup_file() {
	require_bpf
	export FIXTURE_DIR=$(mktemp -d)
	"$GPUSPY" record -q --osrt-threshold 0 -o "$FIXTURE_DIR/t.gpuspy" -- \
		/bin/sh -c "$TARGETS/io_workload $FIXTURE_DIR 30 && $TARGETS/sleeper 5 100"
	if [ -x "$BUILD/bench/syscall_bench" ]; then
		"$GPUSPY" record --osrt-threshold 0 --buffer-size 64 -o "$FIXTURE_DIR/spans.gpuspy" -- \
			"$BUILD/bench/syscall_bench" "$LOOPS" 2> "$FIXTURE_DIR/spans.log"
	fi
}

teardown_file() {
	rm -rf "$FIXTURE_DIR"
}

setup() {
	require_bpf
	TRACE=$FIXTURE_DIR/t.gpuspy
	SPANS=$FIXTURE_DIR/spans.gpuspy
	OLD=$ROOT/tests/fixtures/format-1.0.gpuspy
	WORK=$(mktemp -d)
}

require_spans() {
	[ -e "$SPANS" ] || skip "needs $BUILD/bench/syscall_bench (make $BUILD/bench/syscall_bench)"
}

# little-endian unsigned integer of BYTES bytes at OFFSET
le_at() { # FILE OFFSET BYTES
	od -An -tu"$3" -j "$2" -N "$3" "$1" | tr -d ' '
}

# file offsets of a format 2 file's blocks (24-byte header: magic, stored length, ...)
block_offsets() { # FILE
	local off=160 size
	size=$(stat -c %s "$1")
	while [ $((off + 24)) -le "$size" ]; do
		echo "$off"
		off=$((off + 24 + $(le_at "$1" $((off + 4)) 4)))
	done
}

teardown() {
	rm -rf "$WORK"
}

@test "text report has the nsys osrt_sum columns and the loss header" {
	run "$GPUSPY" report "$TRACE" --report osrt_sum
	[ "$status" -eq 0 ]
	[[ "$output" == *"events lost: 0"* ]]
	echo "$output" | grep -E '^ Time \(%\)  Total Time \(ns\)  Num Calls +Avg \(ns\) +Med \(ns\) +Min \(ns\) +Max \(ns\) +StdDev \(ns\)  Name$'
}

@test "json report rows have the documented keys and consistent statistics" {
	run "$GPUSPY" report "$TRACE" --report osrt_sum --format json
	[ "$status" -eq 0 ]
	echo "$output" | jq -e 'type == "array" and length > 5'
	echo "$output" | jq -e 'all(.[]; has("name") and has("calls") and has("total_ns") and
		has("avg_ns") and has("med_ns") and has("min_ns") and has("max_ns") and has("stddev_ns"))'
	echo "$output" | jq -e 'all(.[]; .min_ns <= .med_ns and .med_ns <= .max_ns and
		.min_ns <= .avg_ns and .avg_ns <= .max_ns and .calls * .min_ns <= .total_ns)'
	echo "$output" | jq -e '([.[].time_pct] | add) > 99.9 and ([.[].time_pct] | add) < 100.1'
	# the sleeper's five 5 ms sleeps, each one a span (--osrt-threshold 0): the exact
	# statistics have their count, total, min and max and the standard deviation of those
	# five durations, and the histogram's median is within its 12.5% of theirs
	"$GPUSPY" export "$TRACE" -o - | jq '[.traceEvents[]
		| select(.cat == "os_runtime" and .name == "clock_nanosleep") | .dur * 1000 | round]
		| sort' > "$WORK/sleeps.json"
	echo "$output" | jq -e --slurpfile d "$WORK/sleeps.json" '$d[0] as $d | ($d | add) as $sum
		| ($d | map(. - $sum / 5 | . * .) | add / 4 | sqrt) as $sd
		| .[] | select(.name == "clock_nanosleep")
		| ($d | length) == 5 and .calls == 5 and .total_ns == $sum and .min_ns == $d[0]
		  and .max_ns == $d[4] and (.stddev_ns - $sd | fabs) <= 1
		  and (.med_ns - $d[2] | fabs) <= $d[2] / 8'
}

@test "csv report quotes names and has a header row" {
	run "$GPUSPY" report "$TRACE" --report offcpu --format csv
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == '"PID","TID","Thread","Off-CPU (ns)",'* ]]
	[[ "${lines[1]}" =~ ^[0-9]+,[0-9]+,\".*\",[0-9]+, ]]
}

@test "--sort and --limit" {
	run "$GPUSPY" report "$TRACE" --report osrt_sum --format json --sort calls --limit 3
	[ "$status" -eq 0 ]
	echo "$output" | jq -e 'length == 3 and .[0].calls >= .[1].calls and .[1].calls >= .[2].calls'
	run -2 "$GPUSPY" report "$TRACE" --report osrt_sum --sort nosuchkey
	[[ "$output" == *"no selected report has a column 'nosuchkey'"* ]]
	run -2 "$GPUSPY" report "$TRACE" --limit 0
	run -2 "$GPUSPY" report "$TRACE" --report nosuch
	[[ "$output" == "gpuspy: unknown report 'nosuch' (see 'gpuspy report --list')" ]]
}

@test "several reports in json form one object keyed by report" {
	run "$GPUSPY" report "$TRACE" --report osrt_sum,processes --format json
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '(.osrt_sum | type) == "array" and (.processes | length) >= 3'
}

@test "chrome export parses, nests per thread and names every track" {
	run "$GPUSPY" export "$TRACE" --format chrome -o "$WORK/t.json"
	[ "$status" -eq 0 ]
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/t.json"
	jq -e '[.traceEvents[] | select(.cat == "os_runtime")] | length > 100' "$WORK/t.json"
	jq -e '[.traceEvents[] | select(.cat == "off_cpu")] | length >= 5' "$WORK/t.json"
	jq -e '[.traceEvents[] | select(.ph == "M" and .name == "thread_name")] | length >= 3' "$WORK/t.json"
	# times are µs from the trace start
	jq -e '[.traceEvents[] | select(.ph == "X") | .ts] | min >= 0' "$WORK/t.json"
}

@test "a failed export leaves no output file behind" {
	printf 'GPUSPYTR garbage' > "$WORK/bad.gpuspy"
	run -3 "$GPUSPY" export "$WORK/bad.gpuspy" -o "$WORK/out.json"
	[ ! -e "$WORK/out.json" ]
	[ -z "$(ls "$WORK" | grep out.json)" ]
}

@test "a truncated trace reads up to its last complete block, with a warning" {
	size=$(stat -c %s "$TRACE")
	head -c $((size - 100)) "$TRACE" > "$WORK/cut.gpuspy"
	run "$GPUSPY" report "$WORK/cut.gpuspy" --report osrt_sum
	[ "$status" -eq 0 ]
	[[ "$output" == *"is truncated (the recording did not finish)"* ]]
	run "$GPUSPY" export "$WORK/cut.gpuspy" -o "$WORK/cut.json"
	[ "$status" -eq 0 ]
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/cut.json"
}

@test "a trace cut inside a later block reads exactly the spans of the blocks before it" {
	require_spans
	offsets=($(block_offsets "$SPANS"))
	[ "${#offsets[@]}" -ge 8 ]
	# cut in the middle of the 7th block: the first 6 read whole
	off=${offsets[6]}
	head -c $((off + 100)) "$SPANS" > "$WORK/cut.gpuspy"
	run "$GPUSPY" report "$WORK/cut.gpuspy" --report osrt_sum
	[ "$status" -eq 0 ]
	[[ "$output" == *"is truncated (the recording did not finish)"* ]]
	complete=0
	for i in 0 1 2 3 4 5; do
		complete=$((complete + $(le_at "$SPANS" $((offsets[i] + 12)) 4)))
	done
	"$GPUSPY" export "$SPANS" -o "$WORK/full.json"
	"$GPUSPY" export "$WORK/cut.gpuspy" -o "$WORK/cut.json"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/cut.json"
	spans='[.traceEvents[] | select(.cat == "os_runtime") | [.ts, .dur, .name, .tid, .args]]'
	jq "$spans" "$WORK/full.json" > "$WORK/full.spans"
	jq "$spans" "$WORK/cut.json" > "$WORK/cut.spans"
	n=$(jq length "$WORK/cut.spans")
	# the records of the complete blocks are nearly all spans
	[ "$n" -gt $((complete - 100)) ] && [ "$n" -le "$complete" ]
	jq -e --slurpfile full "$WORK/full.spans" --argjson n "$n" '. == $full[0][:$n]' "$WORK/cut.spans"
}

@test "every truncation point gives a clean result, never a crash" {
	size=$(stat -c %s "$TRACE")
	# file header 0-160, block header 160-184, then the first block's stored bytes
	for cut in 0 1 7 8 100 159 160 161 175 176 183 184 185 200 1000 $((size / 2)) $((size - 1)); do
		head -c "$cut" "$TRACE" > "$WORK/cut.gpuspy"
		run "$GPUSPY" report "$WORK/cut.gpuspy" --format json
		[ "$status" -eq 0 ] || [ "$status" -eq 3 ] || { echo "cut $cut: status $status"; false; }
		[ "$status" -lt 128 ]
	done
}

@test "a corrupted block is a one-line error with exit 3" {
	cp "$TRACE" "$WORK/bad.gpuspy"
	# inside the first block's compressed bytes
	[ "$(le_at "$TRACE" 164 4)" -gt 250 ]
	printf '\xff\xff\xff\xff' | dd of="$WORK/bad.gpuspy" bs=1 seek=400 conv=notrunc status=none
	run -3 "$GPUSPY" report "$WORK/bad.gpuspy"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "gpuspy: cannot read $WORK/bad.gpuspy: corrupt trace: checksum mismatch in block at offset 160" ]]
}

@test "the checksum covers a block's header too; its lengths are checked before reading" {
	cp "$TRACE" "$WORK/bad.gpuspy"
	# record count (offset 12 in the block header): only the checksum can tell
	printf '\x01' | dd of="$WORK/bad.gpuspy" bs=1 seek=172 conv=notrunc status=none
	run -3 "$GPUSPY" report "$WORK/bad.gpuspy"
	[[ "$output" == *"corrupt trace: checksum mismatch in block at offset 160" ]]
	# decoded length above the 1 MiB bound
	cp "$TRACE" "$WORK/bad.gpuspy"
	printf '\x00\x00\x20\x00' | dd of="$WORK/bad.gpuspy" bs=1 seek=168 conv=notrunc status=none
	run -3 "$GPUSPY" report "$WORK/bad.gpuspy"
	[[ "$output" == *"corrupt trace: bad block length 2097152 at offset 160" ]]
	# stored length of 4 GiB - 1: refused, not read or allocated
	cp "$TRACE" "$WORK/bad.gpuspy"
	printf '\xff\xff\xff\xff' | dd of="$WORK/bad.gpuspy" bs=1 seek=164 conv=notrunc status=none
	run -3 "$GPUSPY" report "$WORK/bad.gpuspy"
	[[ "$output" == *"corrupt trace: bad block length 4294967295 at offset 160" ]]
	# a format 1 block in a format 2 file
	cp "$TRACE" "$WORK/bad.gpuspy"
	printf 'GSBK' | dd of="$WORK/bad.gpuspy" bs=1 seek=160 conv=notrunc status=none
	run -3 "$GPUSPY" report "$WORK/bad.gpuspy"
	[[ "$output" == *"corrupt trace: bad block marker at offset 160" ]]
}

@test "a flipped byte in a later block names that block" {
	require_spans
	offsets=($(block_offsets "$SPANS"))
	[ "${#offsets[@]}" -ge 8 ]
	off=${offsets[5]}
	stored=$(le_at "$SPANS" $((off + 4)) 4)
	# the record count (header offset 12), the first, middle and last stored bytes
	for at in $((off + 12)) $((off + 24)) $((off + 24 + stored / 2)) $((off + 23 + stored)); do
		cp "$SPANS" "$WORK/bad.gpuspy"
		byte=$(le_at "$SPANS" "$at" 1)
		printf "\\x$(printf %02x $((byte ^ 0x10)))" |
			dd of="$WORK/bad.gpuspy" bs=1 seek="$at" conv=notrunc status=none
		run -3 "$GPUSPY" report "$WORK/bad.gpuspy"
		[[ "$output" == *"corrupt trace: checksum mismatch in block at offset $off" ]] ||
			{ echo "byte $at: $output"; false; }
	done
}

@test "foreign, empty, missing and newer-version files are refused clearly" {
	run -3 "$GPUSPY" report /etc/passwd
	[[ "$output" == "gpuspy: cannot read /etc/passwd: not a gpuspy trace file" ]]
	: > "$WORK/empty"
	run -3 "$GPUSPY" report "$WORK/empty"
	[[ "$output" == *"not a gpuspy trace file" ]]
	run -3 "$GPUSPY" report "$WORK/missing.gpuspy"
	[[ "$output" == *"No such file or directory" ]]
	cp "$TRACE" "$WORK/v9.gpuspy"
	# major 9, minor 0
	printf '\x09\x00\x00\x00' | dd of="$WORK/v9.gpuspy" bs=1 seek=8 conv=notrunc status=none
	run -3 "$GPUSPY" report "$WORK/v9.gpuspy"
	[[ "$output" == *"unsupported trace format version 9.0"* ]]
}

@test "random byte flips never crash the reader" {
	size=$(stat -c %s "$TRACE")
	for seed in $(seq 1 25); do
		cp "$TRACE" "$WORK/f.gpuspy"
		off=$(( (seed * 7919) % size ))
		printf "\\x$(printf %02x $(( (seed * 37) % 256 )))" |
			dd of="$WORK/f.gpuspy" bs=1 seek="$off" conv=notrunc status=none
		run "$GPUSPY" export "$WORK/f.gpuspy" -o - > /dev/null
		[ "$status" -eq 0 ] || [ "$status" -eq 3 ] || { echo "seed $seed: status $status"; false; }
	done
}

@test "format 2: a span-heavy recording takes at most 32 bytes per event, in compressed blocks" {
	require_spans
	# file header: magic, version 2.3; the first block is a format 2 one
	[ "$(head -c 8 "$SPANS")" = GPUSPYTR ]
	[ "$(le_at "$SPANS" 8 2).$(le_at "$SPANS" 10 2)" = 2.3 ]
	[ "$(dd if="$SPANS" bs=1 skip=160 count=4 status=none)" = GSZB ]
	summary=$(grep -o '([0-9]* records, [0-9]* events, [0-9]* lost)' "$FIXTURE_DIR/spans.log")
	read -r records events lost <<< "$(echo "$summary" | tr -dc '0-9 ' | awk '{print $1, $2, $3}')"
	size=$(stat -c %s "$SPANS")
	echo "$summary: $size bytes, $((size / events)) bytes per event"
	[ "$lost" -eq 0 ]
	[ "$events" -ge $((3 * LOOPS)) ]
	[ "$size" -le $((32 * events)) ]
	# several blocks, each record counted in one (block record counts add up to the records)
	total=0
	for off in $(block_offsets "$SPANS"); do
		total=$((total + $(le_at "$SPANS" $((off + 12)) 4)))
	done
	[ "$total" -eq "$records" ]
	[ "$(block_offsets "$SPANS" | wc -l)" -ge 8 ]
}

@test "format 2 round trip: every field of the loop's spans as the workload made them" {
	require_spans
	pid=$("$GPUSPY" report "$SPANS" --report processes --format json |
		jq '.[] | select(.name == "syscall_bench") | .pid')
	[ -n "$pid" ]
	"$GPUSPY" export "$SPANS" -o "$WORK/s.json"
	# the loop's spans in time order, times in ns (the export has µs with 3 decimals)
	jq --argjson pid "$pid" '[.traceEvents[] | select(.cat == "os_runtime" and .pid == $pid) |
		.t = (.ts * 1000 | round) | .d = (.dur * 1000 | round)] | sort_by(.t)' \
		"$WORK/s.json" > "$WORK/spans.json"
	# one thread, never two spans at once
	jq -e --argjson pid "$pid" 'all(.[]; .tid == $pid and .d > 0) and
		([range(1; length) as $i | .[$i - 1].t + .[$i - 1].d <= .[$i].t] | all)' \
		"$WORK/spans.json"
	# from the first getppid on: exactly LOOPS x (getppid, read, write), then the loop's printf
	jq -e --argjson n "$LOOPS" '(map(.name) | index("getppid")) as $s | .[$s:$s + 3 * $n] as $l |
		($l | length) == 3 * $n and
		([range(0; $n) as $i | $l[3 * $i:3 * $i + 3] | map(.name) == ["getppid", "read", "write"]] | all) and
		([$l[] | select(.name == "getppid")] | (.[0].args.ret > 0) as $ok | .[0].args.ret as $pp |
			$ok and all(.[]; .args == {nr: 110, ret: $pp})) and
		([$l[] | select(.name == "read")] | .[0].args.fd as $fd | $fd >= 3 and
			all(.[]; .args == {nr: 0, fd: $fd, file: "/dev/zero", bytes_requested: 8, bytes: 8, ret: 8})) and
		([$l[] | select(.name == "write")] | .[0].args.fd as $fd | $fd >= 3 and
			all(.[]; .args == {nr: 1, fd: $fd, file: "/dev/null", bytes_requested: 8, bytes: 8, ret: 8}))' \
		"$WORK/spans.json"
	# durations: the spans add up to BPF's own per-syscall statistics, to the nanosecond
	"$GPUSPY" report "$SPANS" --report osrt_thread --format json > "$WORK/stats.json"
	for name in getppid read write; do
		jq -e --arg name "$name" --argjson pid "$pid" --slurpfile st "$WORK/stats.json" '
			[.[] | select(.name == $name) | .d] as $d |
			($st[0][] | select(.pid == $pid and .tid == $pid and .name == $name)) as $s |
			$s.calls == ($d | length) and $s.total_ns == ($d | add) and
			$s.min_ns == ($d | min) and $s.max_ns == ($d | max)' "$WORK/spans.json"
	done
}

@test "format 2 round trip: the records read back are the bytes the writer was given" {
	require_spans
	[ -x "$BUILD/fuzz_reader" ] || skip "fuzz target not built (make $BUILD/fuzz_reader)"
	# the fuzz target, run on a file: every record read is written again and read back
	run "$BUILD/fuzz_reader" "$SPANS" "$TRACE" "$OLD"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"round trip"* ]]
	[ "$(echo "$output" | grep -c '^Executed ')" -eq 3 ]
}

# recorded by gpuspy at commit c10488b (format 1.0) with
# `record -q --osrt-threshold 0 -- /bin/sh -c 'ls / >/dev/null; sleep 0.01'`; the numbers
# below are that gpuspy's own report of it
@test "a format 1.0 trace from an old gpuspy still reads and exports" {
	[ "$(le_at "$OLD" 8 2).$(le_at "$OLD" 10 2)" = 1.0 ]
	[ "$(dd if="$OLD" bs=1 skip=160 count=4 status=none)" = GSBK ]
	run "$GPUSPY" report "$OLD" --report osrt_sum
	[ "$status" -eq 0 ]
	[[ "$output" == *"gpuspy trace: /bin/sh -c ls / >/dev/null; sleep 0.01 (host vm, kernel 6.18.44-fc-v669)"* ]]
	[[ "$output" == *"duration: 0.207 s, 344 syscall spans (>= 0 ns), 12 off-cpu spans"* ]]
	[[ "$output" == *"events lost: 0"* ]]
	[[ "$output" != *"truncated"* ]]
	run "$GPUSPY" report "$OLD" --report osrt_sum --format json
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '([.[].calls] | add) == 344 and length == 37'
	echo "$output" | jq -e 'map({(.name): [.calls, .total_ns, .min_ns, .max_ns]}) | add |
		.wait4 == [4, 12845373, 469, 10821525] and
		.clock_nanosleep == [1, 10084249, 10084249, 10084249] and
		.vfork == [2, 6371032, 2385400, 3985632] and
		.execve == [3, 1156619, 187751, 513037] and
		.openat == [67, 111088, 577, 8230] and .mmap == [59, 154007, 1122, 9308] and
		.newfstatat == [63, 71923, 328, 5524] and .close == [47, 20616, 229, 2173] and
		.read == [11, 20200, 307, 9435] and .getdents64 == [2, 404805, 716, 404089]'
	run "$GPUSPY" report "$OLD" --report processes --format json
	[ "$status" -eq 0 ]
	echo "$output" | jq -e 'map({(.name): [.syscalls, .exit, .exe]}) | add |
		.ls == [146, "0", "/usr/bin/ls"] and .sleep == [110, "0", "/usr/bin/sleep"] and
		.sh == [88, "0", "/bin/sh"]'
	run "$GPUSPY" report "$OLD" --report offcpu --format json
	echo "$output" | jq -e 'map({(.thread): [.sleeping_count, .uninterruptible_count, .preempted_count, .total_ns]}) | add |
		.sh == [2, 2, 1, 19163302] and .sleep == [1, 1, 1, 10185440] and .ls == [0, 3, 1, 457573]'
	run "$GPUSPY" export "$OLD" -o "$WORK/old.json"
	[ "$status" -eq 0 ]
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/old.json"
	jq -e '[.traceEvents[] | select(.cat == "os_runtime")] | length == 344' "$WORK/old.json"
	jq -e '[.traceEvents[] | select(.cat == "off_cpu")] | length == 12' "$WORK/old.json"
	jq -e '[.traceEvents[] | select(.cat == "os_runtime" and .name == "clock_nanosleep")] |
		length == 1 and (.[0].dur * 1000 | round) == 10084249' "$WORK/old.json"
}
