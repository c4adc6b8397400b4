#!/usr/bin/env bats
# How the trace model adds up statistics records: checkpoints (cumulative: the later replaces
# the earlier) and FINAL records (GS_STATS_FINAL: a thread's totals at its exit, its key gone
# from the BPF map, so a later record of the key is a new thread that reused the tid). On
# traces written by hand (tests/lib/make_py_trace.py --stats: which record comes when, and what
# each key must add up to, is in its stats_scenario()), every count, total, min, max, median
# and standard deviation is exact; then on a recording of short processes.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	require_cmd jq
	require_cmd python3
	WORK=$(mktemp -d)
	python3 "$ROOT/tests/lib/make_py_trace.py" --stats "$WORK/st.gpuspy"
}

teardown() {
	rm -rf "$WORK"
}

# The osrt_thread row of a thread and syscall, as compact JSON with the columns tests check.
row() { # TRACE TID SYSCALL
	"$GPUSPY" report "$1" --report osrt_thread --format json |
		jq -ec --argjson tid "$2" --arg name "$3" '[.[] | select(.tid == $tid and .name == $name)] |
			if length == 1 then .[0] | {calls, total_ns, min_ns, max_ns, med_ns, stddev_ns}
			else error("not one row") end'
}

offcpu_row() { # TRACE TID
	"$GPUSPY" report "$1" --report offcpu --format json |
		jq -ec --argjson tid "$2" '[.[] | select(.tid == $tid)] | if length == 1 then .[0] |
			{total_ns, sleeping_ns, sleeping_count, uninterruptible_ns, uninterruptible_count,
			 preempted_ns, preempted_count} else error("not one row") end'
}

@test "stats: checkpoints then the thread's final: the final's totals, not their sum" {
	run -0 row "$WORK/st.gpuspy" 301 read
	echo "$output"
	# calls of 100, 200, 300, 400 ns; checkpoints of the first 2 and 3 of them came before
	[ "$output" = '{"calls":4,"total_ns":1000,"min_ns":100,"max_ns":400,"med_ns":208,"stddev_ns":129.1}' ]
}

@test "stats: a final, then a checkpoint of a thread that reused the tid: both count" {
	run -0 row "$WORK/st.gpuspy" 302 write
	echo "$output"
	# the exited thread's 1000 and 3000 ns, the new thread's 500 ns; a checkpoint older than
	# the final, written after it, is the exited thread's and adds nothing
	[ "$output" = '{"calls":3,"total_ns":4500,"min_ns":500,"max_ns":3000,"med_ns":960,"stddev_ns":1322.9}' ]
}

@test "stats: two finals of one key (the tid reused) add up, histograms included" {
	run -0 row "$WORK/st.gpuspy" 303 read
	echo "$output"
	# 50, 70 then 2000, 4000 ns, each thread checkpointed before its final; the lower median,
	# 70 ns, is in bucket [64, 80): 72 ns, which only the merged histograms give
	[ "$output" = '{"calls":4,"total_ns":6120,"min_ns":50,"max_ns":4000,"med_ns":72,"stddev_ns":1883.6}' ]
}

@test "stats: a final written after a newer checkpoint keeps the checkpoint" {
	run -0 row "$WORK/st.gpuspy" 305 read
	echo "$output"
	[ "$output" = '{"calls":3,"total_ns":10000,"min_ns":1000,"max_ns":7000,"med_ns":1920,"stddev_ns":3214.6}' ]
}

@test "stats: checkpoints alone: the last one, as before FINAL records existed" {
	run -0 row "$WORK/st.gpuspy" 304 read
	echo "$output"
	[ "$output" = '{"calls":2,"total_ns":30,"min_ns":10,"max_ns":20,"med_ns":10,"stddev_ns":7.1}' ]
}

@test "stats: osrt_sum adds the threads' keys exactly" {
	run -0 "$GPUSPY" report "$WORK/st.gpuspy" --report osrt_sum --format json
	echo "$output"
	echo "$output" | jq -e 'length == 2'
	echo "$output" | jq -e '.[] | select(.name == "read") | .calls == 13 and .total_ns == 17150 and
		.min_ns == 10 and .max_ns == 7000'
	echo "$output" | jq -e '.[] | select(.name == "write") | .calls == 3 and .total_ns == 4500 and
		.min_ns == 500 and .max_ns == 3000'
	# one row per key: no row for a superseded checkpoint
	[ "$("$GPUSPY" report "$WORK/st.gpuspy" --report osrt_thread --format json | jq length)" -eq 5 ]
}

