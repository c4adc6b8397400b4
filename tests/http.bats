#!/usr/bin/env bats
# The HTTP server of `gpuspy serve` (loader/live/http_server.c, on libmicrohttpd) under
# tests/unit/http_driver, a stand-in collector that publishes a body every 100 ms and prints
# `tick N`: answers, malformed input, floods, crowds of slow or idle connections from one
# address, clients that never read or crawl, a clean stop. The clients are curl and
# tests/lib/http_clients.py; the tests check that the ticks go on while clients misbehave.

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

# Starts `http_clients.py crowd` in the background: N connections from 127.0.0.2 that never
# finish a request (MODE slow: a byte a second; idle: nothing), reopened when closed.
start_crowd() { # N MODE
	$CLIENTS crowd "$ADDR" "$1" "$2" >"$WORK/crowd" 2>&1 3>&- &
	BGPIDS+=($!)
	wait_for_line "$WORK/crowd" "^crowd $2: $1 connections"
}

# 10 ordinary scrapes from 127.0.0.1 while the crowd is there: at least 9 get their metrics,
# the collector ticks on meanwhile, and the crowd was still at it when they were done.
scrapes_get_through() {
	local t0
	t0=$(last_tick)
	run -0 $CLIENTS scrape "$ADDR" 10
	echo "$output"
	[[ "$output" =~ scrape\ ok=([0-9]+)\ of\ 10 ]]
	[ "${BASH_REMATCH[1]}" -ge 9 ]
	wait_for_line "$WORK/out" "^tick $((t0 + 3))\$"
	kill -0 "${BGPIDS[0]}"
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
	[ "$(stat_of not_found)" -ge 2 ]
	[ "$(stat_of ok)" -ge 10 ]
	[ "$(stat_of timeouts)" -eq 0 ]
}

# bats test_tags=http
@test "http: malformed requests get their 4xx/5xx and a close, each counted, and the server goes on" {
	start_driver
	run -0 $CLIENTS malformed "$ADDR"
	echo "$output"
	[[ "$output" == *"100 KiB header: 431"* ]]
	[[ "$output" == *"no version: 400"* ]]
	[[ "$output" == *"HTTP/1.1 without Host: 400"* ]]
	[[ "$output" =~ malformed\ answered=([0-9]+) ]]
	answered=${BASH_REMATCH[1]}
	run -0 curl -sS -f --max-time 5 "$URL/metrics"
	[[ "$output" == *"driver_ticks "* ]]
	wait_ticks 2
	stop_driver
	# libmicrohttpd's own answers (told through its log) and gpuspy's, each once
	[ "$(stat_of bad)" -eq "$answered" ]
	[ "$(stat_of ok)" -eq 7 ] # the three tolerated requests, a GET after each, the curl
}

# bats test_tags=http
@test "http: 200 clients at once from one address each get a whole 200 or a close, counted as rejected" {
	start_driver --max-clients 32 --timeout-ms 5000
	t0=$(last_tick)
	run -0 $CLIENTS flood "$ADDR" 200
	echo "$output"
	[[ "$output" =~ flood\ ok=([0-9]+)\ busy=0\ refused=([0-9]+) ]]
	ok=${BASH_REMATCH[1]} refused=${BASH_REMATCH[2]}
	[ $((ok + refused)) -eq 200 ]
	# a quarter of 32 at once from one address: served, and more as they finish
	[ "$ok" -ge 8 ]
	[ "$refused" -ge 1 ]
	wait_for_line "$WORK/out" "^tick $((t0 + 3))\$"
	run -0 curl -sS -f --max-time 5 "$URL/metrics"
	stop_driver
	[ "$(stat_of rejected)" -eq "$refused" ]
	[ "$(stat_of ok)" -eq $((ok + 1)) ]
	[ "$(stat_of timeouts)" -eq 0 ]
}

# bats test_tags=http
@test "http: 200 slow connections from one address do not starve scrapes from another" {
	start_driver
	start_crowd 200 slow
	wait_ticks 3 # the server has taken them in
	scrapes_get_through
	stop_driver
	# what the crowd got: its address's quarter of the 64, the rest closed at once
	[ "$(stat_of rejected)" -ge 184 ]
}

