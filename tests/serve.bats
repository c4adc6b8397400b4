#!/usr/bin/env bats
# `gpuspy serve`, scraped by a real Prometheus (Debian's) on loopback: series per process,
# container, user and device that match the simulated-GPU workloads' own counts
# (tests/targets/cuda/cuda_loop.cu: "go N" = N launches and N 4096-byte host-to-device
# copies), series that outlive an exited process for the grace period and then go, the
# cardinality limit, bounded memory under process churn, and an HTTP side no client can stall
# or starve.
# bats file_tags=bpf,cuda,live,prometheus

load helpers
load lib/cgroups
load lib/prometheus
bats_require_minimum_version 1.5.0

CLIENTS="python3 $ROOT/tests/lib/http_clients.py"

FC=$BUILD/fakecuda
TGT=$BUILD/targets/cuda

setup() {
	require_bpf
	require_prometheus
	[ -e "$FC/libcudart.so.13" ] && [ -e "$TGT/cuda_loop" ] || skip "run 'make fakecuda' first"
	WORK=$(mktemp -d)
	chmod 755 "$WORK"
	PIDS=()
	SERVE_PID=
}

teardown() {
	prom_stop
	stop_pids "${PIDS[@]}" $SERVE_PID
	cg_cleanup
	rm -rf "$WORK"
}

# Starts gpuspy serve on a free loopback port with extra options; sets SERVE_ADDR, SERVE_PID.
start_serve() { # [OPTION...]
	local port
	port=$(prom_free_port)
	SERVE_ADDR=127.0.0.1:$port
	"$GPUSPY" serve --listen "$SERVE_ADDR" "$@" > "$WORK/serve.out" 2> "$WORK/serve.err" 3>&- &
	SERVE_PID=$!
	wait_for_line "$WORK/serve.err" "gpuspy: collecting from"
}

metrics() {
	curl -sf "http://$SERVE_ADDR/metrics"
}

collections() {
	metrics | awk '$1 == "gpuspy_collections_total" {print $2}'
}

# Waits up to 30 s for N more collections than now: what happened before is in the next scrape.
wait_collections() { # N
	local c0 c i
	c0=$(collections)
	for i in $(seq 300); do
		c=$(collections) && [ "${c:-0}" -ge $((c0 + $1)) ] && return 0
		sleep 0.1
	done
	echo "collections stuck at $c (from $c0)" >&2
	return 1
}

# The value of the sample whose name and labels, as printed, match the regex SERIES in FILE.
value_of() { # FILE SERIES
	awk -v re="^$2 " '$0 ~ re {print $NF}' "$1"
}

# Waits up to 30 s for a PromQL query's value to be VALUE.
wait_for_value() { # PROMQL VALUE
	local i v
	for i in $(seq 60); do
		v=$(prom_value "$1" 2>/dev/null) && [ "$v" = "$2" ] && return 0
		sleep 0.5
	done
	echo "$1: '$v', expected '$2'" >&2
	return 1
}

@test "prometheus scrapes serve: launches and copy bytes per container, user and process match the workloads" {
	cg_setup
	cg_make "$CG_DOCKER"
	cg_make "$CG_POD"
	chmod 777 "$WORK"
	mkfifo "$WORK/a.ctl" "$WORK/b.ctl"
	exec 5<>"$WORK/a.ctl" 6<>"$WORK/b.ctl"
	cg_run "$CG_DOCKER" env LD_LIBRARY_PATH="$FC" "$TGT/cuda_loop" "$WORK/a.ready" \
		< "$WORK/a.ctl" > "$WORK/a.out" 2>&1 3>&- &
	A=$!
	PIDS+=("$A")
	cg_run "$CG_POD" setpriv --reuid=65534 --regid=65534 --clear-groups \
		env LD_LIBRARY_PATH="$FC" "$TGT/cuda_loop" "$WORK/b.ready" \
		< "$WORK/b.ctl" > "$WORK/b.out" 2>&1 3>&- &
	B=$!
	PIDS+=("$B")
	wait_for_file "$WORK/a.ready"
	wait_for_file "$WORK/b.ready"
	start_serve --interval 500ms --no-inject
	prom_start "$SERVE_ADDR"
	prom_wait_scraped 1
	echo "go 30" >&5
	echo "go 70" >&6
	wait_for_line "$WORK/a.out" "BATCH done"
	wait_for_line "$WORK/b.out" "BATCH done"
	wait_for_value 'gpuspy_container_cuda_launches_total{container="docker:0123456789ab"}' 30
	wait_for_value "gpuspy_container_cuda_launches_total{container=\"pod:$CG_POD_UID/fedcba987654\"}" 70
	wait_for_value 'gpuspy_container_cuda_copy_bytes_total{container="docker:0123456789ab",direction="htod"}' $((30 * 4096))
	wait_for_value "gpuspy_container_cuda_copy_bytes_total{container=\"pod:$CG_POD_UID/fedcba987654\",direction=\"htod\"}" $((70 * 4096))
	wait_for_value 'gpuspy_user_cuda_launches_total{user="nobody"}' 70
	# the process series carry the attribution as labels
	wait_for_value "gpuspy_process_cuda_launches_total{pid=\"$A\",comm=\"cuda_loop\",container=\"docker:0123456789ab\",user=\"root\"}" 30
	wait_for_value "gpuspy_process_cuda_launches_total{pid=\"$B\",user=\"nobody\"}" 70
	wait_for_value "gpuspy_process_info{pid=\"$B\",mode=\"uprobes\"}" 1
	# what Prometheus stored adds up over the containers as over the processes
	[ "$(prom_value 'sum(gpuspy_container_cuda_launches_total)')" = \
		"$(prom_value 'sum(gpuspy_process_cuda_launches_total)')" ]
	metrics | promtool check metrics
}

