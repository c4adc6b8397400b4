#!/bin/sh
# gpuspy overhead table (`make bench`): every row measured in this one run, each gpuspy cost as a
# ratio to a floor measured in the same run (machines differ 2x in speed; the ratios travel).
#
#   row                      workload                         floor                    gpuspy
#   syscall                  bench/syscall_bench (getppid,    empty tp_btf sys_enter + gpuspy record -- WORKLOAD
#                            8-byte read, 8-byte write)       sys_exit programs        (default settings)
#   untraced syscall         the same, not traced             the same                 gpuspy record -p SLEEPER
#                                                                                      running meanwhile
#   context switch           bench/ctxswitch_bench (futex     empty tp_btf             gpuspy record --osrt-threshold
#                            ping-pong, one CPU)              sched_switch             1s -- WORKLOAD, its syscall
#                                                                                      side taken out (below)
#   CUDA call                launch_bench on the simulated    empty uprobe+uretprobe   gpuspy record --no-cupti
#                            CUDA stack (3 probed calls per   on the same functions    -- WORKLOAD (a note adds
#                            launch)                                                   the floor under gpuspy
#                                                                                      --no-cuda)
#   PyTorch op               bench/torch_loop.py (CNN step)   empty uprobe session on  gpuspy record -p LOOP
#                                                             every at::_ops::*::call  --ops uprobes
#   PyTorch loop             the same                         torch.profiler(CPU) in   gpuspy record -p LOOP
#                                                             the same process: the    --ops inprocess
#                                                             peer to beat
#   sustained span events    syscall_bench (EVENT_THREADS)    -                        --osrt-threshold 0
#                                                                                      --buffer-size 64
#   bytes/event              the 1-thread recording above     -                        file size / events
#
# "added" is a cost over the untraced workload of the same run; ratio = gpuspy added / floor
# added. The syscall, switch and CUDA rows also measure a timer floor (empty_probes --timer):
# the same hooks doing the least an exact per-call timer must (a clock read at both ends, the
# start kept in the thread's task storage, a per-thread total). Its added cost as a multiple of
# the floor's is printed beside it: where that multiple reaches the goal, no tracer of exact
# per-call durations can meet it on this machine. (The PyTorch row's noise, a few hundred ns
# per operator call between loops, is larger than a timer's cost, so it is not measured there.)
# Each figure is the best (lowest time) of REPEATS rounds, a round running every
# configuration of a row once, so that a slow phase of the machine hits all of them. A round
# counts only when no other BPF tracing program was loaded and kernel.bpf_stats_enabled was 0
# right before and after it (other gpuspy runs on the machine slow every syscall; bpf_stats adds
# two clock reads to every BPF program run, floors included); others are redone, up to 2 x
# REPEATS rounds, and the table says when a row had fewer quiet rounds. Timing is measured
# inside the workloads. The table goes to stdout, progress to stderr.
#
# Context switch: the ping-pong's handoffs are futex calls, which gpuspy's syscall tracing also
# sees. The workload times the same calls without switching (ns_per_syscall) and counts its
# syscalls per switch, so the syscall side is taken out of gpuspy's figure:
#   added = (switch_gpuspy - switch_untraced)
#           - syscalls_per_switch * median over rounds (syscall_gpuspy - syscall_untraced)
# --osrt-threshold 1s keeps the blocking futex waits from becoming spans, which the
# non-blocking calls would not show; off-CPU spans keep their default threshold. The floor
# attaches nothing to syscalls: its added cost is switch_floor - switch_untraced. The notes add
# gpuspy with --offcpu-threshold 1s as well: the exact totals without spans.
#
# PyTorch op: per operator call = per-iteration time / operator calls per iteration (counted
# in gpuspy's recording); a gpuspy round that recorded fewer calls than the others is not used.
# A round times untraced, floor, gpuspy --ops uprobes with and without Python stacks, gpuspy
# --ops inprocess and torch.profiler in one warm loop process. After
# the rounds, the kernel's BPF statistics (kernel.bpf_stats_enabled, on only meanwhile) give
# the per-run cost of the floor's empty session program and of gpuspy's op_call, with and
# without Python stacks: gpuspy's own work per operator call, which the loop's noise hides.
#
# usage: bench/run.sh [BUILD_DIR] [--only ROWS] [--repeats N] [ITERATIONS [REPEATS]]   (as root)
#   ROWS: comma-separated among syscall, ctx, cuda, ops, events (default: all)
#   ITERATIONS: syscall_bench iterations (default 200000; 3 syscalls each)
#   REPEATS: rounds per row (default 7; the PyTorch and sustained rows: at most 5)
#   sh bench/run.sh build --only syscall    the two syscall rows alone, 20-40 s
# environment: PYTHON (default /usr/bin/python3.11, needs torch), CTX_ROUNDS (default 100000),
#   LAUNCHES (default 100000), OPS_ITERS (default 300), EVENT_ITERS (default 300000),
#   EVENT_THREADS (workload threads of the sustained rows, default "1"; "1 2": a row each)
set -eu
bench_name=bench
here=$(dirname "$0")
build=build
only=all
iters=
repeats=
positional=0
while [ $# -gt 0 ]; do
	case $1 in
	--only) only=${2:?--only needs ROWS}; shift 2 ;;
	--only=*) only=${1#--only=}; shift ;;
	--repeats) repeats=${2:?--repeats needs N}; shift 2 ;;
	-h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench: unknown option $1 (see --help)" >&2; exit 2 ;;
	*)
		case $positional in
		0) build=$1 ;;
		1) iters=$1 ;;
		2) repeats=$1 ;;
		*) echo "bench: too many arguments (see --help)" >&2; exit 2 ;;
		esac
		positional=$((positional + 1))
		shift
		;;
	esac
