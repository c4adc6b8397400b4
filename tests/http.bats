#!/usr/bin/env bats
# The HTTP server of `gpuspy serve` (loader/http_server.c) under tests/unit/http_driver, a stand-in
# collector that publishes a body every 100 ms and prints `tick N`: answers, malformed input,
# floods, clients that never read or crawl, a clean stop. The clients are curl and
# tests/lib/http_clients.py; every test also checks that the ticks went on.

load helpers
load lib/prometheus
bats_require_minimum_version 1.5.0

DRIVER=$BUILD/unit/http_driver
CLIENTS="python3 $ROOT/tests/lib/http_clients.py"

setup() {
	[ -x "$DRIVER" ] || {
		echo "missing $DRIVER: make $DRIVER" >&2
		return 1
	}
	require_cmd curl
	require_cmd python3
	WORK=$(mktemp -d)
	DPID=
	BGPIDS=()
}

teardown() {
	local p
	for p in "${BGPIDS[@]}" $DPID; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	prom_stop
	rm -rf "$WORK"
}

# Starts the driver on a port of the kernel's choosing; sets ADDR and URL.
start_driver() {
	"$DRIVER" --listen 127.0.0.1:0 "$@" >"$WORK/out" 2>"$WORK/err" 3>&- &
	DPID=$!
	wait_for_line "$WORK/out" '^listening on '
	ADDR=$(sed -n 's/^listening on //p' "$WORK/out")
	URL=http://$ADDR
}

# SIGTERM: the driver must print its statistics and exit 0 (under ASan: no leaks either).
stop_driver() {
	local rc=0
	kill -TERM "$DPID"
	wait "$DPID" || rc=$?
	DPID=
	if [ "$rc" -ne 0 ] || [ -s "$WORK/err" ]; then
		echo "driver exited $rc:" >&2
		cat "$WORK/err" >&2
		return 1
	fi
	grep -q '^stats ' "$WORK/out"
}

last_tick() {
	sed -n 's/^tick //p' "$WORK/out" | tail -1
}

# Waits for N more ticks than now: the collector is still going.
wait_ticks() { # N
	wait_for_line "$WORK/out" "^tick $(($(last_tick) + $1))\$"
}