# bats test_tags=http
@test "http: 64 idle connections from one address do not starve scrapes from another" {
	start_driver
	start_crowd 64 idle
	wait_ticks 3
	scrapes_get_through
	stop_driver
	[ "$(stat_of rejected)" -ge 48 ]
}

# bats test_tags=http
@test "http: /metrics before the first publish is 503 with Retry-After, then 200" {
	"$DRIVER" --listen 127.0.0.1:0 --wait-usr1 >"$WORK/out" 2>"$WORK/err" 3>&- &
	DPID=$!
	wait_for_line "$WORK/out" '^listening on '
	ADDR=$(sed -n 's/^listening on //p' "$WORK/out")
	URL=http://$ADDR
	run -0 curl -sS -D "$WORK/headers" -o "$WORK/body" -w '%{http_code}' "$URL/metrics"
	[ "$output" = 503 ]
	grep -qi '^retry-after: 1' "$WORK/headers"
	[ "$(cat "$WORK/body")" = "no metrics collected yet" ]
	run -0 curl -sS -I -o /dev/null -w '%{http_code}' "$URL/metrics"
	[ "$output" = 503 ]
	# the rest of the server does not wait for the collector
	run -0 curl -sS -f "$URL/"
	[[ "$output" == *'<a href="/metrics">'* ]]
	kill -USR1 "$DPID"
	wait_for_line "$WORK/out" '^tick 0$'
	run -0 curl -sS -f "$URL/metrics"
	[[ "$output" == *$'\ndriver_ticks '* ]]
	stop_driver
	[ "$(stat_of unavailable)" -eq 2 ]
	[ "$(stat_of ok)" -eq 2 ]
}

# bats test_tags=http
@test "http: a client that never reads an 8 MB body stalls nothing and is reset at the timeout" {
	start_driver --big 8000000 --timeout-ms 3000
	$CLIENTS stuck "$ADDR" >"$WORK/stuck" 2>&1 3>&- &
	BGPIDS+=($!)
	wait_for_line "$WORK/stuck" '^stuck sent'
	# while it sits there: other clients are answered, ticks go on
	t0=$(last_tick)
	run -0 $CLIENTS get "$ADDR" 3 10
	wait_for_line "$WORK/out" "^tick $((t0 + 3))\$"
	run -1 grep -q closed "$WORK/stuck"
	wait_for_line "$WORK/stuck" '^stuck closed'
	cat "$WORK/stuck"
	wait "${BGPIDS[0]}"
	[[ "$(cat "$WORK/stuck")" =~ after\ [0-9.]+s,\ ([0-9]+)\ bytes ]]
	[ "${BASH_REMATCH[1]}" -lt 8000000 ]
	stop_driver
	[ "$(stat_of timeouts)" -eq 1 ]
}

# bats test_tags=http
@test "http: slowloris clients are closed at the head deadline, others unaffected" {
	start_driver --head-timeout-ms 2000
	for i in 1 2 3; do
		$CLIENTS slowloris "$ADDR" >"$WORK/slow$i" 2>&1 3>&- &
		BGPIDS+=($!)
	done
	t0=$(last_tick)
	run -0 $CLIENTS get "$ADDR" 5 10
	wait_for_line "$WORK/out" "^tick $((t0 + 3))\$"
	# each is closed before its head is whole (the client fails if it gets to send it all)
	for i in 1 2 3; do
		wait_for_line "$WORK/slow$i" '^slowloris closed'
	done
	wait "${BGPIDS[@]}"
	stop_driver
	[ "$(stat_of timeouts)" -eq 3 ]
	[ "$(stat_of ok)" -eq 5 ]
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
	[ "$(stat_of timeouts)" -eq 0 ]
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
	[ "$(stat_of ok)" -ge 2 ]
	[ "$(stat_of bad)" -eq 0 ]
}

# bats test_tags=http,fuzz
@test "http: the request fuzz target survives a short run" {
	[ -x "$BUILD/fuzz_http" ] || skip "fuzz target not built (make $BUILD/fuzz_http)"
	run sh "$ROOT/tests/fuzz/run_http.sh" "$BUILD/fuzz_http" "${FUZZ_SECONDS:-30}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Done "*" runs in "* ]]
}