done
iters=${iters:-200000}
repeats=${repeats:-7}
ops_repeats=$((repeats < 5 ? repeats : 5))
ctx_rounds=${CTX_ROUNDS:-100000}
launches=${LAUNCHES:-100000}
ops_iters=${OPS_ITERS:-300}
event_iters=${EVENT_ITERS:-300000}
event_threads=${EVENT_THREADS:-1}
py=${PYTHON:-/usr/bin/python3.11}
loop=$here/torch_loop.py
gpuspy=$build/gpuspy
libs=$build/fakecuda
for n in "$iters" "$repeats" "$ctx_rounds" "$launches" "$ops_iters" "$event_iters"; do
	case $n in '' | *[!0-9]* | 0*) echo "bench: not a positive integer: $n" >&2; exit 2 ;; esac
done

want() { case ",$only," in *,all,* | *,$1,*) return 0 ;; *) return 1 ;; esac; }
for r in $(echo "$only" | tr , ' '); do
	case $r in all | syscall | ctx | cuda | ops | events) ;; *) echo "bench: unknown row $r" >&2; exit 2 ;; esac
done

work=$(mktemp -d)
. "$here/lib.sh"
sleeper=
trap 'bench_cleanup; [ -z "$sleeper" ] || kill "$sleeper" 2> /dev/null || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ "$(id -u)" -eq 0 ] || bench_fail "must run as root"
for f in "$gpuspy" "$build/bench/empty_probes" "$build/bench/syscall_bench" "$build/bench/ctxswitch_bench"; do
	[ -x "$f" ] || bench_fail "$f not found: make BUILD=$build all $build/bench/$(basename "$f")"
done

progress() { echo "bench: $*" >&2; }

