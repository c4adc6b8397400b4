#!/bin/sh
# Runs the trace-reader fuzz target for a bounded time on a corpus seeded with real traces:
# those given and the old-format files of tests/fixtures.
# usage: run.sh FUZZER SECONDS [SEED_TRACE...]
set -eu
fuzzer=$1
seconds=$2
shift 2
fixtures=$(dirname "$0")/../fixtures
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
for seed in "$@" "$fixtures"/*.gpuspy; do
	[ -e "$seed" ] && cp "$seed" "$corpus/"
done
# a valid header alone (format 1 and format 2), so the fuzzer starts past the magic check
printf 'GPUSPYTR\001\000\000\000\240\000\000\000' > "$corpus/header-prefix"
printf 'GPUSPYTR\002\000\000\000\240\000\000\000' > "$corpus/header-prefix-2"
"$fuzzer" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 "$corpus" 2>&1 | tail -n 12