@test "serve, live probe set: an uprobe-only process's launches, API calls, errors and bytes are its own counts" {
	mkfifo "$WORK/a.ctl"
	exec 5<>"$WORK/a.ctl"
	start_serve --interval 300ms --no-inject
	env LD_LIBRARY_PATH="$FC" "$TGT/cuda_loop" "$WORK/a.ready" < "$WORK/a.ctl" > "$WORK/a.out" 2>&1 3>&- &
	A=$!
	PIDS+=("$A")
	wait_for_file "$WORK/a.ready"
	echo "go 30" >&5
	echo "more 20" >&5
	wait_for_line "$WORK/a.out" "MORE done"
	wait_collections 2
	metrics > "$WORK/m"
	# the program's own lines, its set-up included (serve watched it start): a line per call
	read -r calls errors launches htod memset < <(awk '
		/^(LAUNCH|LAUNCH_FAILED|MEMCPY|MEMCPY_FAILED|MEMSET|MEMSET_FAILED|ALLOC|FREE|SYNC) / { calls++ }
		/^[A-Z_]*_FAILED / || / ok=0$/ { errors++ }
		/^LAUNCH / { launches++ }
		/^MEMCPY kind=HtoD / { split($3, b, "="); htod += b[2] }
		/^MEMSET / { split($2, b, "="); memset += b[2] }
		END { print calls + 0, errors + 0, launches + 0, htod + 0, memset + 0 }' "$WORK/a.out")
	echo "own: calls=$calls errors=$errors launches=$launches htod=$htod memset=$memset"
	grep "pid=\"$A\"" "$WORK/m" | grep cuda_
	[ "$launches" -eq 31 ] && [ "$errors" -eq 20 ] # set-up's launch, the batch's, the failed frees
	s="[{]pid=\"$A\",[^}]*"
	[ "$(value_of "$WORK/m" "gpuspy_process_cuda_launches_total$s[}]")" = "$launches" ]
	[ "$(value_of "$WORK/m" "gpuspy_process_cuda_api_calls_total$s[}]")" = "$calls" ]
	[ "$(value_of "$WORK/m" "gpuspy_process_cuda_api_errors_total$s[}]")" = "$errors" ]
	[ "$(value_of "$WORK/m" "gpuspy_process_cuda_copy_bytes_total$s,direction=\"htod\"[}]")" = "$htod" ]
	[ "$(value_of "$WORK/m" "gpuspy_process_cuda_memset_bytes_total$s[}]")" = "$memset" ]
}

# The syscalls of class CLASS that serve counted for PID in FILE.
syscalls_of() { # FILE PID CLASS
	value_of "$1" "gpuspy_process_syscalls_total[{]pid=\"$2\",[^}]*,class=\"$3\"[}]"
}

