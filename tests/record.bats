#!/usr/bin/env bats
# gpuspy record on the real kernel: launch, attach, follow, thresholds, stop conditions.
# bats file_tags=bpf

load helpers
bats_require_minimum_version 1.5.0

setup() {
	require_bpf
	WORK=$(mktemp -d)
}

teardown() {
	[ -n "${FORKER_PID:-}" ] && kill "$FORKER_PID" 2>/dev/null || true
	[ -n "${GPUSPY_PID:-}" ] && kill "$GPUSPY_PID" 2>/dev/null || true
	rm -rf "$WORK"
}

# Starts tests/targets/forker (driven through fd 4) and attaches gpuspy to it with the given
# extra options; returns once the probes are live.
start_forker_and_attach() {
	mkfifo "$WORK/ctl"
	"$TARGETS/forker" "$WORK/ready" < "$WORK/ctl" > "$WORK/forker.out" 3>&- &
	FORKER_PID=$!
	exec 4> "$WORK/ctl"
	wait_for_file "$WORK/ready"
	"$GPUSPY" record "$@" -p "$FORKER_PID" -o "$WORK/t.gpuspy" 2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/gpuspy.err" "recording 1 process"
}

@test "syscall counts equal strace -f -c for the same workload" {
	require_cmd strace
	strace -f -c -U name,calls -o "$WORK/strace.txt" "$TARGETS/io_workload" "$WORK" 40
	run "$GPUSPY" record -q -o "$WORK/t.gpuspy" -- "$TARGETS/io_workload" "$WORK" 40
	[ "$status" -eq 0 ]
	[[ "$output" == *"120 writes"* ]]
	# strace's table: "name calls" rows between the dashed rules
	awk '/^-/ { rule++; next } rule == 1 { print $1, $2 }' "$WORK/strace.txt" | sort > "$WORK/expected"
	"$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --format json |
		jq -r '.[] | "\(.name) \(.calls)"' | sort > "$WORK/actual"
	diff -u "$WORK/expected" "$WORK/actual"
	grep -qx "write 121" "$WORK/actual"
	grep -qx "read 121" "$WORK/actual"
	grep -qx "fsync 3" "$WORK/actual"
	grep -qx "openat 5" "$WORK/actual"
}

@test "a launched command's exit status becomes gpuspy's and its exit ends the recording" {
	run -7 "$GPUSPY" record -q -o "$WORK/t.gpuspy" -- /bin/sh -c 'exit 7'
	run "$GPUSPY" report "$WORK/t.gpuspy" --report processes --format json
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.[] | select(.name == "sh") | .exit == "7"'
}

@test "a command that cannot be run exits 127 with one clear line" {
	run -127 "$GPUSPY" record -q -o "$WORK/t.gpuspy" -- /nonexistent/prog
	[[ "$output" == "gpuspy: cannot run '/nonexistent/prog': No such file or directory" ]]
}

# The launched command's credentials and login variables, one normalised line each.
CREDS_SH='awk "/^(Uid|Gid|Groups):/ { \$1 = \$1; print }" /proc/self/status; echo "env $HOME $USER $LOGNAME"'

# What CREDS_SH prints for a process running as USER, from the passwd and group databases.
expected_creds() { # USER
	local uid gid home
	uid=$(id -u "$1")
	gid=$(id -g "$1")
	home=$(getent passwd "$1" | cut -d: -f6)
	echo "Uid: $uid $uid $uid $uid"
	echo "Gid: $gid $gid $gid $gid"
	echo "Groups: $(id -G "$1" | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ $//')"
	echo "env $home $1 $1"
}

@test "--user runs the command as that user (ids, groups, HOME, USER, LOGNAME) while it is traced" {
	for user in nobody 65534; do
		run --separate-stderr -0 "$GPUSPY" record -q --user "$user" -f -o "$WORK/t.gpuspy" -- \
			/bin/sh -c "$CREDS_SH"
		echo "$output"
		[ "$output" = "$(expected_creds nobody)" ]
	done
	# traced as usual: the command's processes are in the trace, under their user
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes --format json |
		jq -e '[.[] | select(.name == "awk")] | length == 1 and .[0].user == "nobody" and .[0].exit == "0"'
	# gpuspy itself kept its own user: the trace is root's
	[ "$(stat -c '%U %a' "$WORK/t.gpuspy")" = "root 600" ]
	# without --user the command runs as the caller, with the caller's environment
	run --separate-stderr -0 "$GPUSPY" record -q -f -o "$WORK/t.gpuspy" -- /bin/sh -c "$CREDS_SH"
	[ "$output" = "$(/bin/sh -c "$CREDS_SH")" ]
}

