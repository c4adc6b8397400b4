# Shell functions the bench scripts share (sourced: `. bench/lib.sh`), POSIX sh.
# The caller sets: build (the build directory), work (a scratch directory it removes) and
# bench_name (the prefix of its messages), and calls bench_cleanup from its EXIT trap.

bench_fail() {
	echo "$bench_name: $*" >&2
	exit 1
}

# bench_need HINT FILE...: fails on the first FILE missing, saying what builds it (HINT)
bench_need() {
	bn_hint=$1
	shift
	for bn_file; do
		[ -e "$bn_file" ] || bench_fail "$bn_file missing ($bn_hint)"
	done
}

# stop_pid [PID]: ends a process the script started, if there is one, and reaps it
stop_pid() {
	[ -n "${1:-}" ] || return 0
	kill "$1" 2> /dev/null || true
	wait "$1" 2> /dev/null || true
}

# field NAME: the number after NAME= on stdin
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" | head -1; }

# min A [B]: the smaller number (B empty: A)
min() { echo "$1 ${2:-$1}" | awk '{ print ($1 < $2) ? $1 : $2 }'; }
# max A [B]
max() { echo "$1 ${2:-$1}" | awk '{ print ($1 > $2) ? $1 : $2 }'; }

now_ns() { date +%s%N; }

# wait_line FILE PATTERN [SECONDS [PID]]: until PATTERN is in FILE (default 60 s); fails when
# PID, if given, has exited first
wait_line() {
	wl_i=0
	wl_max=$((${3:-60} * 200))
	while ! grep -q -- "$2" "$1" 2> /dev/null; do
		wl_i=$((wl_i + 1))
		if [ $wl_i -ge $wl_max ] || { [ -n "${4:-}" ] && ! kill -0 "$4" 2> /dev/null; }; then
			echo "$bench_name: no '$2' in $1:" >&2
			tail -5 "$1" >&2
			return 1
		fi
		sleep 0.005
	done
}

# The gpuspy summary "(N records, N events, N lost)" of a stderr file: sets rec_events, rec_lost.
recorded_counts() {
	rc_re='.*(\([0-9]*\) records, \([0-9]*\) events, \([0-9]*\) lost).*'
	rec_events=$(sed -n "s/$rc_re/\2/p" "$1" | tail -1)
	rec_lost=$(sed -n "s/$rc_re/\3/p" "$1" | tail -1)
}

# --- the floor: bench/empty_probes, held while the workload runs -------------------------
floor_pid=

# floor_start ARGS...: starts empty_probes with ARGS and waits for its probes to be live
floor_start() {
	: > "$work/floor.err" # here, not in the child: the wait below must not see the last run's line
	"$build/bench/empty_probes" "$@" 2> "$work/floor.err" &
	floor_pid=$!
	if ! wait_line "$work/floor.err" "attached [0-9]* probes" 60 "$floor_pid"; then
		wait "$floor_pid" || true
		floor_pid=
		bench_fail "empty_probes $* did not attach: $(tail -1 "$work/floor.err")"
	fi
	floor_probes=$(sed -n 's/.*attached \([0-9]*\) probes.*/\1/p' "$work/floor.err")
}

floor_stop() {
	if [ -n "$floor_pid" ]; then
		kill -TERM "$floor_pid" 2> /dev/null || true
		wait "$floor_pid" || echo "$bench_name: empty_probes exited with status $?" >&2
		floor_pid=
	fi
}

# --- a gpuspy recording of a running process, in the background --------------------------
rec_pid=

# rec_start FILE PID [OPTIONS...]: `gpuspy record -p PID`, waits for its probes to be live
rec_start() {
	rs_out=$1
	rs_target=$2
	shift 2
	: > "$work/rec.err"
	"$build/gpuspy" record -p "$rs_target" -f -o "$rs_out" "$@" 2> "$work/rec.err" &
	rec_pid=$!
	if ! wait_line "$work/rec.err" "gpuspy: recording" 60 "$rec_pid"; then
		wait "$rec_pid" || true
		rec_pid=
		bench_fail "gpuspy record -p did not start: $(tail -1 "$work/rec.err")"
	fi
}