@test "serve counts syscalls exactly without timing them; --syscall-time adds their time" {
	local sb=$BUILD/bench/syscall_bench opt p1 p2
	[ -x "$sb" ] || skip "build/bench/syscall_bench is not built (make bench)"
	for opt in "" --syscall-time; do
		: > "$WORK/serve.err" # start_serve must not find the last serve's line
		# series for every process: on a busy host these short ones could count as "other"
		start_serve --interval 300ms --no-inject --max-series 100000 $opt
		# the same program twice: start-up alike, then 1000 or 3000 x (getppid, read, write)
		"$sb" 1000 > /dev/null 3>&- &
		p1=$!
		wait "$p1"
		"$sb" 3000 > /dev/null 3>&- &
		p2=$!
		wait "$p2"
		wait_collections 2
		metrics > "$WORK/m"
		echo "${opt:-default}: file $(syscalls_of "$WORK/m" "$p1" file) $(syscalls_of "$WORK/m" "$p2" file), other $(syscalls_of "$WORK/m" "$p1" other) $(syscalls_of "$WORK/m" "$p2" other)"
		[ $(($(syscalls_of "$WORK/m" "$p2" file) - $(syscalls_of "$WORK/m" "$p1" file))) -eq 4000 ]
		[ $(($(syscalls_of "$WORK/m" "$p2" other) - $(syscalls_of "$WORK/m" "$p1" other))) -eq 2000 ]
		if [ -z "$opt" ]; then
			run ! grep -q syscall_seconds_total "$WORK/m"
		else
			grep -q "^gpuspy_process_syscall_seconds_total{pid=\"$p2\",.*class=\"file\"} [0-9.e-]*[1-9]" "$WORK/m"
		fi
		kill "$SERVE_PID"
		wait "$SERVE_PID" || true
		SERVE_PID=
	done
}

@test "serve: an exited process's series stay for the grace period, then go; its container keeps the counts" {
	cg_setup
	cg_make "$CG_DOCKER"
	mkfifo "$WORK/a.ctl"
	exec 5<>"$WORK/a.ctl"
	start_serve --interval 300ms --grace 3s --no-inject
	cg_run "$CG_DOCKER" env LD_LIBRARY_PATH="$FC" "$TGT/cuda_loop" "$WORK/a.ready" \
		< "$WORK/a.ctl" > "$WORK/a.out" 2>&1 3>&- &
	A=$!
	wait_for_file "$WORK/a.ready"
	echo "go 12" >&5
	wait_for_line "$WORK/a.out" "BATCH done"
	echo exit >&5
	wait "$A"
	exited=$(date +%s%N)
	# exited, within the grace period: still there, with its set-up launch and the batch
	wait_collections 2
	metrics > "$WORK/m1"
	grep -q "^gpuspy_process_cuda_launches_total{pid=\"$A\",.*} 13$" "$WORK/m1"
	grep -q '^gpuspy_container_cuda_launches_total{container="docker:0123456789ab"} 13$' "$WORK/m1"
	# past the grace period: the process is gone, its container still has what it counted
	while [ $(( ($(date +%s%N) - exited) / 1000000 )) -lt 4500 ]; do sleep 0.2; done
	metrics > "$WORK/m2"
	run ! grep -q "pid=\"$A\"" "$WORK/m2"
	grep -q '^gpuspy_container_cuda_launches_total{container="docker:0123456789ab"} 13$' "$WORK/m2"
	promtool check metrics < "$WORK/m2"
}

# Sum of every process's CUDA launches in FILE, "other" included.
launch_sum() { # FILE
	awk '$1 ~ /^gpuspy_process_cuda_launches_total[{]/ {n += $NF} END {print n + 0}' "$1"
}