@test "--user gives the command the user's supplementary groups, as initgroups does" {
	# a user that some group of this host lists as a member
	user=$(awk -F: '$4 != "" { split($4, m, ","); print m[1]; exit }' /etc/group)
	[ -n "$user" ] && id "$user" > /dev/null 2>&1 || skip "no user with supplementary groups here"
	[ "$(id -G "$user" | wc -w)" -ge 2 ]
	run --separate-stderr -0 "$GPUSPY" record -q --user "$user" -o "$WORK/t.gpuspy" -- \
		/bin/sh -c "$CREDS_SH"
	echo "$output"
	[ "$output" = "$(expected_creds "$user")" ]
}

@test "--user: a command the user may not run fails as for that user, exit 127" {
	mkdir -m 700 "$WORK/private"
	cp /bin/true "$WORK/private/prog"
	run --separate-stderr -127 "$GPUSPY" record -q --user nobody -o "$WORK/t.gpuspy" -- "$WORK/private/prog"
	[ "$stderr" = "gpuspy: cannot run '$WORK/private/prog' as nobody: Permission denied" ]
	# the caller (root) could have run it
	run -0 "$GPUSPY" record -q -f -o "$WORK/t.gpuspy" -- "$WORK/private/prog"
}

@test "-p attaches to a running process, follows a new thread and a forked child, and detaches harmlessly" {
	start_forker_and_attach
	echo go >&4
	wait_for_line "$WORK/forker.out" "child .* exited 5"
	kill -INT "$GPUSPY_PID"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
	# detached: the process still runs and finishes normally
	kill -0 "$FORKER_PID"
	echo exit >&4
	exec 4>&-
	wait "$FORKER_PID"
	FORKER_PID=
	grep -q "forker: done" "$WORK/forker.out"

	child=$(sed -n 's/^forker: child \([0-9]*\) exited 5$/\1/p' "$WORK/forker.out")
	pid=$(grep -o 'pid [0-9]*' "$WORK/gpuspy.err" | head -1 | cut -d' ' -f2)
	[ "$(calls_of "$WORK/t.gpuspy" "$pid" "$pid" getppid)" -eq 7 ]
	[ "$(calls_of "$WORK/t.gpuspy" "$child" "$child" getppid)" -eq 13 ]
	# the new thread: the only tid of the process other than the main one
	"$GPUSPY" report "$WORK/t.gpuspy" --report osrt_thread --format json > "$WORK/rows.json"
	jq -e --argjson pid "$pid" \
		'[.[] | select(.pid == $pid and .tid != $pid and .name == "gettid") | .calls] == [11]' \
		"$WORK/rows.json"
	# the fork is in the lifecycle: the child's parent and exit status
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes --format json |
		jq -e --argjson c "$child" --argjson p "$pid" \
			'.[] | select(.pid == $c) | .ppid == $p and .exit == "5"'
}