# --- rounds on a quiet machine -----------------------------------------------------------
# Other BPF tracing programs (other tests or benches on the machine: their gpuspy) slow every
# syscall or switch, and kernel.bpf_stats_enabled=1 adds two clock reads to every BPF program
# run, floors included. A round counts only when neither was seen right before and right after
# it (none of ours is loaded then); the others are redone, up to twice REPEATS rounds in all.
foreign_loaded() {
	command -v bpftool > /dev/null 2>&1 &&
		bpftool prog show 2> /dev/null | grep -qE '^[0-9]+: (tracing|kprobe|raw_tracepoint|tracepoint|perf_event) '
}
stats_on() { [ "$(cat /proc/sys/kernel/bpf_stats_enabled 2> /dev/null || echo 0)" = 1 ]; }
quiet() { # TICKS: waits up to TICKS x 50 ms (ours linger ~150 ms after they exit)
	q_i=0
	while foreign_loaded || stats_on; do
		q_i=$((q_i + 1))
		[ $q_i -lt "$1" ] || return 1
		sleep 0.05
	done
}
seen_foreign=0
seen_stats=0
# CPU pressure (PSI "some": time in which some task waited for a CPU) during each row, as a
# share of the row's time: other work on the machine, which the quiet check does not see
psi_total() { sed -n 's/^some .*total=\([0-9]*\).*/\1/p' /proc/pressure/cpu 2> /dev/null || true; }
pressure=

# rounds NAME N FUNC VAR...: runs FUNC (one round of every configuration of a row, setting the
# VARs; round_bad=1 when a run did not measure what it should) until N rounds were quiet, at
# most 2N tries; best_VAR is then the lowest VAR of the quiet rounds, or of all rounds when none
# was (the row is then listed as perturbed). Each round is also a line "QUIET VAR..." (QUIET 1
# or 0) of $work/rounds.FUNC.
perturbed_rows=
rounds() {
	rd_name=$1
	rd_n=$2
	rd_func=$3
	shift 3
	for v; do eval "best_$v= dirty_$v="; done
	rd_log=$work/rounds.$rd_func
	: > "$rd_log"
	rd_psi0=$(psi_total)
	rd_t0=$(now_ns)
	rd_clean=0
	rd_tries=0
	while [ $rd_clean -lt "$rd_n" ] && [ $rd_tries -lt $((2 * rd_n)) ]; do
		rd_q=1
		quiet 20 || rd_q=0
		foreign_loaded && seen_foreign=1
		stats_on && seen_stats=1
		round_bad=0
		$rd_func
		quiet 10 || rd_q=0
		[ $round_bad = 0 ] || rd_q=0
		rd_line=$rd_q
		for v; do eval "rd_line=\"\$rd_line \$$v\""; done
		echo "$rd_line" >> "$rd_log"
		for v; do
			if [ $rd_q = 1 ]; then
				eval "best_$v=\$(min \"\$$v\" \"\$best_$v\")"
			else
				eval "dirty_$v=\$(min \"\$$v\" \"\$dirty_$v\")"
			fi
		done
		rd_clean=$((rd_clean + rd_q))
		rd_tries=$((rd_tries + 1))
	done
	rd_psi1=$(psi_total)
	if [ -n "$rd_psi0" ] && [ -n "$rd_psi1" ]; then
		pressure="$pressure, $rd_name $(echo "$rd_psi0 $rd_psi1 $rd_t0 $(now_ns)" |
			awk '{ printf "%.0f%%", 100 * ($2 - $1) * 1000 / ($4 - $3) }')"
	fi
	if [ $rd_clean = 0 ]; then
		for v; do eval "best_$v=\$dirty_$v"; done
		perturbed_rows="$perturbed_rows, $rd_name (no quiet round in $rd_tries)"
	elif [ $rd_clean -lt "$rd_n" ]; then
		perturbed_rows="$perturbed_rows, $rd_name (best of $rd_clean quiet rounds of $rd_tries)"
	fi
}

# run_field KEY CMD...: runs CMD, echoes the number after KEY= in its output; fails loudly
run_field() {
	rf_key=$1
	shift
	"$@" > "$work/run.out" 2> "$work/run.err" || {
		echo "bench: failed ($?): $*" >&2
		tail -3 "$work/run.err" >&2
		exit 1
	}
	rf_v=$(field "$rf_key" < "$work/run.out")
	[ -n "$rf_v" ] || bench_fail "no $rf_key= from: $*"
	echo "$rf_v"
}

sub() { echo "$1 $2" | awk '{ print $1 - $2 }'; }

