#!/usr/bin/env bats
# The trace file, reports and exports: formats, truncation, corruption, foreign files.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	require_bpf
	export FIXTURE_DIR=$(mktemp -d)
	"$GPUSPY" record -q --osrt-threshold 0 -o "$FIXTURE_DIR/t.gpuspy" -- \
		/bin/sh -c "$TARGETS/io_workload $FIXTURE_DIR 30 && $TARGETS/sleeper 5 100"
}

teardown_file() {
	rm -rf "$FIXTURE_DIR"
}

setup() {
	require_bpf
	TRACE=$FIXTURE_DIR/t.gpuspy
	WORK=$(mktemp -d)
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
	# the sleeper's five 5 ms sleeps: exact count, a median and stddev that fit them
	echo "$output" | jq -e '.[] | select(.name == "clock_nanosleep") |
		.calls == 5 and .med_ns > 4500000 and .med_ns < 7000000 and .stddev_ns < 2000000'
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

@test "every truncation point gives a clean result, never a crash" {
	size=$(stat -c %s "$TRACE")
	for cut in 0 1 7 8 100 159 160 161 175 176 200 1000 $((size / 2)) $((size - 1)); do
		head -c "$cut" "$TRACE" > "$WORK/cut.gpuspy"
		run "$GPUSPY" report "$WORK/cut.gpuspy" --format json
		[ "$status" -eq 0 ] || [ "$status" -eq 3 ] || { echo "cut $cut: status $status"; false; }
		[ "$status" -lt 128 ]
	done
}

@test "a corrupted block is a one-line error with exit 3" {
	cp "$TRACE" "$WORK/bad.gpuspy"
	printf '\xff\xff\xff\xff' | dd of="$WORK/bad.gpuspy" bs=1 seek=400 conv=notrunc status=none
	run -3 "$GPUSPY" report "$WORK/bad.gpuspy"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "gpuspy: cannot read $WORK/bad.gpuspy: corrupt trace: checksum mismatch in block at offset 160" ]]
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
