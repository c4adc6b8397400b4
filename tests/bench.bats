#!/usr/bin/env bats
# `make bench`'s table (bench/run.sh) on the real kernel, every row at a small size: each row
# is measured and printed with its floor, its timer floor and a ratio, so the figures docs/BENCHMARKS.md
# carries stay reproducible. No timing is asserted: only that each measurement ran and was
# reported (machines differ 2x in speed; the ratios are for people to read).
# bats file_tags=bpf,bench

load helpers
bats_require_minimum_version 1.5.0

setup() {
	require_bpf
	WORK=$BATS_TEST_TMPDIR # removed by bats after each test
}

# The cells of the table row whose path starts with PREFIX, one per line.
row_cells() { # PREFIX
	grep "^| $1" "$WORK/table" | head -1 | tr '|' '\n' | sed 's/^ *//; s/ *$//' | sed '/^$/d'
}

@test "bench table: every row measured, with its floor, timer floor, ratio and goal" {
	[ -x "$BUILD/targets/cuda/launch_bench" ] || skip "needs the simulated CUDA stack (make fakecuda)"
	/usr/bin/python3.11 -c 'import torch' 2> /dev/null || skip "needs python3-torch"
	stats_before=$(cat /proc/sys/kernel/bpf_stats_enabled)
	CTX_ROUNDS=2000 LAUNCHES=2000 OPS_ITERS=10 EVENT_ITERS=20000 \
		run --separate-stderr sh "$ROOT/bench/run.sh" "$BUILD" --repeats 1 20000
	echo "$stderr" | tail -5
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$WORK/table"
	grep -q '^| path | unit | untraced | floor added | timer floor added | gpuspy added | ratio | goal | met |$' "$WORK/table"
	for row in "traced syscall" "syscall of an untraced" "context switch" "traced CUDA call" \
		"PyTorch op"; do
		row_cells "$row" > "$WORK/cells"
		[ "$(wc -l < "$WORK/cells")" -eq 9 ] || { cat "$WORK/cells"; false; }
		# untraced, floor added and gpuspy added are numbers; the ratio is N.NNx
		[ "$(sed -n '3p;4p;6p' "$WORK/cells" | grep -Ec '^-?[0-9]+\.[0-9]$')" -eq 3 ]
		# n/a only where an added cost came out at or below zero, which a note then says (at
		# this size the context switch floor, a few ns, can)
		if sed -n 7p "$WORK/cells" | grep -qx 'n/a'; then
			sed -n 9p "$WORK/cells" | grep -qx 'n/a'
			grep -q "^- $row.*: no ratio, the floor added" "$WORK/table"
		else
			sed -n 7p "$WORK/cells" | grep -Eq '^[0-9]+\.[0-9]+x$'
			sed -n 9p "$WORK/cells" | grep -Eq '^(yes|no)$'
		fi
	done
	# the timer floor, a multiple of the floor beside it, where a row times each call
	for row in "traced syscall" "context switch" "traced CUDA call"; do
		row_cells "$row" | sed -n 5p | grep -Eq '^-?[0-9]+\.[0-9] \((-?[0-9]+\.[0-9]+x|n/a)\)$'
	done
	row_cells "sustained span events" | sed -n 6p | grep -Eq '^[0-9.]+ M/s, [0-9]+ lost$'
	row_cells "trace file, span-heavy" | sed -n 6p | grep -Eq '^[0-9.]+$'
	# what limits each row is measured beside it
	grep -q '^- syscall (ns/syscall): .*timer floor [0-9.]' "$WORK/table"
	grep -q 'without off-CPU spans (--offcpu-threshold 1s, exact totals only) gpuspy [0-9.]*/switch' "$WORK/table"
	grep -q 'floor + gpuspy --no-cuda .* [0-9.]*x$' "$WORK/table"
	grep -q 'gpuspy record -p --no-python [0-9.]* (-\{0,1\}[0-9.]* ns/op added' "$WORK/table"
	grep -q '^- PyTorch, per-program cost .*empty session program [0-9.]* ns per run, gpuspy op_call [0-9.]* ns --no-python and [0-9.]* ns with Python stacks' "$WORK/table"
	# the statistics were only on while they were read
	[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = "$stats_before" ]
}

@test "empty_probes: --timer and --filter attach the same programs, and a bad mode is one usage line" {
	for mode in --timer --filter; do
		"$BUILD/bench/empty_probes" "$mode" --syscalls 2> "$WORK/err" &
		pid=$!
		wait_for_line "$WORK/err" "attached 2 probes"
		kill -TERM "$pid"
		wait "$pid"
	done
	for bad in --timer "--filter --count --syscalls" "--filter --sched"; do
		# shellcheck disable=SC2086 # the options, one word each
		run "$BUILD/bench/empty_probes" $bad
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == *"usage: empty_probes"*"--timer"*"--filter"* ]]
	done
}

@test "serve_cost: serve's CPU share quiet, host-wide and under CUDA process churn, with RSS, in one table" {
	[ -x "$BUILD/targets/cuda/cuda_loop" ] || skip "needs the simulated CUDA stack (make fakecuda)"
	IDLE_PROCS=20 run --separate-stderr sh "$ROOT/bench/serve_cost.sh" "$BUILD" 3 5 50
	echo "$output"
	echo "$stderr" | tail -5
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > "$WORK/table"
	grep -q '^| serve | window | serve CPU (% of one CPU) | serve RSS (MiB) | meanwhile |$' "$WORK/table"
	grep -Eq '^\| quiet: -p 20 sleeping processes \| 3 s \| [0-9]+\.[0-9]{3}% \| [0-9.]+ \| \|$' "$WORK/table"
	grep -Eq '^\| host-wide, this host as it is \| 3 s \| [0-9]+\.[0-9]{3}% \| [0-9.]+ \| [0-9.]+ processes started/s \|$' "$WORK/table"
	# the launcher started about RATE x SECONDS programs
	row=$(grep '^| host-wide, 50 CUDA programs/s | 5 s | ' "$WORK/table")
	echo "$row" | grep -Eq '\| [0-9]+\.[0-9]{3}% \| [0-9.]+ → [0-9.]+ \| [0-9]+ programs started'
	started=$(echo "$row" | sed 's/.*| \([0-9]*\) programs started.*/\1/')
	[ "$started" -ge 200 ]
	[ "$started" -le 260 ]
	grep -q '^goals (#24): idle < 0.2% of one CPU (quiet: \(not \)\{0,1\}met); 50 CUDA programs/s < 3% (\(not \)\{0,1\}met)' "$WORK/table"
}