# median_of FILE AWK-EXPR: the median of EXPR (over the fields of rounds.FUNC lines: $1 QUIET,
# $2... the VARs) over the quiet rounds, or over all rounds when none was quiet
median_of() {
	awk -v q=1 "\$1 == q { print $2 }" "$1" | sort -g > "$work/median"
	[ -s "$work/median" ] || awk "{ print $2 }" "$1" | sort -g > "$work/median"
	awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }' "$work/median"
}

rows=$work/rows
: > "$rows"
# row PATH UNIT UNTRACED FLOOR_ADDED GPUSPY_ADDED GOAL_RATIO TIMER_FLOOR_ADDED|-: a ratio row
row() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7" >> "$rows"
}
notes=$work/notes
: > "$notes"

# --- syscall rows ------------------------------------------------------------------------
sys_round() {
	sp=$(run_field ns_per_syscall "$sb" "$iters")
	floor_start --syscalls
	sf=$(run_field ns_per_syscall "$sb" "$iters")
	floor_stop
	floor_start --timer --syscalls
	sk=$(run_field ns_per_syscall "$sb" "$iters")
	floor_stop
	floor_start --filter --syscalls
	sff=$(run_field ns_per_syscall "$sb" "$iters")
	floor_stop
	st=$(run_field ns_per_syscall "$gpuspy" record -q -f -o "$work/t.gpuspy" -- "$sb" "$iters")
	rec_start "$work/o.gpuspy" "$sleeper"
	su=$(run_field ns_per_syscall "$sb" "$iters")
	rec_stop
}
if want syscall; then
	progress "syscall rows: $iters iterations x 3 syscalls, best of $repeats"
	sb=$build/bench/syscall_bench
	sleep 100000 &
	sleeper=$!
	rounds syscall "$repeats" sys_round sp sf sk sff st su
	kill "$sleeper" 2> /dev/null || true
	wait "$sleeper" 2> /dev/null || true
	sleeper=
	row "traced syscall, default settings" ns/syscall "$best_sp" "$(sub "$best_sf" "$best_sp")" \
		"$(sub "$best_st" "$best_sp")" 2 "$(sub "$best_sk" "$best_sp")"
	row "syscall of an untraced process while recording another" ns/syscall "$best_sp" \
		"$(sub "$best_sf" "$best_sp")" "$(sub "$best_su" "$best_sp")" 1.2 -
	echo "syscall (ns/syscall): untraced $best_sp, floor $best_sf, timer floor $best_sk, gpuspy traced $best_st, untraced while gpuspy records another $best_su; filter floor (the same empty programs asking which process they run in, what any per-process tracer pays on others' syscalls) $best_sff, $(echo "$best_sff $best_sf $best_sp" | awk '{ printf "%.2f", ($1 - $3) / ($2 - $3) }')x the floor's added" >> "$notes"
fi