@test "serve: at most --max-series processes have series; the rest count under pid=\"other\", exactly" {
	local i pid v0 v1 named=0 in_other=0 batch=(0 10 20 30 40 50)
	for i in 1 2 3 4 5; do
		mkfifo "$WORK/c$i.ctl"
		eval "exec $((4 + i))<>\"\$WORK/c$i.ctl\""
		env LD_LIBRARY_PATH="$FC" "$TGT/cuda_loop" "$WORK/c$i.ready" \
			< "$WORK/c$i.ctl" > "$WORK/c$i.out" 2>&1 3>&- &
		PIDS+=($!)
	done
	for i in 1 2 3 4 5; do
		wait_for_file "$WORK/c$i.ready"
	done
	start_serve --interval 300ms --max-series 3 --grace 60s --no-inject \
		-p "$(IFS=,; echo "${PIDS[*]}")"
	# one launch each first: all five are CUDA processes then, and the three with series of
	# their own keep them while they live
	for i in 1 2 3 4 5; do
		echo "go 1" >&$((4 + i))
		wait_for_line "$WORK/c$i.out" "BATCH done n=1"
	done
	for i in $(seq 100); do
		metrics > "$WORK/m0" && [ "$(launch_sum "$WORK/m0")" -eq 5 ] && break
		sleep 0.2
	done
	[ "$(launch_sum "$WORK/m0")" -eq 5 ]
	[ "$(grep -c '^gpuspy_process_info{' "$WORK/m0")" -eq 3 ]
	grep -q '^gpuspy_process_series{max="3"} 3$' "$WORK/m0"
	[ "$(value_of "$WORK/m0" 'gpuspy_process_cuda_launches_total[{]pid="other",[^}]*[}]')" -eq 2 ]
	for i in 1 2 3 4 5; do
		echo "go ${batch[i]}" >&$((4 + i))
		wait_for_line "$WORK/c$i.out" "BATCH done n=${batch[i]}"
	done
	wait_collections 2
	metrics > "$WORK/m1"
	# each process with series has exactly its own launches; "other" has the others' sum
	for i in 1 2 3 4 5; do
		pid=${PIDS[i - 1]}
		v0=$(value_of "$WORK/m0" "gpuspy_process_cuda_launches_total[{]pid=\"$pid\",[^}]*[}]")
		v1=$(value_of "$WORK/m1" "gpuspy_process_cuda_launches_total[{]pid=\"$pid\",[^}]*[}]")
		if [ -n "$v0" ]; then
			[ "$v0" -eq 1 ] && [ "$v1" -eq $((1 + batch[i])) ]
			named=$((named + 1))
		else
			[ -z "$v1" ]
			in_other=$((in_other + batch[i]))
		fi
	done
	[ "$named" -eq 3 ]
	[ "$in_other" -ge 30 ] # two of 10..50
	[ "$(value_of "$WORK/m1" 'gpuspy_process_cuda_launches_total[{]pid="other",[^}]*[}]')" -eq \
		$((2 + in_other)) ]
	[ "$(launch_sum "$WORK/m1")" -eq 155 ]
	promtool check metrics < "$WORK/m1"
}

@test "serve: a port in use or a bad address is refused with one line" {
	port=$(prom_free_port)
	python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(30)' "$port" 3>&- &
	PIDS+=($!)
	sleep 0.3
	run "$GPUSPY" serve --listen "127.0.0.1:$port"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "gpuspy: cannot listen on 127.0.0.1:$port"* ]]
	run "$GPUSPY" serve --listen nowhere
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	run "$GPUSPY" serve --max-series 0
	[ "$status" -eq 2 ]
}

@test "serve: --max-clients above the open-file limit is refused at start with one line" {
	# timeout: a serve that does not refuse would run on
	run bash -c 'ulimit -n 256 && exec timeout 20 "$1" serve --listen 127.0.0.1:0 --max-clients 1000' \
		_ "$GPUSPY"
	echo "$output"
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$output" = "gpuspy: --max-clients 1000 is above the open-file limit of 256 (ulimit -n)" ]
}

@test "serve: /metrics before the first collection is 503 with Retry-After, never a 200 without metrics" {
	local code n503=0 n200=0
	SERVE_ADDR=127.0.0.1:$(prom_free_port)
	"$GPUSPY" serve --listen "$SERVE_ADDR" --no-inject > "$WORK/serve.out" 2> "$WORK/serve.err" 3>&- &
	SERVE_PID=$!
	wait_for_line "$WORK/serve.err" "gpuspy: serving metrics on"
	# scrapes from the moment it listens until its first collection is out (the probes load
	# meanwhile)
	until grep -q "gpuspy: collecting from" "$WORK/serve.err"; do
		code=$(curl -sS -D "$WORK/h" -o "$WORK/b" -w '%{http_code}' "http://$SERVE_ADDR/metrics")
		case $code in
		503)
			grep -qi '^retry-after: 1' "$WORK/h"
			n503=$((n503 + 1))
			;;
		200)
			grep -q '^gpuspy_collections_total ' "$WORK/b"
			n200=$((n200 + 1))
			;;
		*)
			echo "answered $code" >&2
			false
			;;
		esac
		kill -0 "$SERVE_PID"
	done
	echo "503: $n503, 200: $n200"
	[ "$n503" -ge 1 ]
	run -0 metrics
	[[ "$output" == *$'\ngpuspy_collections_total '* ]]
}