@test "stats: off-CPU totals follow the same rules" {
	run -0 offcpu_row "$WORK/st.gpuspy" 301
	echo "$output"
	[ "$output" = '{"total_ns":350,"sleeping_ns":300,"sleeping_count":2,"uninterruptible_ns":50,"uninterruptible_count":1,"preempted_ns":0,"preempted_count":0}' ]
	run -0 offcpu_row "$WORK/st.gpuspy" 302
	echo "$output"
	[ "$output" = '{"total_ns":1017,"sleeping_ns":1007,"sleeping_count":2,"uninterruptible_ns":0,"uninterruptible_count":0,"preempted_ns":10,"preempted_count":1}' ]
	run -0 offcpu_row "$WORK/st.gpuspy" 305
	echo "$output"
	[ "$output" = '{"total_ns":10,"sleeping_ns":10,"sleeping_count":2,"uninterruptible_ns":0,"uninterruptible_count":0,"preempted_ns":0,"preempted_count":0}' ]
}

@test "stats: a file cut short after finals keeps them, and says it is truncated" {
	python3 "$ROOT/tests/lib/make_py_trace.py" --stats-truncated "$WORK/cut.gpuspy"
	# the cut block held another final of 301 and a checkpoint of 304: neither counts
	run -0 --separate-stderr row "$WORK/cut.gpuspy" 301 read
	[ "$output" = '{"calls":4,"total_ns":1000,"min_ns":100,"max_ns":400,"med_ns":208,"stddev_ns":129.1}' ]
	run -0 --separate-stderr row "$WORK/cut.gpuspy" 303 read
	[ "$output" = '{"calls":4,"total_ns":6120,"min_ns":50,"max_ns":4000,"med_ns":72,"stddev_ns":1883.6}' ]
	run -0 --separate-stderr row "$WORK/cut.gpuspy" 304 read
	[ "$output" = '{"calls":2,"total_ns":30,"min_ns":10,"max_ns":20,"med_ns":10,"stddev_ns":7.1}' ]
	run -0 --separate-stderr "$GPUSPY" report "$WORK/cut.gpuspy" --report osrt_sum
	echo "$output"
	[[ "$stderr" == *"is truncated"* ]]
	[[ "$output" == *"statistics: as of the last checkpoint"* ]]
}

@test "stats: a churn of short processes, flushed as finals, adds up over 50000 keys" {
	python3 "$ROOT/tests/lib/make_py_trace.py" --many-keys "$WORK/many.gpuspy" 2000 25
	run -0 "$GPUSPY" report "$WORK/many.gpuspy" --report osrt_sum --format json
	# every process made each of the 25 syscalls 4 times, the last one 5000 + (i % 7) * 1000 ns
	echo "$output" | jq -e 'length == 25 and all(.[]; .calls == 8000 and .max_ns == 11000)'
	echo "$output" | jq -e '.[] | select(.name == "read") | .total_ns == 2000 * (200 + 250 + 900) + 15995000'
}

@test "record: short processes' statistics survive their exit, none lost with a small key map" {
	require_bpf
	# 200 processes of about 20 keys each through a map of 64: exiting threads' keys are
	# flushed as FINAL records and leave the map
	run -0 "$GPUSPY" record -q -f --max-stat-keys 64 -o "$WORK/sh.gpuspy" -- \
		sh -c 'for i in $(seq 200); do /bin/true; done'
	"$GPUSPY" report "$WORK/sh.gpuspy" --report osrt_thread --format json > "$WORK/t.json"
	jq -e '[.[] | select(.name == "execve" and .thread == "true")] |
		length == 200 and all(.[]; .calls == 1)' "$WORK/t.json"
	run -0 "$GPUSPY" report "$WORK/sh.gpuspy" --report osrt_sum
	[[ "$output" == *"events lost: 0"* ]]
}