# --- context switch ----------------------------------------------------------------------
ctx_run() { # CMD...: sets sw, sc, spw from one run
	"$@" > "$work/ctx.out" 2> "$work/ctx.err" || {
		echo "bench: failed ($?): $*" >&2
		tail -3 "$work/ctx.err" >&2
		exit 1
	}
	sw=$(field ns_per_switch < "$work/ctx.out")
	sc=$(field ns_per_syscall < "$work/ctx.out")
	spw=$(field syscalls_per_switch < "$work/ctx.out")
	if [ -z "$sw" ] || [ -z "$sc" ] || [ -z "$spw" ]; then
		bench_fail "no ns_per_switch= from: $*"
	fi
}
ctx_round() {
	ctx_run "$cb" "$ctx_rounds"
	psw=$sw psc=$sc
	floor_start --sched
	ctx_run "$cb" "$ctx_rounds"
	floor_stop
	fsw=$sw fsc=$sc
	floor_start --timer --sched
	ctx_run "$cb" "$ctx_rounds"
	floor_stop
	ksw=$sw
	ctx_run "$gpuspy" record -f --osrt-threshold 1s -o "$work/c.gpuspy" -- "$cb" "$ctx_rounds"
	gsw=$sw gsc=$sc gspw=$spw
	recorded_counts "$work/ctx.err"
	ctx_events=$rec_events
	# the exact off-CPU totals alone: no interval of the ping-pong reaches a second
	ctx_run "$gpuspy" record -f --osrt-threshold 1s --offcpu-threshold 1s -o "$work/c.gpuspy" -- \
		"$cb" "$ctx_rounds"
	nsw=$sw
}
if want ctx; then
	progress "context switch row: $ctx_rounds ping-pong rounds, best of $repeats"
	cb=$build/bench/ctxswitch_bench
	# the floor attaches nothing to syscalls; gpuspy's syscall side is the median of the
	# rounds' (gpuspy - untraced) futex call cost, each pair measured seconds apart
	rounds "context switch" "$repeats" ctx_round psw psc fsw fsc ksw gsw gsc gspw nsw
	dsc=$(median_of "$work/rounds.ctx_round" '$8 - $3')
	spw=$(median_of "$work/rounds.ctx_round" '$9')
	fadd=$(sub "$best_fsw" "$best_psw")
	gadd=$(echo "$best_gsw $best_psw $spw $dsc" | awk '{ print ($1 - $2) - $3 * $4 }')
	row "context switch, traced ping-pong (syscall side taken out)" ns/switch "$best_psw" "$fadd" "$gadd" 2 \
		"$(sub "$best_ksw" "$best_psw")"
	echo "$best_psw $best_psc $best_fsw $best_gsw $best_gsc $spw $dsc $ctx_events $ctx_rounds $best_ksw $best_nsw" | awk '{
		printf "context switch (ns): untraced %.1f/switch, %.1f/futex call without switching; floor %.1f/switch, timer floor %.1f; gpuspy %.1f/switch, %.1f/futex call; %.2f futex calls/switch x %.1f (median gpuspy - untraced per call) = %.1f ns/switch of syscall tracing taken out; %.2f events per ping-pong round (off-CPU spans) in the last recording; without off-CPU spans (--offcpu-threshold 1s, exact totals only) gpuspy %.1f/switch: %.1f ns/switch added, %s the floor\n", \
			$1, $2, $3, $10, $4, $5, $6, $7, $6 * $7, $8 / $9, $11, ($11 - $1) - $6 * $7, \
			($3 > $1) ? sprintf("%.2fx", (($11 - $1) - $6 * $7) / ($3 - $1)) : "n/a (no floor)" }' >> "$notes"
fi

# --- CUDA call ---------------------------------------------------------------------------
cuda_round() {
	cp=$(run_field ns_per_launch env LD_LIBRARY_PATH="$libs" "$lb" "$launches")
	floor_start --timer "$libs/libcudart.so.13" "$libs/libcuda.so.1"
	ck=$(run_field ns_per_launch env LD_LIBRARY_PATH="$libs" "$lb" "$launches")
	floor_stop
	floor_start "$libs/libcudart.so.13" "$libs/libcuda.so.1"
	cf=$(run_field ns_per_launch env LD_LIBRARY_PATH="$libs" "$lb" "$launches")
	# the floor under gpuspy's syscall tracing alone: the simulated stack makes syscalls of its
	# own (gettid) and every uretprobe returns through one, which gpuspy's syscall hooks see
	cs=$(run_field ns_per_launch "$gpuspy" record -q -f --no-cuda -o "$work/ks.gpuspy" -- \
		env LD_LIBRARY_PATH="$libs" "$lb" "$launches")
	floor_stop
	ct=$(run_field ns_per_launch "$gpuspy" record -q -f --no-cupti -o "$work/k.gpuspy" -- \
		env LD_LIBRARY_PATH="$libs" "$lb" "$launches")
}
if want cuda; then
	lb=$build/targets/cuda/launch_bench
	if [ -x "$lb" ] && [ -f "$libs/libcudart.so.13" ] && [ -f "$libs/libcuda.so.1" ]; then
		progress "CUDA row: $launches launches on the simulated stack, best of $repeats"
		rounds CUDA "$repeats" cuda_round cp cf ck cs ct
		row "traced CUDA call (launch_bench: 3 calls per launch, --no-cupti)" ns/launch "$best_cp" \
			"$(sub "$best_cf" "$best_cp")" "$(sub "$best_ct" "$best_cp")" 1.3 "$(sub "$best_ck" "$best_cp")"
		echo "$best_cp $best_cf $floor_probes $best_ct $best_cs" | awk '{
			printf "CUDA (ns/launch): untraced %.1f, floor %.1f (%d empty probes), gpuspy --no-cupti %.1f; floor + gpuspy --no-cuda (its syscall tracing of the workload and of the uretprobe returns) %.1f: gpuspy added / that added %.2fx\n", \
				$1, $2, $3, $4, $5, ($5 > $1) ? ($4 - $1) / ($5 - $1) : 0 }' >> "$notes"
	else
		progress "CUDA row skipped: $lb or $libs not built (make BUILD=$build fakecuda)"
		echo "CUDA row not measured: make BUILD=$build fakecuda" >> "$notes"
	fi
