#!/bin/sh
# Runs a fuzz target (tests/fuzz/) for a bounded time on a corpus seeded with real traces: those
# given, the old-format files of tests/fixtures and the inputs of tests/fuzz/regressions (what
# fuzzing found once, kept so the run starts from it). Exits with the fuzzer's status: a crash,
# a leak, a timeout or a failure to start fails the run.
# usage: run.sh FUZZER SECONDS [SEED_TRACE...]
set -eu
fuzzer=$1
seconds=$2
shift 2
fixtures=$(dirname "$0")/../fixtures
corpus=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$corpus" "$log"' EXIT
for seed in "$@" "$fixtures"/*.gpuspy "$(dirname "$0")"/regressions/*; do
	[ -e "$seed" ] && cp "$seed" "$corpus/"
done
# a valid header alone (format 1 and format 2), so the fuzzer starts past the magic check
printf 'GPUSPYTR\001\000\000\000\240\000\000\000' > "$corpus/header-prefix"
printf 'GPUSPYTR\002\000\000\000\240\000\000\000' > "$corpus/header-prefix-2"
# sh has no pipefail: the output goes to a file, so the fuzzer's own status is the one kept
status=0
"$fuzzer" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 "$corpus" > "$log" 2>&1 || status=$?
tail -n 12 "$log"
exit "$status"
