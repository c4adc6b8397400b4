#!/usr/bin/env bats
# Process churn on the real kernel: processes that exit must leave nothing behind that fills a
# BPF map or grows the recorder, so a fork loop, a shell loop or CUDA programs run one after
# another keep exact counts at default settings (loader/record/record_exit.h, docs/ARCHITECTURE.md
# "Process churn").
# bats file_tags=bpf,churn

load helpers
bats_require_minimum_version 1.5.0

FC=$BUILD/fakecuda
TGT=$BUILD/targets/cuda

setup() {
	require_bpf
	require_cmd jq
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

# The max_entries of a map defined in bpf/common.bpf.h.
map_entries() { # NAME
	awk -v name="$1" '/^struct \{/ { n = "" }
		/max_entries/ { gsub(/[^0-9]/, "", $0); n = $0 }
		$0 ~ "} " name " SEC" { print n; exit }' "$ROOT/bpf/common.bpf.h"
}

# Every loss counter of a trace is zero (the report prints them all, zeros included).
no_losses() { # TRACE
	"$GPUSPY" report "$1" --report losses --format json |
		jq -e 'length > 0 and ([.[].lost] | add) == 0'
}

# The last "released the state of ..." line of a -v recording, as JSON:
# {"so_far": N, "python": N, "cuda": N, "cupti": N, "operators": N}
last_release() { # STDERR_FILE
	grep 'released the state of' "$1" | tail -1 |
		sed -E 's/.* ([0-9]+) so far; per-process entries kept: python ([0-9]+), CUDA ([0-9]+), CUPTI ([0-9]+), operators ([0-9]+).*/{"so_far":\1,"python":\2,"cuda":\3,"cupti":\4,"operators":\5}/'
}

@test "a python process forks more children than py_procs holds: the last child's stack is still captured" {
	[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"
	local max n
	max=$(map_entries py_procs)
	[ "$max" -gt 0 ]
	n=$((max + 1000))
	cat > "$WORK/forker.py" <<'EOF'
import os, sys, time

def final_sleeper():
    time.sleep(0.2)

for _ in range(int(sys.argv[1])):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
pid = os.fork()
if pid == 0:
    final_sleeper()  # and gone at once: its code objects are read from this parent
    os._exit(0)
os.waitpid(pid, 0)
print("FINAL", pid, flush=True)
time.sleep(1)
EOF
	run "$GPUSPY" record -f -o "$WORK/t.gpuspy" -- /usr/bin/python3.11 "$WORK/forker.py" "$n"
	echo "$output" | tail -5
	[ "$status" -eq 0 ]
	local final
	final=$(echo "$output" | sed -n 's/^FINAL \([0-9]*\)$/\1/p')
	[ -n "$final" ]
	# the n + 1 children are all there, each followed
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes --format json |
		jq -e --argjson n "$n" '[.[] | select(.ppid > 0)] | length == $n + 1'
	"$GPUSPY" report "$WORK/t.gpuspy" --report python_stacks --format json |
		jq -e --argjson pid "$final" \
			'[.[] | select(.pid == $pid and (.frames | startswith("final_sleeper (")))] | length >= 1'
	no_losses "$WORK/t.gpuspy"
}

@test "a shell loop of 3000 processes: every one recorded, the recorder's per-process tables stay small" {
	run "$GPUSPY" record -v -f -o "$WORK/t.gpuspy" -- \
		sh -c 'i=0; while [ $i -lt 3000 ]; do /bin/true; i=$((i + 1)); done; sleep 2.5'
	printf '%s\n' "$output" > "$WORK/err"
	grep 'released the state of' "$WORK/err" | tail -3
	[ "$status" -eq 0 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes --format json |
		jq -e '[.[] | select(.name == "true" and .exit == "0")] | length == 3000'
	no_losses "$WORK/t.gpuspy"
	# released in batches while it ran, a second or two after each exit (the sleep's exit
	# releases the last ones); what is kept follows the processes alive, not the 3000 seen
	last_release "$WORK/err" | jq -e '.so_far >= 3000 and .python <= 200 and .cuda == 0 and
		.cupti == 0 and .operators == 0'
}

@test "80 CUDA programs run one after another: every call and GPU kernel of each counted" {
	[ -e "$FC/libcudart.so.13" ] && [ -e "$TGT/launch_bench" ] || skip "run 'make fakecuda' first"
	[ -e "$BUILD/libgpuspy_cupti.so" ] || skip "the CUPTI bridge was not built (no CUPTI headers)"
	local runs=80
	# launch_bench 10: a warm-up launch and 10 more, a stream sync after each part
	run "$GPUSPY" record -v -f -o "$WORK/t.gpuspy" -- env LD_LIBRARY_PATH="$FC" sh -c \
		"for i in \$(seq $runs); do '$TGT/launch_bench' 10 > /dev/null || exit 1; sleep 0.05; done
		sleep 2.5"
	printf '%s\n' "$output" > "$WORK/err"
	grep 'released the state of' "$WORK/err" | tail -3
	[ "$status" -eq 0 ]
	[ "$(grep -c 'gpuspy: CUPTI bridge in pid .*: turned on' "$WORK/err")" -eq "$runs" ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_api_sum,cuda_gpu_kern_sum,gpu_mode \
		--format json > "$WORK/t.json"
	jq -e --argjson n "$runs" '
		([.cuda_api_sum[] | {(.name): .calls}] | add) as $api |
		$api["__cudaLaunchKernel"] == 11 * $n and $api["cudaStreamSynchronize"] == 2 * $n and
		$api["__cudaRegisterFunction"] == 2 * $n and
		([.cuda_gpu_kern_sum[] | select(.name == "bench_kernel()") | .instances] | add) == 11 * $n and
		(.gpu_mode | length) == $n and all(.gpu_mode[]; .mode == "cupti")' "$WORK/t.json"
	run "$GPUSPY" report "$WORK/t.gpuspy" --report gpu_unmatched
	[[ "$output" == *"gpu unmatched: 0 gpu records without api record, 0 api records without uprobe span, 0 launches without gpu record"* ]]
	no_losses "$WORK/t.gpuspy"
	# each exited program's bridge probe was detached and its entries dropped while it ran (the
	# sleep's exit releases the last ones)
	last_release "$WORK/err" | jq -e --argjson n "$runs" '.so_far >= 2 * $n and .python <= 200 and
		.cuda == 0 and .cupti == 0 and .operators == 0'
}
