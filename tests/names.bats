#!/usr/bin/env bats
# Process names any local user can give a process (prctl(PR_SET_NAME), tests/targets/badname.c)
# reach gpuspy's readers safely (README, "Names from traced processes"): serve's exposition
# stays valid UTF-8 that promtool and Prometheus accept whole, with the series of such a
# process in it; report and top print no raw control byte to a terminal. Two names: the 15
# bytes the kernel keeps of "éééééééé" (a character cut in half) and an escape sequence with
# BEL and a C1 control.

load helpers
load lib/prometheus
bats_require_minimum_version 1.5.0

PROM_TEST=$BUILD/unit/prom_text_test
CUT=$'\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9'
CTRL=$'\x1b[31mred\x07\xc2\x9b'
# what gpuspy shows for them: the cut byte and the control bytes as the text \xNN
CUT_SHOWN='ééééééé\xc3'
CTRL_SHOWN='\x1b[31mred\x07\xc2\x9b'

setup() {
	WORK=$(mktemp -d)
	PIDS=()
	SERVE_PID=
}

teardown() {
	prom_stop
	exec 4>&- || true
	stop_pids "${PIDS[@]}" $SERVE_PID
	rm -rf "$WORK"
}

# Starts the two badly named processes, both running until fd 4 closes; sets P1 (CUT) and
# P2 (CTRL) once both have named themselves.
start_named() {
	mkfifo "$WORK/ctl"
	"$TARGETS/badname" "$WORK/r1" "$CUT" < "$WORK/ctl" 3>&- &
	P1=$!
	"$TARGETS/badname" "$WORK/r2" "$CTRL" < "$WORK/ctl" 3>&- &
	P2=$!
	PIDS+=("$P1" "$P2")
	exec 4> "$WORK/ctl"
	wait_for_file "$WORK/r1"
	wait_for_file "$WORK/r2"
	# the kernel's copy of the names: what every tool reading /proc or BPF gets
	[ "$(od -An -tx1 "/proc/$P1/comm" | tr -d ' \n')" = c3a9c3a9c3a9c3a9c3a9c3a9c3a9c30a ]
	[ "$(od -An -tx1 "/proc/$P2/comm" | tr -d ' \n')" = 1b5b33316d72656407c29b0a ]
}

# Fails, showing where, when FILE has a control byte other than newline or is not UTF-8.
no_raw_controls() { # FILE
	if LC_ALL=C grep -nP '[\x00-\x09\x0b-\x1f\x7f]' "$1"; then
		echo "raw control bytes in $1" >&2
		return 1
	fi
	iconv -f UTF-8 -t UTF-8 "$1" > /dev/null
}

start_serve() {
	SERVE_ADDR=127.0.0.1:$(prom_free_port)
	"$GPUSPY" serve --listen "$SERVE_ADDR" --interval 500ms -p "$P1,$P2" --no-cupti \
		2> "$WORK/serve.err" 3>&- &
	SERVE_PID=$!
	wait_for_line "$WORK/serve.err" "gpuspy: collecting from"
}

@test "prom_text: promtool accepts the escaped bad names of the unit test" {
	require_cmd promtool
	run -0 "$PROM_TEST"
	# shellcheck disable=SC2016 # $1 is for the inner shell
	run -0 bash -c 'set -o pipefail; "$1" --emit-bad-names | promtool check metrics 2>&1' _ "$PROM_TEST"
	echo "$output"
	[ -z "$output" ]
}

# bats test_tags=bpf,live
@test "serve: processes with a cut UTF-8 name and control bytes keep the scrape valid for promtool" {
	require_bpf
	require_cmd promtool
	require_cmd curl
	start_named
	start_serve
	curl -sf "http://$SERVE_ADDR/metrics" > "$WORK/metrics"
	run -0 promtool check metrics < "$WORK/metrics"
	echo "$output"
	no_raw_controls "$WORK/metrics"
	# each process has its series, its name escaped (the exposition doubles the backslash)
	grep -F "gpuspy_process_info{pid=\"$P1\",comm=\"${CUT_SHOWN//\\/\\\\}\"" "$WORK/metrics"
	grep -F "gpuspy_process_info{pid=\"$P2\",comm=\"${CTRL_SHOWN//\\/\\\\}\"" "$WORK/metrics"
}

# bats test_tags=bpf,live,prometheus
@test "serve: a real Prometheus scrapes such processes (up is 1) and reads their names back" {
	require_bpf
	require_prometheus
	start_named
	start_serve
	prom_start "$SERVE_ADDR"
	prom_wait_scraped 2
	run -0 prom_value 'up{job="gpuspy"}'
	[ "$output" = 1 ]
	run -0 prom_query "gpuspy_process_info{pid=\"$P1\"}"
	echo "$output" | jq -e --arg c "$CUT_SHOWN" '.data.result | length == 1 and .[0].metric.comm == $c'
	run -0 prom_query "gpuspy_process_info{pid=\"$P2\"}"
	echo "$output" | jq -e --arg c "$CTRL_SHOWN" '.data.result | length == 1 and .[0].metric.comm == $c'
}

# bats test_tags=bpf
@test "report: text and csv show the names escaped, with no raw control byte; json stays valid UTF-8" {
	require_bpf
	# shellcheck disable=SC2016 # for the inner shell
	run -0 "$GPUSPY" record -q -o "$WORK/t.gpuspy" -- /bin/sh -c \
		'"$1" "$2" "$3" < /dev/null && "$1" "$4" "$5" < /dev/null' _ \
		"$TARGETS/badname" "$WORK/r1" "$CUT" "$WORK/r2" "$CTRL"
	# every default report, the per-thread one, per-process groups; text and csv
	"$GPUSPY" report "$WORK/t.gpuspy" > "$WORK/default.txt"
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes,osrt_thread,offcpu > "$WORK/text.txt"
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes,osrt_thread --group-by process > "$WORK/groups.txt"
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes,osrt_thread --format csv > "$WORK/csv.txt"
	for f in default text groups csv; do
		no_raw_controls "$WORK/$f.txt"
		grep -qF "$CUT_SHOWN" "$WORK/$f.txt"
		grep -qF "$CTRL_SHOWN" "$WORK/$f.txt"
	done
	# the report header's command line is the traced program's argv: escaped too
	head -1 "$WORK/default.txt" | grep -qF "$CTRL_SHOWN"
	# json: the control characters as \u escapes (decoded exactly), the cut byte as the text \xc3
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes --format json > "$WORK/p.json"
	no_raw_controls "$WORK/p.json"
	python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))' "$WORK/p.json"
	jq -e --arg c "$CUT_SHOWN" --arg t "$CTRL" '[.[] | .name] | index($c) != null and index($t) != null' "$WORK/p.json"
}

# bats test_tags=bpf,live
@test "top --once: text and csv rows show the names escaped, with no raw control byte" {
	require_bpf
	start_named
	for fmt in text csv; do
		run --separate-stderr -0 "$GPUSPY" top --once --all --interval 500ms --no-cupti \
			-p "$P1,$P2" --format "$fmt"
		printf '%s\n' "$output" > "$WORK/top.$fmt"
		cat "$WORK/top.$fmt"
		no_raw_controls "$WORK/top.$fmt"
		grep -qF "$CUT_SHOWN" "$WORK/top.$fmt"
		grep -qF "$CTRL_SHOWN" "$WORK/top.$fmt"
	done
}
