#!/bin/sh
# The syscall hooks' own cost per run, from the kernel's BPF statistics: the timer floor
# (empty_probes --timer --syscalls) and gpuspy record's osrt_sys_enter / osrt_sys_exit, each
# over one syscall_bench run, round after round. Steadier than `make bench`'s syscall row, which
# is a small difference of two noisy times; it leaves out the tracepoint dispatch both pay.
# Figures include bpf_stats' own two clock reads per run.
#
# usage: bench/syscall_prog_cost.sh BUILD_DIR [ROUNDS [ITERATIONS [GPUSPY...]]]   (as root)
#   GPUSPY: gpuspy binaries to compare in the same rounds (default BUILD_DIR/gpuspy)
#   prints a line per configuration and round: ns per run of each program and their sum
set -eu
build=${1:?usage: bench/syscall_prog_cost.sh BUILD_DIR [ROUNDS [ITERATIONS [GPUSPY...]]]}
rounds=${2:-5}
iters=${3:-300000}
if [ $# -gt 3 ]; then
	shift 3
else
	set -- "$build/gpuspy"
fi
work=$(mktemp -d)
floor=
[ "$(sysctl -n kernel.bpf_stats_enabled)" = 0 ] || { echo "bpf_stats is on: another measurement?" >&2; exit 1; }
trap '[ -z "$floor" ] || kill "$floor" 2> /dev/null; sysctl -qw kernel.bpf_stats_enabled=0; rm -rf "$work"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# per_run LABEL PROGS_JSON: the programs of this run, the largest run count of each name (other
# gpuspy sessions on the host load programs of the same names)
per_run() {
	python3 - "$@" << 'PY'
import json, sys
best = {}
for p in json.load(open(sys.argv[2])):
    n, c = p.get("name", ""), p.get("run_cnt", 0)
    if n in ("timer_sys_enter", "timer_sys_exit", "osrt_sys_enter", "osrt_sys_exit") and c > best.get(n, (0,))[0]:
        best[n] = (c, p["run_time_ns"] / c)
cols = " ".join("%s=%.1f" % (n, v[1]) for n, v in sorted(best.items()))
print("%-28s %s sum=%.1f ns/syscall" % (sys.argv[1], cols, sum(v[1] for v in best.values())))
PY
}

for r in $(seq "$rounds"); do
	"$build/bench/empty_probes" --timer --syscalls 2> "$work/floor.err" &
	floor=$!
	until grep -q "attached" "$work/floor.err"; do sleep 0.05; done
	"$build/bench/syscall_bench" "$iters" > /dev/null
	bpftool prog show -j > "$work/progs.json"
	kill "$floor"
	wait "$floor" 2> /dev/null || true
	floor=
	per_run "round $r timer floor" "$work/progs.json"
	for g in "$@"; do
		# the statistics are read inside the recording, before gpuspy unloads its programs
		"$g" record -q -f -o "$work/t.gpuspy" -- sh -c \
			"'$build/bench/syscall_bench' $iters > /dev/null; bpftool prog show -j > '$work/progs.json'"
		per_run "round $r $g" "$work/progs.json"
	done
done
