# shellcheck shell=bash
# A real Prometheus server for bats tests: it scrapes one target on loopback as job "gpuspy",
# so a test checks what Prometheus itself made of an exposition, not what we think it should.
#
#   load lib/prometheus
#   setup()    { require_prometheus; }
#   teardown() { prom_stop; }
#   @test ... { prom_start 127.0.0.1:$port; prom_wait_scraped; prom_value 'up{job="gpuspy"}'; }
#
# Call prom_start directly, not through `run`: it sets PROM_URL, PROM_PID and PROM_DIR in the
# test's shell. The server listens on a free port of 127.0.0.1 of its own, never on the 9090 of
# a system Prometheus that Debian's package may have started, and keeps its data in a temporary
# directory that prom_stop removes. Needs prometheus, curl and jq.

PROM_TIMEOUT=${PROM_TIMEOUT:-30}

require_prometheus() {
	local cmd
	for cmd in prometheus promtool curl jq python3; do
		command -v "$cmd" >/dev/null 2>&1 ||
			skip "needs $cmd (Debian: apt-get install prometheus curl jq python3)"
	done
}

# A TCP port that was free on 127.0.0.1 a moment ago. Another process may take it before the
# caller binds it, so prom_start retries on "address already in use".
prom_free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# Milliseconds of a Prometheus duration of one unit ("1s", "500ms", "2m").
_prom_ms() {
	[[ $1 =~ ^([0-9]+)(ms|s|m)$ ]] || return 1
	case ${BASH_REMATCH[2]} in
	ms) echo $((10#${BASH_REMATCH[1]})) ;;
	s) echo $((10#${BASH_REMATCH[1]} * 1000)) ;;
	m) echo $((10#${BASH_REMATCH[1]} * 60000)) ;;
	esac
}

_prom_write_config() { # FILE TARGET INTERVAL
	local interval_ms timeout_ms
	if ! interval_ms=$(_prom_ms "$3") || [ "$interval_ms" -le 0 ]; then
		echo "prom_start: scrape interval '$3' is not like 1s, 500ms or 2m" >&2
		return 1
	fi
	# Prometheus refuses a timeout above the interval; a slow scrape should fail, not overlap
	timeout_ms=$((interval_ms * 8 / 10))
	cat >"$1" <<EOF
global:
  scrape_interval: $3
  scrape_timeout: ${timeout_ms}ms
  evaluation_interval: $3
scrape_configs:
  - job_name: gpuspy
    scrape_interval: $3
    scrape_timeout: ${timeout_ms}ms
    static_configs:
      - targets: ['$2']
EOF
}

# kill -0 succeeds on a zombie, and a server that died at once is one until it is reaped.
_prom_alive() {
	local state
	state=$(ps -o stat= -p "$PROM_PID" 2>/dev/null) || return 1
	[[ $state != Z* ]]
}

# Waits for /-/ready; 0 ready, 1 the process died (the log says why), 2 timed out.
_prom_wait_ready() {
	local deadline=$((SECONDS + PROM_TIMEOUT))
	while [ "$SECONDS" -lt "$deadline" ]; do
		_prom_alive || return 1
		curl -fsS --max-time 2 -o /dev/null "$PROM_URL/-/ready" 2>/dev/null && return 0
		sleep 0.1
	done
	return 2
}

prom_start() { # TARGET_HOSTPORT [SCRAPE_INTERVAL]
	local target=${1:?prom_start: TARGET_HOSTPORT}
	local interval=${2:-1s} port rc _
	prom_stop
	PROM_DIR=$(mktemp -d "${BATS_TEST_TMPDIR:-${TMPDIR:-/tmp}}/prometheus.XXXXXX") || return 1
	_prom_write_config "$PROM_DIR/prometheus.yml" "$target" "$interval" || return 1
	for _ in 1 2 3; do
		port=$(prom_free_port) || return 1
		PROM_URL=http://127.0.0.1:$port
		prometheus --config.file="$PROM_DIR/prometheus.yml" \
			--storage.tsdb.path="$PROM_DIR/data" \
			--web.listen-address="127.0.0.1:$port" \
			>"$PROM_DIR/prometheus.log" 2>&1 3>&- &
		PROM_PID=$!
		export PROM_URL PROM_PID PROM_DIR
		rc=0
		_prom_wait_ready || rc=$?
		[ "$rc" -eq 0 ] && return 0
		# lost the port to another process between the probe and the bind: try another
		if [ "$rc" -eq 1 ] && grep -q 'address already in use' "$PROM_DIR/prometheus.log"; then
			wait "$PROM_PID" 2>/dev/null || true
			continue
		fi
		break
	done
	echo "prom_start: prometheus at $PROM_URL exited or was not ready within ${PROM_TIMEOUT}s:" >&2
	cat "$PROM_DIR/prometheus.log" >&2
	prom_stop
	return 1
}

# Instant query through the HTTP API; prints the raw JSON. Fails on an HTTP error (a bad
# query: the JSON with the error is printed all the same).
prom_query() { # PROMQL
	curl -sS --fail-with-body --max-time 10 -G "${PROM_URL:?prom_start first}/api/v1/query" \
		--data-urlencode "query=$1"
}

# The value of a one-series result (or of a scalar), as Prometheus prints it: "42", "NaN".
prom_value() { # PROMQL
	local json
	json=$(prom_query "$1") || { echo "$json" >&2; return 1; }
	jq -er --arg q "$1" '
		if .status != "success" then error("query failed: \(.error)")
		elif .data.resultType == "scalar" then .data.result[1]
		elif (.data.result | length) != 1 then
			error("\($q): \(.data.result | length) series, not one")
		else .data.result[0].value[1] // error("\($q): not an instant vector") end' <<<"$json"
}

prom_series_count() { # PROMQL
	local json
	json=$(prom_query "$1") || { echo "$json" >&2; return 1; }
	jq -er 'if .status != "success" then error("query failed: \(.error)")
		elif .data.resultType == "scalar" or .data.resultType == "string" then 1
		else .data.result | length end' <<<"$json"
}

# Waits until the target has been scraped successfully N times: every scrape writes an "up"
# sample, 1 when it succeeded, so their sum counts the successes. The first scrape comes only
# when the scrape manager first syncs its targets, about 5 s after the server is ready (a fixed
# interval in 2.42, with no flag to shorten it).
prom_wait_scraped() { # [N]
	local n=${1:-2} got deadline=$((SECONDS + PROM_TIMEOUT))
	while [ "$SECONDS" -lt "$deadline" ]; do
		got=$(prom_value 'sum_over_time(up{job="gpuspy"}[1h])' 2>/dev/null) || got=0
		[[ $got =~ ^[0-9]+$ ]] && [ "$got" -ge "$n" ] && return 0
		sleep 0.2
	done
	echo "prom_wait_scraped: fewer than $n successful scrapes in ${PROM_TIMEOUT}s; targets:" >&2
	curl -sS --max-time 5 "$PROM_URL/api/v1/targets" | jq -c '.data.activeTargets[] |
		{scrapeUrl, health, lastError, lastScrape}' >&2
	tail -n 20 "$PROM_DIR/prometheus.log" >&2
	return 1
}

# Stops the server and removes its data; safe to call twice, or before any prom_start. bats
# runs teardown with errexit, so nothing here may fail.
prom_stop() {
	local _
	if [ -n "${PROM_PID:-}" ]; then
		kill -TERM "$PROM_PID" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$PROM_PID" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$PROM_PID" 2>/dev/null; then
			kill -KILL "$PROM_PID" 2>/dev/null || true
		fi
		wait "$PROM_PID" 2>/dev/null || true
	fi
	if [ -n "${PROM_DIR:-}" ]; then
		rm -rf "$PROM_DIR"
	fi
	unset PROM_PID PROM_DIR PROM_URL
	return 0
}
