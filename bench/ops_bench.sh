#!/bin/sh
# PyTorch operator tracing against torch.profiler on one small CPU training loop
# (bench/torch_loop.py: a CNN, fixed seed, ITERS timed iterations after a warm-up), in one run:
#  (a) loop slowdown, median time per iteration: untraced; `gpuspy record -p` attached with
#      its in-process observer (--ops inprocess, Python stacks on, and --no-python); with
#      uprobes on the operators (--ops uprobes, and --no-python); gpuspy --no-python --no-ops
#      (what gpuspy costs without either: syscalls, scheduling); the uprobes' floor, an empty
#      uprobe session program on the same operators (bench/empty_probes --ops);
#      torch.profiler(activities=[CPU]) around the loop;
#  (b) time until each has its operator table: torch.profiler from the loop's end to
#      key_averages().table() printed; gpuspy (in-process) from its stop signal to `gpuspy
#      report --report ops` printed;
#  (a2) an untraced process's cost: the loop, not traced, while gpuspy records another torch
#      process (idle) with uprobes on the operators, which are attached to libtorch's file (every
#      process that maps it takes their trap, and the program leaves at its first test), and
#      with its in-process observer (nothing attached to libtorch);
#  (c) gpuspy attach time: from starting `gpuspy record -p` to its "gpuspy: recording" line
#      (probes live), with torch already loaded;
#  (d) per-event cost of Python stack capture against an empty probe on the same hook, at
#      Python stack depths 10, 30 and 60: bench/py_stack_cost.sh, with CALLS calls per run;
#  (e) whether gpuspy's self CPU times rank the operators as torch.profiler's do: gpuspy's
#      top 3 by self CPU (first attached run) and their ranks among the aten:: rows of
#      torch.profiler's key_averages() of its own run, sorted by self CPU (separate runs, and
#      the probes add 1-2 us per call: a figure to read, which the tests no longer assert).
# Each figure is the best of REPEATS runs; ratios are to the untraced loop of the same run.
# usage: bench/ops_bench.sh BUILD_DIR [ITERS] [REPEATS] [CALLS]     (as root; PYTHON: a
#        python3 with torch, default /usr/bin/python3.11)
set -eu
build=${1:-build}
iters=${2:-200}
repeats=${3:-3}
calls=${4:-100000}
py=${PYTHON:-/usr/bin/python3.11}
gpuspy=$build/gpuspy
loop=$(dirname "$0")/torch_loop.py
work=$(mktemp -d)
bench_name=ops_bench
. "$(dirname "$0")/lib.sh"
other_pid=
stop_other() {
	if [ -n "$other_pid" ]; then
		kill "$other_pid" 2> /dev/null || true
		wait "$other_pid" 2> /dev/null || true
		other_pid=
	fi
}
trap 'stop_other; bench_cleanup' EXIT

[ -x "$gpuspy" ] || { echo "ops_bench: $gpuspy not found: make BUILD=$build" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "ops_bench: must run as root" >&2; exit 1; }
"$py" -c 'import torch' 2> /dev/null || { echo "ops_bench: $py has no torch (set PYTHON)" >&2; exit 1; }

