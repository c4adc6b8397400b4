#!/bin/sh
# Runs the HTTP request fuzz target (fuzz_http.c) for a bounded time on a corpus seeded with
# requests: well-formed ones of each kind the server answers, and a listen address.
# usage: run_http.sh FUZZER SECONDS [CORPUS_DIR]   (without CORPUS_DIR: a temporary one)
set -eu
fuzzer=$1
seconds=$2
if [ $# -ge 3 ]; then
	corpus=$3
	mkdir -p "$corpus"
else
	corpus=$(mktemp -d)
	trap 'rm -rf "$corpus"' EXIT
fi
seed() { # NAME PRINTF-FORMAT
	printf "$2" > "$corpus/seed-$1"
}
seed get-metrics 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n'
seed head-index 'HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
seed pipelined 'GET /metrics?a=b HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n'
seed http10 'GET /metrics HTTP/1.0\r\nConnection: keep-alive\r\n\r\n'
seed absolute 'GET http://x:9478/metrics HTTP/1.1\r\nHost: x\r\n\r\n'
seed post-body 'POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc'
seed get-body 'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello'
seed chunked 'GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
seed delete 'DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n'
seed listen '[::1]:9478\nGET / HTTP/1.1\r\nHost: x\r\n\r\n'
"$fuzzer" -max_total_time="$seconds" -max_len=4096 -timeout=20 -rss_limit_mb=2048 \
	-print_final_stats=1 "$corpus" 2>&1 | tail -n 12