@test "serve: 200 slow or 64 idle connections from one address do not starve scrapes from another" {
	local mode n
	export HTTP_MARK="gpuspy_collections_total "
	start_serve --interval 300ms --no-inject
	for mode in slow idle; do
		n=$([ "$mode" = slow ] && echo 200 || echo 64)
		$CLIENTS crowd "$SERVE_ADDR" "$n" "$mode" > "$WORK/crowd" 2>&1 3>&- &
		PIDS+=($!)
		wait_for_line "$WORK/crowd" "^crowd $mode: $n connections"
		wait_collections 3
		# 10 scrapes from 127.0.0.1 meanwhile: 9 or more get their metrics
		run -0 $CLIENTS scrape "$SERVE_ADDR" 10
		echo "$mode: $output"
		[[ "$output" =~ scrape\ ok=([0-9]+)\ of\ 10 ]]
		[ "${BASH_REMATCH[1]}" -ge 9 ]
		# collection went on, and the crowd was still at it
		wait_collections 3
		kill -0 "${PIDS[-1]}"
		kill "${PIDS[-1]}"
	done
	# what held them off: their address's quarter of the 64 slots, the rest refused
	metrics > "$WORK/m"
	[ "$(value_of "$WORK/m" 'gpuspy_http_requests_total[{]outcome="rejected"[}]')" -ge 184 ]
}

@test "serve: malformed requests, a flood of clients and clients that never read or trickle do not stop collection or other scrapes" {
	local answered refused
	export HTTP_MARK="gpuspy_collections_total "
	start_serve --interval 300ms --max-clients 32 --no-inject
	run -0 $CLIENTS malformed "$SERVE_ADDR"
	[[ "$output" =~ malformed\ answered=([0-9]+) ]]
	answered=${BASH_REMATCH[1]}
	# 100 at once from one address, 8 (a quarter of 32) served at a time: the rest refused
	run -0 $CLIENTS flood "$SERVE_ADDR" 100
	echo "$output"
	[[ "$output" =~ flood\ ok=[0-9]+\ busy=0\ refused=([0-9]+) ]]
	refused=${BASH_REMATCH[1]}
	[ "$refused" -ge 1 ]
	$CLIENTS stuck "$SERVE_ADDR" > "$WORK/stuck.out" 2>&1 3>&- &
	PIDS+=($!)
	$CLIENTS slowloris "$SERVE_ADDR" > "$WORK/slow.out" 2>&1 3>&- &
	PIDS+=($!)
	wait_for_line "$WORK/stuck.out" "stuck sent"
	# meanwhile, scrapes are answered and the values keep being refreshed
	run -0 $CLIENTS get "$SERVE_ADDR" 10 10
	wait_collections 3
	# the counters hold what the clients saw: each malformed request answered, each refusal
	metrics > "$WORK/m"
	promtool check metrics < "$WORK/m"
	[ "$(value_of "$WORK/m" 'gpuspy_http_requests_total[{]outcome="bad"[}]')" -eq "$answered" ]
	[ "$(value_of "$WORK/m" 'gpuspy_http_requests_total[{]outcome="rejected"[}]')" -eq "$refused" ]
	kill -0 "$SERVE_PID"
}

@test "serve soak (a minute of process churn): memory flat, no series of exited processes left" {
	run sh "$ROOT/bench/serve_soak.sh" "$BUILD" 50
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"verdict: bounded"* ]]
}

# utime + stime of PID, in seconds (/proc/PID/stat: fields 14 and 15 after the comm)
proc_cpu_s() { # PID
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}

@test "serve: a process's CPU seconds are its own, threads that exited included (BPF task iterator)" {
	mkfifo "$WORK/burn.ctl"
	exec 5<>"$WORK/burn.ctl"
	# on "go": a thread burns 0.6 s of its own CPU and exits, then the main thread 0.4 s
	python3 -c '
import sys, threading, time
def burn(s):
    end = time.thread_time() + s
    while time.thread_time() < end:
        pass
sys.stdin.readline()
t = threading.Thread(target=burn, args=(0.6,))
t.start()
t.join()
burn(0.4)
print("burnt", flush=True)
time.sleep(120)
' < "$WORK/burn.ctl" > "$WORK/burn.out" 3>&- &
	B=$!
	PIDS+=("$B")
	start_serve -p "$B" --interval 200ms --no-inject
	wait_collections 2
	before=$(proc_cpu_s "$B")
	echo go >&5
	wait_for_line "$WORK/burn.out" "burnt"
	after=$(proc_cpu_s "$B")
	wait_collections 2
	metrics > "$WORK/m"
	served=$(value_of "$WORK/m" "gpuspy_process_cpu_seconds_total[{]pid=\"$B\",[^}]*[}]")
	echo "served $served, /proc $before -> $after" >&2
	# what /proc counted meanwhile (clock ticks: 10 ms each end), the exited thread's included
	awk -v s="$served" -v b="$before" -v a="$after" \
		'BEGIN { d = s - (a - b); exit !(s >= 0.95 && d > -0.03 && d < 0.03) }'
}