rec_stop() {
	if [ -n "$rec_pid" ]; then
		kill -INT "$rec_pid" 2> /dev/null || true
		wait "$rec_pid" || {
			echo "$bench_name: gpuspy record exited with status $?:" >&2
			tail -3 "$work/rec.err" >&2
		}
		rec_pid=
	fi
}

# --- bench/torch_loop.py run with --wait, so a tracer attaches between warm-up and loop ---
loop_pid=

# loop_start [LOOP-OPTIONS...]: starts the loop (PYTHON, ITERS) and waits for its READY
loop_start() {
	rm -f "$work/ctl" "$work/loop.out"
	mkfifo "$work/ctl"
	"$py" "$loop" --iters "$iters" --wait "$@" < "$work/ctl" > "$work/loop.out" 2> "$work/loop.err" &
	loop_pid=$!
	exec 4> "$work/ctl"
	wait_line "$work/loop.out" READY 60 "$loop_pid" || bench_fail "torch_loop.py did not start"
}

# loop_send COMMAND WHAT: sends the waiting loop process a command and returns once it printed
# LOOP_DONE for it (the process then waits for the next); fails naming WHAT if it died or took
# more than 10 minutes
loop_send() {
	ls_done=$(grep -c LOOP_DONE "$work/loop.out" || true)
	echo "$1" >&4
	ls_i=0
	while [ "$(grep -c LOOP_DONE "$work/loop.out" || true)" -le "$ls_done" ]; do
		ls_i=$((ls_i + 1))
		if [ $ls_i -ge 120000 ] || ! kill -0 "$loop_pid" 2> /dev/null; then
			tail -5 "$work/loop.err" >&2
			bench_fail "$2 failed"
		fi
		sleep 0.005
	done
}

# loop_go: runs one timed loop; sets iter_us, that loop's median per iteration
loop_go() {
	loop_send go torch_loop.py
	iter_us=$(grep '^ITER_US ' "$work/loop.out" | tail -1 | field median)
}

# loop_profile: runs one timed loop inside torch.profiler; sets iter_us
loop_profile() {
	loop_send profile torch_loop.py
	iter_us=$(grep '^ITER_US ' "$work/loop.out" | tail -1 | field median)
}

# loop_end: lets the loop exit (iter_us stays the last loop's)
loop_end() {
	echo exit >&4
	exec 4>&-
	wait "$loop_pid" || bench_fail "torch_loop.py exited with status $?"
	loop_pid=
}

# The files of a running process whose name says torch (libtorch_cpu, ...): where PyTorch's
# operators are; empty_probes --ops keeps those that define operators.
torch_libs() {
	awk '$6 ~ /torch/ { print $6 }' "/proc/$1/maps" | sort -u
}

# --- per-program cost from the kernel's BPF statistics ------------------------------------
# kernel.bpf_stats_enabled=1 makes the kernel count every program's runs and run time (and
# adds two clock reads to each run, floors included: compare programs measured this way only
# with each other). stats_on_for_measure turns it on, stats_restore puts back what was there.
stats_saved=
stats_on_for_measure() {
	stats_saved=$(cat /proc/sys/kernel/bpf_stats_enabled)
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
}
stats_restore() {
	if [ -n "$stats_saved" ]; then
		echo "$stats_saved" > /proc/sys/kernel/bpf_stats_enabled
		stats_saved=
	fi
}

# prog_ns NAME: the mean run time in ns of the loaded program NAME (the first one), or empty
prog_ns() {
	bpftool prog show 2> /dev/null | awk -v name="$1" '
		/^[0-9]+: / { hit = 0; for (i = 1; i < NF; i++) if ($i == "name" && $(i + 1) == name) hit = 1 }
		hit { for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) } }
		hit && c > 0 { printf "%.1f\n", t / c; exit }'
}

bench_cleanup() {
	stats_restore
	floor_stop
	rec_stop
	if [ -n "$loop_pid" ]; then
		kill "$loop_pid" 2> /dev/null || true
		loop_pid=
	fi
	rm -rf "$work"
}