stat_of() { # NAME: from the `stats` or `collector` line
	grep -E '^(stats|collector) ' "$WORK/out" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# The collector never paused near a timeout's length, whatever the clients did.
check_collector() {
	local gap
	gap=$(stat_of max_gap_ms)
	[ "$gap" -lt 600 ] || {
		echo "collector paused $gap ms" >&2
		return 1
	}
}

# bats test_tags=http
@test "http: /metrics, /, 404, 405, HEAD, keep-alive and pipelining" {
	start_driver --big 5000
	run -0 curl -sS -f -D "$WORK/headers" "$URL/metrics"
	[ "${#output}" -ge 4990 ] # $() drops the final newline
	[[ "$output" == "# HELP driver_ticks "*$'\n# TYPE driver_ticks counter\ndriver_ticks '* ]]
	grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$WORK/headers"
	grep -qi '^content-length: 5000' "$WORK/headers"
	run -0 curl -sS -f "$URL/?x=1"
	[[ "$output" == *'<a href="/metrics">'* ]]
	run -0 curl -sS -o /dev/null -w '%{http_code} %{content_type}' "$URL/"
	[ "$output" = "200 text/html; charset=utf-8" ]
	run -0 curl -sS -o /dev/null -w '%{http_code}' "$URL/nope"
	[ "$output" = 404 ]
	run -0 curl -sS -o /dev/null -D "$WORK/headers" -w '%{http_code}' -X POST "$URL/metrics"
	[ "$output" = 405 ]
	grep -qi '^allow: GET, HEAD' "$WORK/headers"
	run -0 $CLIENTS head "$ADDR" 5000
	run -0 $CLIENTS keepalive "$ADDR"
	# one connection for two URLs: curl reused it
	run -0 curl -sS -f -o /dev/null -o /dev/null -w '%{num_connects}\n' "$URL/metrics" "$URL/"
	[ "$output" = $'1\n0' ]
	wait_ticks 2
	stop_driver
	check_collector
	[ "$(stat_of not_found)" -ge 2 ]
	[ "$(stat_of ok)" -ge 10 ]
	[ "$(stat_of timeouts)" -eq 0 ]
}

# bats test_tags=http
@test "http: malformed requests get 400/413/431 or a close, and the server goes on" {
	start_driver --timeout-ms 1500
	run -0 $CLIENTS malformed "$ADDR"
	echo "$output"
	[[ "$output" == *"100 KiB header: 431"* ]]
	[[ "$output" == *"no version: 400"* ]]
	run -0 curl -sS -f --max-time 2 "$URL/metrics"
	[[ "$output" == *"driver_ticks "* ]]
	wait_ticks 2
	stop_driver
	check_collector
	[ "$(stat_of bad)" -ge 17 ]
}

# bats test_tags=http
@test "http: 200 clients at once each get a whole 200 or a 503" {
	start_driver --max-clients 32 --timeout-ms 5000
	t0=$(last_tick)
	run -0 $CLIENTS flood "$ADDR" 200
	echo "$output"
	[[ "$output" =~ flood\ ok=([0-9]+)\ busy=([0-9]+) ]]
	ok=${BASH_REMATCH[1]} busy=${BASH_REMATCH[2]}
	[ $((ok + busy)) -eq 200 ]
	[ "$ok" -ge 32 ]
	wait_for_line "$WORK/out" "^tick $((t0 + 3))\$"
	run -0 curl -sS -f --max-time 2 "$URL/metrics"
	stop_driver
	check_collector
	[ "$(stat_of rejected)" -eq "$busy" ]
	[ "$(stat_of timeouts)" -eq 0 ]
}

# bats test_tags=http
@test "http: a client that never reads an 8 MB body stalls nothing and is cut at the timeout" {
	start_driver --big 8000000 --timeout-ms 2000
	$CLIENTS stuck "$ADDR" >"$WORK/stuck" 2>&1 3>&- &
	BGPIDS+=($!)
	wait_for_line "$WORK/stuck" '^stuck sent'
	# while it sits there: other clients are answered at once, ticks go on
	t0=$(last_tick)
	run -0 $CLIENTS get "$ADDR" 3 0.5
	wait_for_line "$WORK/out" "^tick $((t0 + 5))\$"
	run -1 grep -q closed "$WORK/stuck"
	wait_for_line "$WORK/stuck" '^stuck closed'
	cat "$WORK/stuck"
	wait "${BGPIDS[0]}"
	[[ "$(cat "$WORK/stuck")" =~ after\ ([0-9]+)\.[0-9]+s,\ ([0-9]+)\ bytes ]]
	[ "${BASH_REMATCH[1]}" -ge 1 ] && [ "${BASH_REMATCH[1]}" -le 4 ]
	[ "${BASH_REMATCH[2]}" -lt 8000000 ]
	stop_driver
	check_collector
	[ "$(stat_of timeouts)" -eq 1 ]
}

# bats test_tags=http
@test "http: slowloris clients are closed at the timeout, others unaffected" {
	start_driver --timeout-ms 1500
	for i in 1 2 3; do
		$CLIENTS slowloris "$ADDR" >"$WORK/slow$i" 2>&1 3>&- &
		BGPIDS+=($!)
	done
	t0=$(last_tick)
	run -0 $CLIENTS get "$ADDR" 5 0.5
	wait_for_line "$WORK/out" "^tick $((t0 + 5))\$"
	for i in 1 2 3; do
		wait_for_line "$WORK/slow$i" '^slowloris closed'
		cat "$WORK/slow$i"
		[[ "$(cat "$WORK/slow$i")" =~ after\ ([0-9]+)\.([0-9]+)s ]]
		ms=$((BASH_REMATCH[1] * 1000 + 10#${BASH_REMATCH[2]} * 10))
		[ "$ms" -ge 1400 ] && [ "$ms" -le 3500 ]
	done
	wait "${BGPIDS[@]}"
	stop_driver
	check_collector
	[ "$(stat_of timeouts)" -eq 3 ]
}

# bats test_tags=http
@test "http: SIGTERM with connections open stops cleanly, stats printed, no leaks" {
	start_driver --big 8000000 --timeout-ms 60000
	$CLIENTS hold "$ADDR" >"$WORK/hold" 2>&1 3>&- &
	BGPIDS+=($!)
	$CLIENTS stuck "$ADDR" >"$WORK/stuck" 2>&1 3>&- &
	BGPIDS+=($!)
	wait_for_line "$WORK/hold" '^holding'
	wait_for_line "$WORK/stuck" '^stuck sent'
	wait_ticks 1
	stop_driver # exit 0, nothing on stderr: ASan's leak report would be there
	[[ "$(grep '^stats ' "$WORK/out")" =~ ^stats\ requests=[0-9]+\ ok=[0-9]+\ bad=[0-9]+\ rejected=[0-9]+\ timeouts=[0-9]+ ]]
	[ "$(stat_of requests)" -eq 2 ]
	# the server's connections went with it
	wait_for_line "$WORK/stuck" '^stuck closed'
}

# bats test_tags=http
@test "http: listen addresses: IPv6, all addresses, localhost, one in use, bad ones" {
	start_driver
	run -1 "$DRIVER" --listen "$ADDR"
	[ "$output" = "http_driver: cannot listen on $ADDR: Address already in use" ]
	run -1 "$DRIVER" --listen ::1:9478
	[[ "$output" == "http_driver: invalid listen address '::1:9478': expected "* ]]
	run -1 "$DRIVER" --listen 127.0.0.1:65536
	run -1 "$DRIVER" --listen 127.0.0.1
	stop_driver

	"$DRIVER" --listen :0 >"$WORK/out" 2>"$WORK/err" 3>&- &
	DPID=$!
	wait_for_line "$WORK/out" '^listening on '
	port=$(sed -n 's/^listening on .*://p' "$WORK/out")
	run -0 curl -sS -f --max-time 2 "http://127.0.0.1:$port/metrics"
	if [ -e /proc/net/if_inet6 ] && grep -q ' lo$' /proc/net/if_inet6; then
		grep -q '^listening on \[::\]:' "$WORK/out"
		run -0 curl -sS -f --max-time 2 "http://[::1]:$port/metrics"
	fi
	stop_driver

	"$DRIVER" --listen localhost:0 >"$WORK/out" 2>"$WORK/err" 3>&- &
	DPID=$!
	wait_for_line "$WORK/out" '^listening on '
	grep -Eq '^listening on (127\.0\.0\.1|\[::1\]):[0-9]+$' "$WORK/out"
	stop_driver
}

# bats test_tags=http,prometheus
@test "http: a real Prometheus scrapes the driver over keep-alive" {
	require_prometheus
	start_driver --timeout-ms 5000
	prom_start "$ADDR" 1s
	prom_wait_scraped 2
	run -0 prom_value 'driver_ticks{job="gpuspy"}'
	[ "$output" -ge 1 ]
	stop_driver
	check_collector
	[ "$(stat_of ok)" -ge 2 ]
	[ "$(stat_of bad)" -eq 0 ]
}
