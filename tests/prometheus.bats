#!/usr/bin/env bats
# The Prometheus text writer (loader/live/prom_text.c) against Prometheus's own tools: its unit test,
# promtool's parser and linter on what it writes, and a real Prometheus server (the harness in
# tests/lib/prometheus.bash) scraping it, which proves the harness and that every escaped label
# value reads back as written.

load helpers
load lib/prometheus
bats_require_minimum_version 1.5.0

PROM_TEST=$BUILD/unit/prom_text_test

# Serves a file at http://127.0.0.1:PORT/metrics, read afresh on each scrape, with the 0.0.4
# text content type; the port is the kernel's pick, reported through a ready-file.
SERVER_PY='
import http.server, os, sys
path, ready = sys.argv[1], sys.argv[2]

class Metrics(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/metrics":
            self.send_error(404)
            return
        with open(path, "rb") as f:
            body = f.read()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

srv = http.server.HTTPServer(("127.0.0.1", 0), Metrics)
with open(ready + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(ready + ".tmp", ready)
srv.serve_forever()
'

setup() {
	[ -x "$PROM_TEST" ] || {
		echo "missing $PROM_TEST: build it (make $PROM_TEST)" >&2
		return 1
	}
	WORK=$(mktemp -d)
	SERVE_PID=
}

teardown() {
	prom_stop
	if [ -n "$SERVE_PID" ]; then
		kill "$SERVE_PID" 2>/dev/null || true
		wait "$SERVE_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}

serve_metrics() { # FILE; sets SERVE_PID and SERVE_ADDR
	python3 -c "$SERVER_PY" "$1" "$WORK/serve.port" >"$WORK/serve.log" 2>&1 3>&- &
	SERVE_PID=$!
	wait_for_file "$WORK/serve.port"
	SERVE_ADDR=127.0.0.1:$(cat "$WORK/serve.port")
}

# The "note" label of every gpuspy_kernel_launches_total series, sorted, as JSON.
note_values() {
	prom_query gpuspy_kernel_launches_total | jq -ec '[.data.result[] | .metric.note // ""] | sort'
}

@test "prom_text: unit test" {
	run -0 "$PROM_TEST"
	echo "$output"
}

# bats test_tags=prometheus
@test "prom_text: promtool check metrics parses and lints its output clean" {
	require_cmd promtool
	# shellcheck disable=SC2016 # $1 is for the inner shell
	run -0 bash -c 'set -o pipefail; "$1" --emit | promtool check metrics 2>&1' _ "$PROM_TEST"
	echo "$output"
	[ -z "$output" ]
}

# bats test_tags=prometheus
@test "prometheus harness: a real server scrapes a file; values and escaped labels read back" {
	require_prometheus
	{
		printf '# HELP some_metric_total A metric for the harness.\n'
		printf '# TYPE some_metric_total counter\n'
		printf 'some_metric_total{label="x"} 42\nsome_metric_total{label="y"} 7\n'
		"$PROM_TEST" --emit
	} >"$WORK/metrics"
	serve_metrics "$WORK/metrics"
	prom_start "$SERVE_ADDR"
	prom_wait_scraped 2

	run -0 prom_value 'some_metric_total{label="x"}'
	[ "$output" = 42 ]
	run -0 prom_series_count 'some_metric_total'
	[ "$output" = 2 ]
	run ! prom_value 'some_metric_total'
	run -0 prom_series_count 'no_such_metric'
	[ "$output" = 0 ]

	# what prom_text wrote, as Prometheus parsed it: numbers in full, escapes undone
	run -0 prom_value 'gpuspy_kernel_launches_total{container="docker:0123456789ab"}'
	[ "$output" = 12345678901 ]
	run -0 prom_value 'gpuspy_gpu_busy_seconds_total{gpu="0"}'
	[ "$output" = 0.30000000000000004 ]
	run -0 prom_value 'gpuspy_clock_skew_seconds{gpu="1"}'
	[ "$output" = NaN ]
	run -0 prom_value 'gpuspy_clock_skew_seconds{gpu="3"}'
	[ "$output" = -Inf ]
	run -0 note_values
	echo "$output"
	# an empty label value is no label at all to Prometheus: hence // ""
	[ "$output" = '["","C:\\path\\","say \"hi\"","two\nlines","π≈3.14 ✓ 😀"]' ]

	local pid=$PROM_PID dir=$PROM_DIR
	prom_stop
	run ! kill -0 "$pid"
	[ ! -e "$dir" ]
	prom_stop
}

# bats test_tags=prometheus
@test "prometheus harness: a target that does not answer is never counted as scraped" {
	require_prometheus
	local port _
	port=$(prom_free_port)
	prom_start "127.0.0.1:$port"
	# the first scrape comes when Prometheus first syncs its targets, about 5 s after start
	for _ in $(seq 150); do
		[ "$(prom_series_count 'up{job="gpuspy"}')" = 1 ] && break
		sleep 0.1
	done
	run -0 prom_value 'up{job="gpuspy"}'
	[ "$output" = 0 ]
	PROM_TIMEOUT=2 run ! prom_wait_scraped 1
	echo "$output"
	[[ $output == *'fewer than 1 successful scrapes'* ]]
}
