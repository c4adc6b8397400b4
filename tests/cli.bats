#!/usr/bin/env bats
# Command-line behaviour: help, version, bad input answered with one line and a documented code.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

# The commands `gpuspy --help` lists: the lines of its "commands:" section, which it prints
# from the command table.
listed_commands() {
	"$GPUSPY" --help | awk '/^commands:$/ { on = 1; next } on && /^$/ { exit } on { print $1 }'
}

@test "--help and -h of gpuspy and of every command it lists: usage on stdout, exit 0, nothing started" {
	run -0 listed_commands
	mapfile -t cmds <<< "$output"
	echo "commands: ${cmds[*]}"
	# the five of today at least: an empty list would check nothing
	[ "${#cmds[@]}" -ge 5 ]
	for sub in "" "${cmds[@]}"; do
		for opt in --help -h; do
			# a command that starts working instead (serve, top) is still running after
			# 10 s and timeout ends it with 124: that is the failure detected here
			run --separate-stderr timeout 10 "$GPUSPY" ${sub:+"$sub"} "$opt"
			echo "gpuspy $sub $opt: exit $status, stderr: $stderr"
			[ "$status" -eq 0 ]
			[ -z "$stderr" ]
			[[ "$output" == usage:* ]]
			[[ "$output" == *examples:* ]]
			# usage texts are printed as they are, not through printf
			[[ "$output" != *%%* ]]
		done
	done
}

@test "gpuspy --help lists every report of the registry, as report --list does" {
	"$GPUSPY" report --list | awk '/^[a-z]/ { print $1 }' | sort > "$WORK/registry"
	"$GPUSPY" --help | awk '/^reports/ { on = 1; next } on && /^$/ { exit } on' |
		tr ', ' '\n\n' | sed '/^$/d' | sort > "$WORK/listed"
	[ "$(wc -l < "$WORK/registry")" -ge 20 ]
	diff -u "$WORK/registry" "$WORK/listed"
}

@test "--version and --version -v" {
	run -0 "$GPUSPY" --version
	[[ "$output" =~ ^gpuspy\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	run -0 "$GPUSPY" --version -v
	[[ "$output" == *"libbpf 1."* ]]
	[[ "$output" == *"kernel BTF:"* ]]
}

@test "no command and an unknown command are usage errors" {
	run -2 "$GPUSPY"
	run -2 "$GPUSPY" frobnicate
	[[ "$output" == "gpuspy: 'frobnicate' is not a gpuspy command (see 'gpuspy --help')" ]]
}

# Runs gpuspy and expects what the suite's names promise: exit CODE, nothing on stdout and
# exactly one line on stderr, equal to LINE.
one_line() { # CODE LINE GPUSPY-ARGS...
	local code=$1 line=$2
	shift 2
	run --separate-stderr "-$code" "$GPUSPY" "$@"
	echo "gpuspy $*: exit $status, stdout: '$output', stderr: '$stderr'"
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "$stderr" = "$line" ]
}

@test "bad options and option values get one line and exit 2, before anything is created" {
	cd "$WORK"
	one_line 2 "gpuspy: invalid value 'soon' for --duration: expected a duration such as 10s, 500ms or 2m" \
		record -d soon -- /bin/true
	one_line 2 "gpuspy: invalid value '12x' for --pid: expected a comma-separated list of process ids" \
		record -p 12x
	one_line 2 "gpuspy: invalid value '3' for --buffer-size: expected a power of two from 1 to 1024 (MiB)" \
		record --buffer-size 3 -- /bin/true
	one_line 2 "gpuspy: invalid value '-5' for --osrt-threshold: expected a duration such as 1000ns or 1ms" \
		record --osrt-threshold -5 -- /bin/true
	one_line 2 "gpuspy: record needs a target: -- COMMAND, -p PID or -a (see 'gpuspy record --help')" \
		record
	one_line 2 "gpuspy: record takes one kind of target: -- COMMAND, -p PID or -a" record -a -p 1
	one_line 2 "gpuspy: invalid value 'svg' for --format: expected chrome, kineto, perfetto or sqlite" \
		export x --format svg
	one_line 2 "gpuspy: report needs a trace file" report
	# getopt's own complaints, in the same one-line form for every command
	one_line 2 "gpuspy: unknown option '--frob' (see 'gpuspy record --help')" record --frob -- /bin/true
	one_line 2 "gpuspy: unknown option '-Z' (see 'gpuspy record --help')" record -qZ -- /bin/true
	one_line 2 "gpuspy: option '-o' needs a value (see 'gpuspy record --help')" record -o
	one_line 2 "gpuspy: option '--limit' needs a value (see 'gpuspy report --help')" report x --limit
	one_line 2 "gpuspy: unknown option '--frob' (see 'gpuspy export --help')" export x --frob
	one_line 2 "gpuspy: unknown option '--frob' (see 'gpuspy top --help')" top --frob
	one_line 2 "gpuspy: option '--listen' needs a value (see 'gpuspy serve --help')" serve --listen
	one_line 2 "gpuspy: invalid value 'no-such-user-gpuspy' for --user: expected a user name or uid of the passwd database" \
		record --user no-such-user-gpuspy -- /bin/true
	one_line 2 "gpuspy: --user is for a launched command (-- COMMAND): -p and -a trace processes as they run" \
		record --user nobody -a
	[ -z "$(ls -A "$WORK")" ]
}

@test "an unknown pid exits 6" {
	require_bpf
	run -6 "$GPUSPY" record -o "$WORK/t.gpuspy" -p 4194303
	[[ "$output" == "gpuspy: cannot attach to pid 4194303: no such process" ]]
	[ ! -e "$WORK/t.gpuspy" ]
}

@test "a thread id given as -p is refused with the process to use" {
	require_bpf
	mkfifo "$WORK/ctl"
	python3 -c 'import threading, sys
t = threading.Thread(target=sys.stdin.read); t.start(); t.join()' < "$WORK/ctl" 3>&- &
	py=$!
	exec 4> "$WORK/ctl"
	for i in $(seq 100); do
		[ "$(ls /proc/$py/task | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	tid=$(ls /proc/$py/task | grep -vx "$py" | head -1)
	run -2 "$GPUSPY" record -o "$WORK/t.gpuspy" -p "$tid"
	exec 4>&-
	wait "$py"
	[[ "$output" == "gpuspy: pid $tid is a thread of process $py: use -p $py" ]]
}

@test "missing kernel BTF exits 5 with the reason" {
	require_root
	GPUSPY_BTF_PATH=/nonexistent/vmlinux run -5 "$GPUSPY" record -o "$WORK/t.gpuspy" -- /bin/true
	[[ "$output" == "gpuspy: kernel BTF not found at /nonexistent/vmlinux: gpuspy needs a kernel built with CONFIG_DEBUG_INFO_BTF" ]]
}

@test "recording without root or CAP_BPF exits 4" {
	require_root
	require_cmd setpriv
	chmod 755 "$WORK"
	run -4 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$GPUSPY" record -o "$WORK/t.gpuspy" -- /bin/true
	[[ "$output" == "gpuspy: recording needs root or CAP_BPF and CAP_PERFMON (try sudo)" ]]
}

@test "an unwritable output path is one line and exit 1" {
	require_bpf
	run -1 "$GPUSPY" record -o /nonexistent/dir/t.gpuspy -- /bin/true
	[[ "$output" == "gpuspy: cannot create /nonexistent/dir/t.gpuspy: No such file or directory" ]]
}