fi

# --- PyTorch operator --------------------------------------------------------------------
ops_round() {
	# one warm process for every configuration of the round (three torch start-ups fewer,
	# and no difference between processes in the comparison)
	loop_start
	loop_go
	op=$iter_us
	# shellcheck disable=SC2046 # one path per word
	floor_start --ops $(torch_libs "$loop_pid")
	loop_go
	floor_stop
	of=$iter_us
	rec_start "$work/op.gpuspy" "$loop_pid" --ops uprobes
	loop_go
	rec_stop
	ot=$iter_us
	# the operator probes without the Python stack each outermost operator call carries
	rec_start "$work/opn.gpuspy" "$loop_pid" --ops uprobes --no-python
	loop_go
	rec_stop
	on=$iter_us
	# the in-process observer (loaded at the first of the round's attaches) and the peer
	rec_start "$work/opi.gpuspy" "$loop_pid" --ops inprocess
	loop_go
	rec_stop
	oi=$iter_us
	loop_profile
	tp=$iter_us
	loop_end
	rc=$("$gpuspy" report "$work/op.gpuspy" --report ops --format json 2> "$work/opr.err" |
		sed -n 's/.*"calls": *\([0-9]*\).*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
	if [ "$rc" -eq 0 ]; then
		round_bad=1
		progress "gpuspy recorded no PyTorch operator call in this round (redone):"
		cat "$work/rec.err" "$work/opr.err" >&2
	fi
}
# The row's noise (a few hundred ns per operator call between loops) hides what gpuspy's
# programs cost per call: the kernel's BPF statistics measure that, in one more warm loop per
# configuration, the floor's empty session program against gpuspy's op_call (both run twice
# per operator call), with and without Python stacks.
ops_program_cost() {
	progress "PyTorch row: per-program cost, one more loop per configuration with the kernel's BPF statistics on"
	loop_start
	# shellcheck disable=SC2046 # one path per word
	floor_start --ops $(torch_libs "$loop_pid")
	stats_on_for_measure
	loop_go
	pc_empty=$(prog_ns empty_session)
	stats_restore
	floor_stop
	rec_start "$work/opc.gpuspy" "$loop_pid" --ops uprobes --no-python
	stats_on_for_measure
	loop_go
	pc_nopy=$(prog_ns op_call)
	stats_restore
	rec_stop
	rec_start "$work/opc.gpuspy" "$loop_pid" --ops uprobes
	stats_on_for_measure
	loop_go
	pc_py=$(prog_ns op_call)
	stats_restore
	rec_stop
	loop_end
	if [ -n "$pc_empty" ] && [ -n "$pc_nopy" ] && [ -n "$pc_py" ]; then
		echo "$pc_empty $pc_nopy $pc_py $best_of $best_op $opi" | awk '
			function times(work) { return (floor > 0) ? sprintf("%.2fx", (floor + work) / floor) : "n/a (no floor)" }
			{
			floor = ($4 - $5) * 1000 / $6
			printf "PyTorch, per-program cost (kernel.bpf_stats_enabled, one more loop each; each run includes the clock reads of the statistics themselves): empty session program %.1f ns per run, gpuspy op_call %.1f ns --no-python and %.1f ns with Python stacks. Both run at entry and return: gpuspy does %.0f ns of work per operator call beyond the empty programs without stacks (floor + that = %s the floor added above), %.0f ns with them (%s)\n", \
				$1, $2, $3, 2 * ($2 - $1), times(2 * ($2 - $1)), 2 * ($3 - $1), times(2 * ($3 - $1)) }' >> "$notes"
	else
		echo "PyTorch, per-program cost: not measured (no bpftool run statistics)" >> "$notes"
	fi
}
if want ops; then
	if "$py" -c 'import torch' 2> /dev/null; then
		progress "PyTorch row: $ops_iters training iterations, median per iteration, best of $ops_repeats"
		iters=$ops_iters
		rounds PyTorch "$ops_repeats" ops_round op of ot on oi tp rc
		# a recording that missed operator calls ran faster: gpuspy's figure is the best of the
		# rounds that saw (nearly) all of them
		# rounds.ops_round: quiet op of ot on oi tp rc
		calls=$(awk '$8 > n { n = $8 } END { print n + 0 }' "$work/rounds.ops_round")
		[ "$calls" -gt 0 ] || bench_fail "gpuspy saw no PyTorch operator call"
		best_ot=$(awk -v n="$calls" '$8 >= 0.95 * n && $1 == 1 { print $4 }' "$work/rounds.ops_round" | sort -g | head -1)
		[ -n "$best_ot" ] || best_ot=$(awk -v n="$calls" '$8 >= 0.95 * n { print $4 }' "$work/rounds.ops_round" | sort -g | head -1)
		opi=$(echo "$calls $ops_iters" | awk '{ print $1 / $2 }')
		row "PyTorch op (torch_loop.py, $(printf %.0f "$opi") ops/iteration)" ns/op \
			"$(echo "$best_op $opi" | awk '{ print $1 * 1000 / $2 }')" \
			"$(echo "$best_of $best_op $opi" | awk '{ print ($1 - $2) * 1000 / $3 }')" \
			"$(echo "$best_ot $best_op $opi" | awk '{ print ($1 - $2) * 1000 / $3 }')" 1.3 -
		row "PyTorch loop, gpuspy --ops inprocess against torch.profiler (CPU) as the floor" us/iteration \
			"$best_op" "$(sub "$best_tp" "$best_op")" "$(sub "$best_oi" "$best_op")" 1.0 -
		echo "$best_op $best_tp $best_oi $best_ot" | awk '{
			printf "PyTorch loop slowdown against untraced (us/iteration, median): torch.profiler(activities=[CPU]) %.3fx, gpuspy --ops inprocess %.3fx (aim: 1.10x), gpuspy --ops uprobes %.3fx\n", \
				$2 / $1, $3 / $1, $4 / $1 }' >> "$notes"
		ops_program_cost
		echo "$best_op $best_of $floor_probes $best_ot $best_on $calls $ops_iters $opi" | awk '{
			printf "PyTorch (us/iteration, median): untraced %s, floor %s (%d empty probes), gpuspy record -p %s, gpuspy record -p --no-python %s (%.1f ns/op added, %s the floor: the operator probes without the Python stack each outermost call carries); %d operator calls in %d iterations\n", \
				$1, $2, $3, $4, $5, ($5 - $1) * 1000 / $8, ($2 > $1) ? sprintf("%.2fx", ($5 - $1) / ($2 - $1)) : "n/a (no floor)", $6, $7 }' >> "$notes"
	else
		progress "PyTorch row skipped: $py has no torch (set PYTHON)"
		echo "PyTorch row not measured: $py has no torch (set PYTHON)" >> "$notes"
	fi
