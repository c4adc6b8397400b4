#!/usr/bin/env bats
# `gpuspy serve`, scraped by a real Prometheus (Debian's) on loopback: series per process,
# container, user and device that match the simulated-GPU workloads' own counts
# (tests/targets/cuda/cuda_loop.cu: "go N" = N launches and N 4096-byte host-to-device
# copies), series that outlive an exited process for the grace period and then go, bounded
# memory under process churn, and an HTTP side no client can stall.
# bats file_tags=bpf,cuda,live,prometheus

load helpers
load lib/cgroups
load lib/prometheus

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
	for p in "${PIDS[@]}" $SERVE_PID; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
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
	# its set-up launched once more than the batch
	sleep 1
	metrics > "$WORK/m1"
	grep -q "^gpuspy_process_cuda_launches_total{pid=\"$A\",.*} 13$" "$WORK/m1"
	grep -q '^gpuspy_container_cuda_launches_total{container="docker:0123456789ab"} 13$' "$WORK/m1"
	# past the grace period: the process is gone, its container still has what it counted
	while [ $(( ($(date +%s%N) - exited) / 1000000 )) -lt 4500 ]; do sleep 0.2; done
	metrics > "$WORK/m2"
	! grep -q "pid=\"$A\"" "$WORK/m2"
	grep -q '^gpuspy_container_cuda_launches_total{container="docker:0123456789ab"} 13$' "$WORK/m2"
}

@test "serve: at most --max-series processes have series; the rest count under pid=\"other\", which never goes down" {
	start_serve --interval 300ms --max-series 3 --grace 2s
	for i in 1 2 3; do
		m=$(metrics)
		n=$(grep -c '^gpuspy_process_info{' <<<"$m" || true)
		[ "$n" -le 3 ]
		grep -q '^gpuspy_process_series{max="3"} [0-3]$' <<<"$m"
		other=$(grep '^gpuspy_process_syscalls_total{pid="other".*class="file"}' <<<"$m" | awk '{print $2}')
		[ -z "${prev:-}" ] || [ "$(echo "$other >= $prev" | bc -l 2>/dev/null || python3 -c "print(int($other >= $prev))")" = 1 ]
		prev=$other
		sleep 0.5
	done
	[ "$prev" != 0 ]
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

@test "serve: malformed requests, a flood of clients and clients that never read or trickle do not stop collection or other scrapes" {
	clients="python3 $ROOT/tests/lib/http_clients.py"
	export HTTP_MARK="gpuspy_collections_total "
	start_serve --interval 300ms --max-clients 16 --no-inject
	before=$(metrics | awk '/^gpuspy_collections_total/ {print $2}')
	$clients malformed "$SERVE_ADDR"
	$clients flood "$SERVE_ADDR" 100
	$clients stuck "$SERVE_ADDR" > "$WORK/stuck.out" 2>&1 3>&- &
	PIDS+=($!)
	$clients slowloris "$SERVE_ADDR" > "$WORK/slow.out" 2>&1 3>&- &
	PIDS+=($!)
	wait_for_line "$WORK/stuck.out" "stuck sent"
	# meanwhile, every scrape is answered within 2 s and the values keep being refreshed
	$clients get "$SERVE_ADDR" 10 2
	sleep 1
	after=$(metrics | awk '/^gpuspy_collections_total/ {print $2}')
	[ "$after" -gt $((before + 3)) ]
	metrics | grep -q '^gpuspy_http_requests_total{outcome="bad"} [1-9]'
	metrics | grep -q '^gpuspy_http_requests_total{outcome="rejected"} '
	kill -0 "$SERVE_PID"
}

@test "serve soak (a minute of process churn): memory flat, no series of exited processes left" {
	run sh "$ROOT/bench/serve_soak.sh" "$BUILD" 50
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"verdict: bounded"* ]]
}