@test "--no-follow traces the process but not its new children" {
	start_forker_and_attach --no-follow
	echo go >&4
	wait_for_line "$WORK/forker.out" "child .* exited 5"
	echo exit >&4
	exec 4>&-
	pid=$FORKER_PID
	wait "$FORKER_PID"
	FORKER_PID=
	wait "$GPUSPY_PID" # the target's exit ends the recording
	GPUSPY_PID=
	child=$(sed -n 's/^forker: child \([0-9]*\) exited 5$/\1/p' "$WORK/forker.out")
	[ "$(calls_of "$WORK/t.gpuspy" "$pid" "$pid" getppid)" -eq 7 ]
	[ "$(calls_of "$WORK/t.gpuspy" "$child" "$child" getppid)" -eq 0 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report osrt_thread --format json |
		jq -e '[.[] | select(.name == "gettid")] | length == 0'
}

@test "short calls are counted but not spanned; long calls become spans" {
	run "$GPUSPY" record -q --osrt-threshold 1ms -o "$WORK/t.gpuspy" -- "$TARGETS/sleeper" 6 500
	[ "$status" -eq 0 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --format json > "$WORK/sum.json"
	jq -e '.[] | select(.name == "getppid") | .calls == 500' "$WORK/sum.json"
	jq -e '.[] | select(.name == "clock_nanosleep") | .calls == 6 and .min_ns >= 5000000' "$WORK/sum.json"
	[ "$(spans_of "$WORK/t.gpuspy" getppid)" -eq 0 ]
	[ "$(spans_of "$WORK/t.gpuspy" clock_nanosleep)" -eq 6 ]
}

@test "off-CPU time is attributed to sleeping with exact totals" {
	# every off-CPU interval and every syscall a span (thresholds 0): the thread's totals, the
	# exact statistics BPF keeps in a map and writes as checkpoint and final records, must be
	# its spans added up, reason by reason, to the nanosecond; and the sleeps are the
	# program's 20 nanosleeps: each sleeping interval from its exec on lies inside one of
	# them (before it, the launched child may wait for gpuspy to let it run)
	run "$GPUSPY" record -q --offcpu-threshold 0 --osrt-threshold 0 -o "$WORK/t.gpuspy" -- \
		"$TARGETS/sleeper" 20 0
	[ "$status" -eq 0 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report offcpu,losses --format json > "$WORK/r.json"
	jq -e '[.losses[].lost] | add == 0' "$WORK/r.json"
	"$GPUSPY" export "$WORK/t.gpuspy" -o "$WORK/t.json"
	jq -e --slurpfile r "$WORK/r.json" '
		def ns: . * 1000 | round;
		($r[0].offcpu[] | select(.thread == "sleeper")) as $row
		| [.traceEvents[] | select(.ph == "X" and .pid == $row.pid and .tid == $row.tid)] as $ev
		| [$ev[] | select(.cat == "off_cpu")
			| {reason: .args.reason, s: (.ts | ns), e: ((.ts + .dur) | ns), d: (.dur | ns)}] as $off
		| [$ev[] | select(.cat == "os_runtime" and .name == "clock_nanosleep")
			| {s: (.ts | ns), e: ((.ts + .dur) | ns)}] as $sleeps
		| (.traceEvents[] | select(.ph == "i" and .name == "exec" and .pid == $row.pid)
			| .ts | ns) as $exec
		| def count($why): [$off[] | select(.reason == $why)] | length;
		  def total($why): [$off[] | select(.reason == $why) | .d] | add // 0;
		  ($sleeps | length) == 20 and count("sleeping") > 0
		  and $row.sleeping_count == count("sleeping") and $row.sleeping_ns == total("sleeping")
		  and $row.uninterruptible_count == count("uninterruptible")
		  and $row.uninterruptible_ns == total("uninterruptible")
		  and $row.preempted_count == count("preempted") and $row.preempted_ns == total("preempted")
		  and $row.total_ns == total("sleeping") + total("uninterruptible") + total("preempted")
		  and all($off[] | select(.reason == "sleeping" and .s >= $exec); . as $o
			| any($sleeps[]; .s <= $o.s and $o.e <= .e))' "$WORK/t.json"
}

@test "SIGINT mid-recording yields a complete, readable trace" {
	"$GPUSPY" record -o "$WORK/t.gpuspy" -p $$ 2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/gpuspy.err" "recording 1 process"
	for i in 1 2 3; do cat /etc/hostname > /dev/null; done
	kill -INT "$GPUSPY_PID"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
	run "$GPUSPY" report "$WORK/t.gpuspy"
	[ "$status" -eq 0 ]
	[[ "$output" != *truncated* ]]
	[[ "$output" == *"events lost: 0"* ]]
	grep -q "wrote $WORK/t.gpuspy" "$WORK/gpuspy.err"
}

@test "SIGTERM stops a launched command too and passes its status on" {
	"$GPUSPY" record -o "$WORK/t.gpuspy" -- "$TARGETS/sleeper" 0 0 60000 2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/gpuspy.err" "recording '"
	kill -TERM "$GPUSPY_PID"
	status=0
	wait "$GPUSPY_PID" || status=$?
	GPUSPY_PID=
	[ "$status" -eq 143 ] # the command died of SIGTERM
	run "$GPUSPY" report "$WORK/t.gpuspy" --report processes --format json
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.[] | select(.name == "sleeper") | .exit == "signal 15"'
}

@test "-d stops the recording after the duration" {
	start=$(date +%s%N)
	run -143 "$GPUSPY" record -q -d 300ms -o "$WORK/t.gpuspy" -- "$TARGETS/sleeper" 0 0 60000
	end=$(date +%s%N)
	[ $(((end - start) / 1000000)) -lt 20000 ]
	"$GPUSPY" report "$WORK/t.gpuspy" > /dev/null
}

@test "-a traces other processes but not gpuspy itself" {
	"$GPUSPY" record -a -d 2s -o "$WORK/t.gpuspy" 2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	GPUSPY_SELF=$GPUSPY_PID
	wait_for_line "$WORK/gpuspy.err" "recording all processes"
	"$TARGETS/sleeper" 0 77 > /dev/null &
	sleeper=$!
	wait "$sleeper"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
	[ "$(calls_of "$WORK/t.gpuspy" "$sleeper" "$sleeper" getppid)" -eq 77 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes --format json |
		jq -e --argjson self "$GPUSPY_SELF" '[.[] | select(.pid == $self)] | length == 0'
}

@test "the trace file is created 0600 and an existing file is kept without -f" {
	run "$GPUSPY" record -q -o "$WORK/t.gpuspy" -- /bin/true
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$WORK/t.gpuspy")" = 600 ]
	before=$(sha256sum < "$WORK/t.gpuspy")
	run -1 "$GPUSPY" record -q -o "$WORK/t.gpuspy" -- /bin/true
	[[ "$output" == *"already exists (use -f to overwrite)"* ]]
	[ "$(sha256sum < "$WORK/t.gpuspy")" = "$before" ]
	run "$GPUSPY" record -q -f -o "$WORK/t.gpuspy" -- /bin/true
	[ "$status" -eq 0 ]
}

@test "syscall spans name the file behind the fd" {
	run "$GPUSPY" record -q --osrt-threshold 0 -o "$WORK/t.gpuspy" -- "$TARGETS/io_workload" "$WORK" 5
	[ "$status" -eq 0 ]
	"$GPUSPY" export "$WORK/t.gpuspy" -o - |
		jq -e --arg f "$WORK/io_workload.dat" \
			'[.traceEvents[] | select(.name == "write" and .args.file == $f)] | length >= 15'
	"$GPUSPY" export "$WORK/t.gpuspy" -o - |
		jq -e '[.traceEvents[] | select(.name == "read" and .args.bytes == 4096 and .args.bytes_requested == 4096)] | length >= 15'
}

@test "a recording killed with SIGKILL keeps its last statistics checkpoint" {
	"$GPUSPY" record --stats-interval 200ms -o "$WORK/t.gpuspy" -- "$TARGETS/sleeper" 0 300 20000 \
		2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/gpuspy.err" "recording '"
	for i in $(seq 100); do
		n=$("$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --format json 2>/dev/null |
			jq '[.[] | select(.name == "getppid") | .calls] | add // 0')
		[ "$n" = 300 ] && break
		sleep 0.1
	done
	kill -KILL "$GPUSPY_PID"
	wait "$GPUSPY_PID" || true
	GPUSPY_PID=
	pkill -f "$TARGETS/sleeper 0 300 20000" || true
	run "$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum
	[ "$status" -eq 0 ]
	[[ "$output" == *"is truncated"* ]]
	[[ "$output" == *"statistics: as of the last checkpoint"* ]]
	"$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --format json |
		jq -e '.[] | select(.name == "getppid") | .calls == 300'
}

@test "events lost to a full ring buffer are counted exactly and reported" {
	require_cmd strace
	# the program's own numbers: syscall_bench makes getppid, read and write once per
	# iteration, around a start-up and an exit that strace -f -c counts on a 1-iteration run;
	# 3,000,000 iterations are those counts plus 2,999,999 more of each of the three
	strace -f -c -U name,calls -o "$WORK/strace.txt" "$BUILD/bench/syscall_bench" 1 > /dev/null
	awk '/^-/ { rule++; next } rule == 1 { print $1, $2 }' "$WORK/strace.txt" |
		awk '$1 == "getppid" || $1 == "read" || $1 == "write" { $2 += 2999999 } { print }' |
		sort > "$WORK/expected"
	grep -qx "getppid 3000000" "$WORK/expected"
	made=$(awk '{ n += $2 } END { print n }' "$WORK/expected")
	# gpuspy is stopped while the workload runs, so the 1 MiB ring must overflow
	"$GPUSPY" record --buffer-size 1 --osrt-threshold 0 -o "$WORK/t.gpuspy" -- \
		"$BUILD/bench/syscall_bench" 3000000 > /dev/null 2> "$WORK/gpuspy.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/gpuspy.err" "recording '"
	kill -STOP "$GPUSPY_PID"
	sleep 1
	kill -CONT "$GPUSPY_PID"
	wait "$GPUSPY_PID"
	GPUSPY_PID=
	grep -q "gpuspy: warning: lost [0-9]* syscall spans (ring buffer full)" "$WORK/gpuspy.err"
	lost=$("$GPUSPY" report "$WORK/t.gpuspy" --report losses --format json |
		jq '.[] | select(.kind | startswith("syscall spans")) | .lost')
	# the statistics (a map, not the ring) are exact: every call the program made, by name
	"$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --format json |
		jq -r '.[] | "\(.name) \(.calls)"' | sort > "$WORK/actual"
	diff -u "$WORK/expected" "$WORK/actual"
	spans=$("$GPUSPY" export "$WORK/t.gpuspy" -o - | jq '[.traceEvents[] | select(.cat == "os_runtime")] | length')
	echo "the program made $made calls; spans $spans lost $lost"
	[ "$lost" -gt 0 ]
	# with a zero threshold every call is a span: what is not in the trace was counted lost
	[ "$((spans + lost))" -eq "$made" ]
	total=$("$GPUSPY" report "$WORK/t.gpuspy" --report losses --format json | jq '[.[].lost] | add')
	run "$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum
	[[ "$output" == *"events lost: $total"* ]]
	[[ "$output" == *"  $lost syscall spans (ring buffer full)"* ]]
}