fi

# --- sustained events and trace size -----------------------------------------------------
ev_round() {
	"$gpuspy" record -f --osrt-threshold 0 --buffer-size 64 -o "$work/e.gpuspy" -- \
		"$build/bench/syscall_bench" "$event_iters" "$ev_threads" > "$work/e.out" 2> "$work/e.err" ||
		bench_fail "sustained run failed: $(tail -1 "$work/e.err")"
	secs=$(field seconds < "$work/e.out")
	recorded_counts "$work/e.err"
	if [ -z "$rec_events" ] || [ -z "$secs" ]; then
		bench_fail "no event count from the sustained run"
	fi
	ev_ns=$(echo "$secs $rec_events" | awk '{ print $1 * 1e9 / $2 }')
	ev_lost=$((ev_lost + rec_lost))
	bpe=$(echo "$(stat -c %s "$work/e.gpuspy") $rec_events" | awk '{ print $1 / $2 }')
}
ev_rows=$work/ev_rows
: > "$ev_rows"
if want events; then
	progress "sustained events: $event_iters iterations per thread, every syscall a span, 64 MiB buffer, best of $ops_repeats"
	for ev_threads in $event_threads; do
		ev_lost=0
		rounds "events, $ev_threads thread(s)" "$ops_repeats" ev_round ev_ns bpe
		printf 'sustained span events, %s thread%s\t%s\t%s\n' "$ev_threads" \
			"$([ "$ev_threads" = 1 ] || echo s)" "$(echo "$best_ev_ns" | awk '{ print 1e9 / $1 }')" \
			"$ev_lost" >> "$ev_rows"
		[ "$ev_threads" != 1 ] || bpe1=$best_bpe
	done