# One run of the loop with gpuspy attached by -p once it is warm; sets iter_us, attach_ms,
# table_ms (stop signal to `gpuspy report --report ops` printed) and op_calls.
run_attached() { # GPUSPY-OPTIONS...
	loop_start
	t0=$(now_ns)
	rec_start "$work/g.gpuspy" "$loop_pid" "$@"
	t1=$(now_ns)
	loop_go
	t2=$(now_ns)
	rec_stop
	op_calls=0
	if "$gpuspy" report "$work/g.gpuspy" --report ops > "$work/table.txt" 2> "$work/r.err"; then
		t3=$(now_ns)
		table_ms=$(((t3 - t2) / 1000000))
		op_calls=$("$gpuspy" report "$work/g.gpuspy" --report ops --format json |
			sed -n 's/.*"calls": *\([0-9]*\).*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
	else
		table_ms=NA
	fi
	loop_end
	attach_ms=$(((t1 - t0) / 1000000))
}

# One run of the loop, untraced, while gpuspy records another (idle) torch process with
# GPUSPY-OPTIONS: sets iter_us.
run_untraced() { # GPUSPY-OPTIONS...
	"$py" -c 'import time, torch; print("READY", flush=True); time.sleep(3600)' \
		> "$work/other.out" 2>&1 &
	other_pid=$!
	wait_line "$work/other.out" READY 60 "$other_pid" || bench_fail "the other torch process did not start"
	loop_start
	rec_start "$work/o.gpuspy" "$other_pid" "$@"
	loop_go
	rec_stop
	loop_end
	stop_other
}

# One run of the loop with the floor attached to the operators of its torch libraries: sets
# iter_us.
run_floor() {
	loop_start
	floor_start --ops $(torch_libs "$loop_pid")
	loop_go
	floor_stop
	loop_end
}

echo "machine: $(nproc) CPUs, kernel $(uname -r), $("$py" -c 'import torch; print("torch", torch.__version__)'), $iters iterations, best of $repeats"

plain='' prof='' prof_table='' ops='' ops_attach='' ops_table=''
nopy='' nopy_attach='' floor='' floor_attach='' empty=''
inproc='' inproc_attach='' inproc_table='' inproc_nopy='' untraced_up='' untraced_ip=''
seen_calls=0 inproc_calls=0
r=0
while [ $r -lt "$repeats" ]; do
	"$py" "$loop" --iters "$iters" > "$work/p.out"
	plain=$(min "$(field median < "$work/p.out")" "$plain")
	"$py" "$loop" --iters "$iters" --mode profiler > "$work/t.out" 2> "$work/t.err"
	prof=$(min "$(field median < "$work/t.out")" "$prof")
	prof_table=$(min "$(field TABLE_MS < "$work/t.out")" "$prof_table")
	run_attached --ops inprocess
	inproc=$(min "$iter_us" "$inproc")
	inproc_attach=$(min "$attach_ms" "$inproc_attach")
	[ "$table_ms" = NA ] || inproc_table=$(min "$table_ms" "$inproc_table")
	inproc_calls=$op_calls
	run_attached --ops inprocess --no-python
	inproc_nopy=$(min "$iter_us" "$inproc_nopy")
	run_attached --ops uprobes
	if [ $r -eq 0 ] && [ "$table_ms" != NA ]; then
		"$gpuspy" report "$work/g.gpuspy" --report ops --sort self_cpu_time_total --limit 3 \
			--format json | sed -n 's/.*"name": *"\([^"]*\)".*/\1/p' > "$work/gpuspy_top"
		# torch_loop.py prints key_averages().table(sort_by="self_cpu_time_total") to stderr
		awk '$1 ~ /^aten::/ { print $1 }' "$work/t.err" > "$work/torch_rank"
	fi
	ops=$(min "$iter_us" "$ops")
	ops_attach=$(min "$attach_ms" "$ops_attach")
	[ "$table_ms" = NA ] || ops_table=$(min "$table_ms" "$ops_table")
	seen_calls=$op_calls
	run_attached --ops uprobes --no-python
	nopy=$(min "$iter_us" "$nopy")
	nopy_attach=$(min "$attach_ms" "$nopy_attach")
	run_attached --no-python --no-ops
	floor=$(min "$iter_us" "$floor")
	floor_attach=$(min "$attach_ms" "$floor_attach")
	run_floor
	empty=$(min "$iter_us" "$empty")
	run_untraced --ops uprobes --no-python
	untraced_up=$(min "$iter_us" "$untraced_up")
	run_untraced --ops inprocess --no-python
	untraced_ip=$(min "$iter_us" "$untraced_ip")
	r=$((r + 1))
done

awk -v p="$plain" -v t="$prof" -v g="$ops" -v n="$nopy" -v f="$floor" -v c="$seen_calls" -v it="$iters" \
	-v pt="$prof_table" -v gt="${ops_table:-NA}" -v ga="$ops_attach" -v na="$nopy_attach" \
	-v fa="$floor_attach" -v e="$empty" -v ip="$inproc" -v ipn="$inproc_nopy" \
	-v ipt="${inproc_table:-NA}" -v ipa="$inproc_attach" -v ic="$inproc_calls" \
	-v uu="$untraced_up" -v ui="$untraced_ip" 'BEGIN {
	opi = c / it
	ipi = ic / it
	printf "(a) median time per training iteration (%.0f aten operator calls per iteration seen by the uprobes, %.0f ranges by the in-process observer)\n", opi, ipi
	printf "  untraced:                                   %8.1f us\n", p
	printf "  torch.profiler(activities=[CPU]):           %8.1f us  %.3fx\n", t, t / p
	printf "  gpuspy --ops inprocess (+ Python stacks):   %8.1f us  %.3fx\n", ip, ip / p
	printf "  gpuspy --ops inprocess --no-python:         %8.1f us  %.3fx\n", ipn, ipn / p
	printf "  gpuspy --ops uprobes (+ Python stacks):     %8.1f us  %.3fx", g, g / p
	if (opi > 0) printf "  +%.2f us per operator call", (g - p) / opi
	printf "\n"
	printf "  gpuspy --ops uprobes --no-python:           %8.1f us  %.3fx", n, n / p
	if (opi > 0) printf "  +%.2f us per operator call", (n - p) / opi
	printf "\n"
	printf "  gpuspy record -p --no-python --no-ops:      %8.1f us  %.3fx\n", f, f / p
	printf "  floor: empty session probes on the operators: %6.1f us  %.3fx", e, e / p
	if (opi > 0) printf "  +%.2f us per operator call", (e - p) / opi
	printf "\n"
	if (e > p && opi > 0)
		printf "  gpuspy added cost / floor added cost: %.2fx (--ops uprobes), %.2fx (--ops uprobes --no-python)\n", \
			(g - p) / (e - p), (n - p) / (e - p)
	printf "(a2) the same loop untraced, while gpuspy records another torch process\n"
	printf "  another with --ops uprobes --no-python:     %8.1f us  %.3fx", uu, uu / p
	if (opi > 0) printf "  +%.2f us per operator call", (uu - p) / opi
	if (e > p) printf "  (%.2fx the floor added cost)", (uu - p) / (e - p)
	printf "\n"
	printf "  another with --ops inprocess --no-python:   %8.1f us  %.3fx\n", ui, ui / p
	printf "(b) time until the operator table is printed (%d iterations recorded)\n", it
	printf "  torch.profiler, loop end to key_averages().table(): %8.0f ms (%.2f ms per iteration)\n", pt, pt / it
	if (ipt == "NA")
		printf "  gpuspy --ops inprocess, stop signal to report:      no ops report\n"
	else
		printf "  gpuspy --ops inprocess, stop signal to report:      %8.0f ms (%.2fx sooner)\n", ipt, pt / ipt
	if (gt == "NA")
		printf "  gpuspy --ops uprobes, stop signal to report:        no ops report\n"
	else
		printf "  gpuspy --ops uprobes, stop signal to report:        %8.0f ms (%.2fx sooner)\n", gt, pt / gt
	printf "(c) gpuspy attach, start to probes live, torch loaded\n"
	printf "  --ops inprocess (observer loaded and on, Python stacks): %5d ms\n", ipa
	printf "  --ops uprobes (ops + Python stacks):                     %5d ms\n", ga
	printf "  --ops uprobes --no-python:                               %5d ms\n", na
	printf "  --no-python --no-ops:                                    %5d ms\n", fa
}'

echo "(d) Python stack capture, per event"
PYTHON=$py sh "$(dirname "$0")/py_stack_cost.sh" "$build" "$calls" "$repeats"

echo "(e) gpuspy's top 3 operators by self CPU time, ranked among torch.profiler's aten:: rows"
if [ -s "$work/gpuspy_top" ]; then
	while read -r op; do
		rank=$(awk -v op="$op" '$0 == op { print NR; exit }' "$work/torch_rank")
		printf '  %-28s torch.profiler rank %s of %s\n' "$op" "${rank:-none}" \
			"$(wc -l < "$work/torch_rank" | tr -d ' ')"
	done < "$work/gpuspy_top"
else
	echo "  no ops report"
fi
