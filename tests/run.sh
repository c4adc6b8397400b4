#!/bin/sh
# Runs the bats suites and ends with a plain "N passed, N failed, N skipped" line.
# usage: tests/run.sh [BATS_FILE...]   (default: every tests/*.bats)
set -u
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
[ $# -gt 0 ] || set -- tests/*.bats
# a bare `! cmd` before a test's last line never fails under bats: such a suite counts as failed
lint=0
python3 tests/check_bare_bang.py "$@" || lint=1
bats --print-output-on-failure "$@" | tee "$log"
status=$?
# bats exits non-zero on any failure; a pipeline keeps tee's status, so read the log too
passed=$(grep -c '^ok ' "$log" | tr -d ' ')
skipped=$(grep -c '^ok .* # skip' "$log" | tr -d ' ')
failed=$(($(grep -c '^not ok ' "$log" | tr -d ' ') + lint))
passed=$((passed - skipped))
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] && [ "$status" -eq 0 ] || exit 1