fi

# --- the table ---------------------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "gpuspy overhead ($build): $(nproc) CPUs, $cpu, kernel $(uname -r), best of $repeats (PyTorch, events: $ops_repeats), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "| path | unit | untraced | floor added | timer floor added | gpuspy added | ratio | goal | met |"
echo "|---|---|---:|---:|---:|---:|---:|---|---|"
awk -F '\t' '{
	ratio = ($4 > 0) ? $5 / $4 : -1
	met = (ratio < 0) ? "n/a" : (ratio <= $6) ? "yes" : "no"
	timed = ($7 == "-") ? "-" : sprintf("%.1f (%s)", $7, ($4 > 0) ? sprintf("%.2fx", $7 / $4) : "n/a")
	printf "| %s | %s | %.1f | %.1f | %s | %.1f | %s | <= %sx | %s |\n", $1, $2, $3, $4, timed, $5, \
		(ratio >= 0) ? sprintf("%.2fx", ratio) : "n/a", $6, met
}' "$rows"
awk -F '\t' '{
	printf "| %s | events/s | - | - | - | %.2f M/s, %d lost | - | >= 2 M/s, 0 lost | %s |\n", $1, \
		$2 / 1e6, $3, ($2 >= 2e6 && $3 == 0) ? "yes" : "no"
}' "$ev_rows"
if [ -n "${bpe1:-}" ]; then
	echo "$bpe1" | awk '{ printf "| trace file, span-heavy recording (1 thread) | bytes/event | - | - | - | %.1f | - | <= 32 | %s |\n", \
		$1, ($1 <= 32) ? "yes" : "no" }'
fi
echo
sed 's/^/- /' "$notes"
[ $seen_stats = 0 ] || echo "- kernel.bpf_stats_enabled=1 at times during the run: every BPF program run (floors and gpuspy) then paid two clock reads; such rounds were redone"
[ $seen_foreign = 0 ] || echo "- other BPF tracing programs were loaded at times during the run (another gpuspy?); such rounds were redone"
[ -z "$pressure" ] || echo "- CPU pressure (PSI some: share of the time some task waited for a CPU) per row:${pressure#,}; it includes the bench's own helper processes (gpuspy start-up, bpftool), so compare it between runs: higher means other work shared the CPUs"
awk -F '\t' '$4 <= 0 || $5 < 0 { printf "- %s: no ratio, the floor added %.1f and gpuspy %.1f (each a difference of two noisy figures, here at or below zero); rerun with more rounds or iterations\n", $1, $4, $5 }' "$rows"
[ -z "$perturbed_rows" ] || echo "- WARNING: perturbed rows${perturbed_rows#,}: rerun when the machine is quiet"
