#!/usr/bin/env bats
# Output files (record -o, export -o): what is already at the path is never followed, written
# through, chmod-ed or replaced unless it is the caller's own regular file (README, "Output
# files"). Each refusal is one line on stderr, nothing on stdout, exit 1, and leaves the path
# exactly as it was.

load helpers
bats_require_minimum_version 1.5.0

FIXTURE=$ROOT/tests/fixtures/format-1.0.gpuspy

setup() {
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

# Runs gpuspy and expects the refusal: exit 1, no stdout, stderr exactly
# "gpuspy: cannot create PATH: REASON".
refused() { # PATH REASON GPUSPY-ARGS...
	local path=$1 reason=$2
	shift 2
	run --separate-stderr -1 "$GPUSPY" "$@"
	echo "stdout: $output"
	echo "stderr: $stderr"
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "$stderr" = "gpuspy: cannot create $path: $reason" ]
}

# Both writers refuse PATH with REASON: record even with -f, export (which replaces files
# without being asked, as it always did).
both_refuse() { # PATH REASON
	if [ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
		refused "$1" "$2" record -q -f -o "$1" -- /bin/true
	fi
	refused "$1" "$2" export "$FIXTURE" -o "$1"
	# and leaves no temporary file (PATH.XXXXXX) behind
	[ -z "$(compgen -G "$1.??????")" ]
}

@test "a planted symbolic link is not followed: its target stays byte for byte" {
	printf 'precious\n' > "$WORK/secret"
	chmod 644 "$WORK/secret"
	ln -s "$WORK/secret" "$WORK/out"
	before=$(sha256sum < "$WORK/secret")
	both_refuse "$WORK/out" "is a symbolic link (not followed)"
	[ "$(sha256sum < "$WORK/secret")" = "$before" ]
	[ "$(stat -c %a "$WORK/secret")" = 644 ]
	[ -L "$WORK/out" ]
	# a dangling link is not created through either
	ln -s "$WORK/nothing" "$WORK/dangling"
	both_refuse "$WORK/dangling" "is a symbolic link (not followed)"
	[ ! -e "$WORK/nothing" ]
}

@test "another user's file is neither written nor replaced" {
	require_root
	printf 'theirs\n' > "$WORK/out"
	chown 65534:65534 "$WORK/out"
	chmod 666 "$WORK/out"
	before=$(sha256sum < "$WORK/out")
	both_refuse "$WORK/out" "is owned by another user (uid 65534)"
	[ "$(sha256sum < "$WORK/out")" = "$before" ]
	[ "$(stat -c '%u %a' "$WORK/out")" = "65534 666" ]
}

@test "a fifo stays a fifo and is not opened" {
	mkfifo "$WORK/out"
	# a reader that would see any byte written into the fifo
	timeout 30 cat "$WORK/out" > "$WORK/read" 3>&- &
	reader=$!
	both_refuse "$WORK/out" "is a fifo, not a regular file (use -o - for a pipe)"
	[ -p "$WORK/out" ]
	exec 5> "$WORK/out" # lets the reader finish
	exec 5>&-
	wait "$reader"
	[ ! -s "$WORK/read" ]
}

@test "a device node stays a device node with its mode" {
	require_root
	mknod -m 620 "$WORK/out" c 1 3 # /dev/null's numbers
	both_refuse "$WORK/out" "is a device, not a regular file"
	[ -c "$WORK/out" ]
	[ "$(stat -c '%a %t:%T' "$WORK/out")" = "620 1:3" ]
}

@test "a directory is refused and left empty" {
	mkdir "$WORK/out"
	both_refuse "$WORK/out" "is a directory"
	[ -d "$WORK/out" ]
	[ -z "$(ls -A "$WORK/out")" ]
}

@test "record -f replaces the caller's own file with a new 0600 one; the old inode is untouched" {
	require_bpf
	printf 'old trace\n' > "$WORK/t.gpuspy"
	chmod 644 "$WORK/t.gpuspy"
	ln "$WORK/t.gpuspy" "$WORK/other-link"
	run --separate-stderr -1 "$GPUSPY" record -q -o "$WORK/t.gpuspy" -- /bin/true
	[ "$stderr" = "gpuspy: cannot create $WORK/t.gpuspy: already exists (use -f to overwrite)" ]
	[ "$(cat "$WORK/t.gpuspy")" = "old trace" ]
	run -0 "$GPUSPY" record -q -f -o "$WORK/t.gpuspy" -- /bin/true
	[ "$(stat -c %a "$WORK/t.gpuspy")" = 600 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes > /dev/null
	# the other name of the old file keeps its data and mode: nothing was chmod-ed or
	# truncated through it
	[ "$(cat "$WORK/other-link")" = "old trace" ]
	[ "$(stat -c '%a %h' "$WORK/other-link")" = "644 1" ]
}

@test "export replaces the caller's own file and writes - to stdout" {
	printf 'old\n' > "$WORK/out.json"
	run -0 "$GPUSPY" export "$FIXTURE" -o "$WORK/out.json"
	jq -e '.traceEvents | length > 0' "$WORK/out.json"
	[ "$(stat -c %a "$WORK/out.json")" = 600 ]
	run -0 "$GPUSPY" export "$FIXTURE" -o -
	echo "$output" | jq -e '.traceEvents | length > 0'
	[ "$(ls -A "$WORK")" = out.json ]
}
