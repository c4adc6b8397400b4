#!/usr/bin/env bats
# Loading the CUPTI bridge into CUDA processes that were started without it (`record -p`): gpuspy
# ptrace-stops one thread at a safe syscall boundary, dlopen()s build/libgpuspy_cupti.so in it
# and lets it go; the bridge then records the GPU work launched while gpuspy is attached. Real
# ptrace, real processes, the simulated GPU (tests/fakecuda). Each target checks its own work
# (round trips through copies, child exit statuses, its CUPTI callbacks) and must end with
# "DONE ok" and status 0 whatever gpuspy did to it; GPU records are compared with the lines the
# target printed for the window gpuspy was attached.
# bats file_tags=bpf,cuda,cupti,inject

load helpers
bats_require_minimum_version 1.5.0

FC=$BUILD/fakecuda
TGT=$BUILD/targets/cuda
BRIDGE=$BUILD/libgpuspy_cupti.so
PY=/usr/bin/python3.11
GPU_REPORTS=cuda_gpu_trace,gpu_util,gpu_mode
YAMA=/proc/sys/kernel/yama/ptrace_scope
# simulated kernel durations (ns), as the targets set them
TICK=_Z11tick_kernelPj=10000
TICK_NS=10000
COUNT_NAME=_Z12count_kernelPh
COUNT_NS=50000
BUSY_NAME=_Z11busy_kernelPh
BUSY_NS=1000000
NO_PTRACE=$ROOT/tests/lib/check_inject_no_ptrace.py

setup() {
	require_bpf
	require_cmd jq
	require_cmd python3
	if [ ! -e "$FC/libcudart.so.13" ] || [ ! -e "$TGT/cuda_loop" ] || [ ! -e "$TGT/inject_workers" ]; then
		skip "run 'make fakecuda' first"
	fi
	[ -e "$BRIDGE" ] || skip "the CUPTI bridge was not built (no CUPTI headers)"
	WORK=$(mktemp -d)
	TARGET_PIDS=
	GPUSPY_PID=
	WRAP=()
}

teardown() {
	exec 4>&- 5>&-
	# a gpuspy killed while it holds a thread leaves the process stopped: SIGKILL works anyway
	[ -n "${GPUSPY_PID:-}" ] && kill -KILL "$GPUSPY_PID" 2>/dev/null
	for p in ${TARGET_PIDS:-}; do kill -KILL "$p" 2>/dev/null || true; done
	[ -n "${YAMA_SAVED:-}" ] && echo "$YAMA_SAVED" > "$YAMA"
	rm -rf "$WORK"
}

# ---- targets ----

# Starts a target program driven through a fifo on fd FD; READY_FILE is appended to its
# arguments. Its stdout (appended, so it can be cut into windows) goes to $WORK/TAG.out, stderr to
# TAG.err; its bridge, once loaded, logs CUPTI session changes to TAG.log. Sets TARGET_PID.
start_target() { # TAG FD COMMAND...
	local tag=$1 fd=$2
	shift 2
	mkfifo "$WORK/$tag.ctl"
	env LD_LIBRARY_PATH="$FC" GPUSPY_CUPTI_LOG="$WORK/$tag.log" "$@" "$WORK/$tag.ready" \
		< "$WORK/$tag.ctl" >> "$WORK/$tag.out" 2>> "$WORK/$tag.err" 3>&- &
	TARGET_PID=$!
	TARGET_PIDS="$TARGET_PIDS $TARGET_PID"
	eval "exec $fd> \"$WORK/$tag.ctl\""
	wait_for_file "$WORK/$tag.ready"
}

count_of() { # FILE PATTERN
	grep -c -- "$2" "$1" 2>/dev/null || true
}

# Sends one command line and waits for the line that says it is done (its Nth occurrence).
send() { # TAG FD COMMAND DONE_PATTERN
	local n
	n=$(count_of "$WORK/$1.out" "$4")
	echo "$3" >&"$2"
	wait_for_count "$WORK/$1.out" "$4" $((n + 1))
}

go() { # TAG FD N
	send "$1" "$2" "go $3" "^BATCH done n=$3\$"
}

# Ends a target: "exit", EOF, then its status must be 0, its last word "DONE ok", no FAIL.
finish_target() { # TAG FD PID
	local rc=0
	echo exit >&"$2"
	eval "exec $2>&-"
	wait "$3" || rc=$?
	TARGET_PIDS=${TARGET_PIDS/ $3/}
	target_ok "$1" "$rc"
}

target_ok() { # TAG STATUS
	if [ "$2" -ne 0 ] || ! grep -q "^DONE ok$" "$WORK/$1.out" || grep -q "^FAIL" "$WORK/$1.out"; then
		echo "target $1 exited with $2:" >&2
		grep -v '^\(LAUNCH\|MEMCPY\|SYNC\|ALLOC\|FREE\) ' "$WORK/$1.out" | tail -n 30 >&2
		cat "$WORK/$1.err" >&2
		return 1
	fi
}

lines_of() { # FILE
	wc -l < "$1"
}

# The target's lines since line FROM (what it printed while gpuspy was attached).
window_lines() { # TAG FROM OUT
	tail -n +$(($2 + 1)) "$WORK/$1.out" > "$3"
}

bridge_mapped() { # PID
	grep -q libgpuspy_cupti "/proc/$1/maps"
}

refute_grep() { # PATTERN FILE
	if grep -Eq -- "$1" "$2"; then
		echo "unexpected '$1' in $2:" >&2
		cat "$2" >&2
		return 1
	fi
}

# ---- gpuspy ----

start_gpuspy() { # NAME RECORD_OPTIONS...
	local name=$1
	shift
	"${WRAP[@]}" "$GPUSPY" record "$@" -o "$WORK/$name.gpuspy" 2> "$WORK/$name.err" 3>&- &
	GPUSPY_PID=$!
	wait_for_line "$WORK/$name.err" "gpuspy: recording"
}

stop_gpuspy() { # NAME
	local rc=0
	kill -INT "$GPUSPY_PID"
	wait "$GPUSPY_PID" || rc=$?
	GPUSPY_PID=
	if [ "$rc" -ne 0 ]; then
		echo "gpuspy exited with $rc:" >&2
		cat "$WORK/$1.err" >&2
		return 1
	fi
}

# The lines gpuspy writes about loading the bridge into process PID (extended regexes): with
# -v when it was loaded (group 1: the thread it paused), and always when it was not (group 1:
# the reason).
loaded_re() { # PID
	echo "^gpuspy: pid $1: CUPTI bridge loaded \(thread ([0-9]+) paused [0-9]+ us, waited [0-9]+ us for a safe point\): .+$"
}

not_loaded_re() { # PID
	echo "^gpuspy: warning: pid $1: CUPTI bridge not loaded: (.+); GPU activity from uprobes only$"
}

# The -v line of a successful injection; prints the paused thread's id.
injected_line() { # NAME PID
	local re
	re=$(loaded_re "$2")
	wait_for_line "$WORK/$1.err" "CUPTI bridge loaded" >&2
	grep -E "$re" "$WORK/$1.err" | sed -E "s/$re/\1/" | grep . || {
		echo "no injection line for pid $2 in $WORK/$1.err:" >&2
		cat "$WORK/$1.err" >&2
		return 1
	}
}

# After a successful injection: the bridge was turned on in the target, and it subscribed.
bridge_on() { # NAME TAG PID SESSIONS
	wait_for_line "$WORK/$1.err" "gpuspy: CUPTI bridge in pid $3: .*libgpuspy_cupti.so: turned on"
	wait_for_count "$WORK/$2.log" "activity on: kernel" "$4"
}

# gpu_mode of one process: its bridge state and a regex its mode must match.
gpu_mode_is() { # NAME PID BRIDGE MODE_REGEX
	"$GPUSPY" report "$WORK/$1.gpuspy" --report gpu_mode --format json > "$WORK/$1.mode.json"
	jq -e --argjson pid "$2" --arg b "$3" --arg m "$4" \
		'[.[] | select(.pid == $pid)] | length == 1 and .[0].bridge == $b and (.[0].mode | test($m))
		 and (.[0].inject_pause_ns | type == "number")
		 and (if $b == "injected" then .[0].inject_pause_ns > 0 else true end)' \
		"$WORK/$1.mode.json" >/dev/null || {
		echo "gpu_mode of pid $2: want bridge '$3', mode ~ '$4':" >&2
		cat "$WORK/$1.mode.json" >&2
		return 1
	}
}

no_unmatched() { # NAME
	run "$GPUSPY" report "$WORK/$1.gpuspy" --report gpu_unmatched
	[[ "$output" == *"gpu unmatched: 0 gpu records without api record, 0 api records without uprobe span, 0 launches without gpu record"* ]] || {
		echo "$output" >&2
		return 1
	}
}

# The GPU records against the target's lines for the window (tests/lib/check_gpu_records.py:
# names, shapes, bytes, simulated durations, one flow from each launch), and nothing unmatched.
check_gpu_window() { # NAME PROGRAM_LINES KERNEL=NS...
	local name=$1 lines=$2
	shift 2
	"$GPUSPY" report "$WORK/$name.gpuspy" --report "$GPU_REPORTS" --format json > "$WORK/$name.json"
	"$GPUSPY" export "$WORK/$name.gpuspy" -o "$WORK/$name.chrome.json"
	python3 "$ROOT/tests/lib/check_gpu_records.py" "$lines" "$WORK/$name.json" \
		"$WORK/$name.chrome.json" "$@"
	python3 "$ROOT/tests/lib/check_chrome.py" "$WORK/$name.chrome.json"
	no_unmatched "$name"
}

# GPU kernels of one mangled name, GPU copies of one operation ("[CUDA memcpy Host-to-Device]")
# and CUDA API calls of one function (uprobes) in a trace.
kernels_of() { # NAME MANGLED
	"$GPUSPY" report "$WORK/$1.gpuspy" --report cuda_gpu_kern_sum --format json |
		jq --arg m "$2" '[.[] | select(.mangled == $m) | .instances] | add // 0'
}

copies_of() { # NAME OPERATION
	"$GPUSPY" report "$WORK/$1.gpuspy" --report cuda_gpu_mem_size_sum --format json |
		jq --arg o "$2" '[.[] | select(.operation == $o) | .count] | add // 0'
}

api_calls_of() { # NAME FUNCTION
	"$GPUSPY" report "$WORK/$1.gpuspy" --report cuda_api_sum --format json |
		jq --arg f "$2" '[.[] | select(.name == $f) | .calls] | add // 0'
}

# GPU copies of one kind and size in $WORK/NAME.chrome.json (the export).
copies_sized() { # NAME KIND BYTES
	jq --arg k "$2" --argjson b "$3" \
		'[.traceEvents[] | select(.cat == "gpu_memcpy" and .args.kind == $k and .args.bytes == $b)] | length' \
		"$WORK/$1.chrome.json"
}

no_gpu_records() { # NAME
	"$GPUSPY" report "$WORK/$1.gpuspy" --report cuda_gpu_trace --format json | jq -e 'length == 0'
}

# ---- tests ----

@test "-p on a CUDA program started without the bridge, blocked in read: bridge injected; the window's kernels and copies exactly, named, timed, on their stream and joined to their launches" {
	start_target loop 4 "$TGT/cuda_loop"
	pid=$TARGET_PID
	go loop 4 5 # mid-run: work before gpuspy comes
	! bridge_mapped "$pid" || false
	# waiting for its next command: in read(2) on the fifo
	case $(uname -m) in
	x86_64) [ "$(cut -d' ' -f1 "/proc/$pid/syscall")" = 0 ] ;;
	aarch64) [ "$(cut -d' ' -f1 "/proc/$pid/syscall")" = 63 ] ;;
	esac
	start_gpuspy t -v -p "$pid"
	tid=$(injected_line t "$pid")
	[ -d "/proc/$pid/task/$tid" ]
	bridge_on t loop "$pid" 1
	bridge_mapped "$pid"
	from=$(lines_of "$WORK/loop.out")
	go loop 4 3
	window_lines loop "$from" "$WORK/window.out"
	stop_gpuspy t
	wait_for_count "$WORK/loop.log" cuptiUnsubscribe 1
	# detached: it goes on, untraced
	go loop 4 2
	finish_target loop 4 "$pid"
	[ "$(grep -c '^LAUNCH' "$WORK/window.out")" -eq 3 ]
	[ "$(kernels_of t _Z11tick_kernelPj)" -eq 3 ]
	[ "$(copies_of t "[CUDA memcpy Host-to-Device]")" -eq 3 ]
	check_gpu_window t "$WORK/window.out" "$TICK"
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_gpu_kern_sum --format json |
		jq -e --argjson ns "$TICK_NS" '.[] | select(.mangled == "_Z11tick_kernelPj") | .min_ns == $ns and .max_ns == $ns'
	# kernels and copies on the one stream cuda_loop made
	jq -e '[.cuda_gpu_trace[] | .stream] | unique | length == 1' "$WORK/t.json"
	jq -e '[.gpu_util[] | select(.stream != "all")] | length == 1' "$WORK/t.json"
	gpu_mode_is t "$pid" injected '^cupti$'
	# the paused thread went back to its read(2): an EINTR there would have ended cuda_loop's
	# fgets() loop before the window's "go 3" (and "DONE ok" would come before its batch)
	[ "$(grep -n '^DONE ok$' "$WORK/loop.out" | cut -d: -f1)" -gt "$(grep -n '^BATCH done n=2$' "$WORK/loop.out" | cut -d: -f1)" ]
}

@test "injection while all 5 threads loop on CUDA, malloc/free and CPU work: every counted kernel once on its thread's stream, joined; every round trip stays correct" {
	start_target w 4 "$TGT/inject_workers"
	pid=$TARGET_PID
	send w 4 "busy 4" "^BUSY threads=4$"
	# the main thread too: no thread waits in read(2) for a command
	echo "spin 2500" >&4
	sleep 0.3
	start_gpuspy t -v -p "$pid"
	tid=$(injected_line t "$pid")
	# loaded while the main thread was still spinning, in one of the five threads
	[ "$(count_of "$WORK/w.out" "^SPIN done")" -eq 0 ]
	[ "$tid" -eq "$pid" ] || grep -Eq "^WORKER [0-3] tid=$tid started$" "$WORK/w.out"
	bridge_on t w "$pid" 1
	wait_for_line "$WORK/w.out" "^SPIN done ms=2500 iterations=[0-9]*$"
	send w 4 "count 5" "^COUNT done n=5 threads=4$"
	sleep 0.2 # more busy iterations, recorded
	send w 4 quiet "^QUIET ok$"
	stop_gpuspy t
	finish_target w 4 "$pid"
	[ "$(grep -Ec '^WORKER [0-3] tid=[0-9]+ iterations=[0-9]+ counted=5 ok$' "$WORK/w.out")" -eq 4 ]
	gpu_mode_is t "$pid" injected '^cupti$'
	no_unmatched t
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_gpu_trace --format json > "$WORK/trace.json"
	# per worker (by the thread that launched): 5 count_kernels, grid = index + 1, the simulated
	# duration, one stream each, four different streams, the workers' own thread ids
	sed -nE 's/^WORKER ([0-3]) tid=([0-9]+) started$/\1 \2/p' "$WORK/w.out" > "$WORK/tids"
	[ "$(wc -l < "$WORK/tids")" -eq 4 ]
	while read -r index wtid; do
		jq -e --arg m "$COUNT_NAME" --argjson tid "$wtid" --argjson grid $((index + 1)) \
			--argjson ns "$COUNT_NS" \
			'[.[] | select(.mangled == $m and .tid == $tid)] | length == 5
			 and all(.grid_x == $grid and .duration_ns == $ns)
			 and ([.[].stream] | unique | length == 1)' "$WORK/trace.json"
	done < "$WORK/tids"
	jq -e --arg m "$COUNT_NAME" '[.[] | select(.mangled == $m) | .stream] | unique | length == 4' "$WORK/trace.json"
	jq -e --arg m "$COUNT_NAME" '[.[] | select(.mangled == $m)] | length == 20' "$WORK/trace.json"
	# the busy loop went on while recorded: its kernels too, on the workers' streams
	jq -e --arg m "$BUSY_NAME" --argjson ns "$BUSY_NS" \
		'[.[] | select(.mangled == $m)] | length >= 4 and all(.duration_ns == $ns)' "$WORK/trace.json"
	# the counted copies (busy ones are never 4096 bytes): one HtoD and one DtoH each
	# (no check_chrome.py here: with CUPTI on and four busy threads a syscall span sometimes
	# overlaps the end of the CUDA call around it, with or without injection; see the issue)
	"$GPUSPY" export "$WORK/t.gpuspy" -o "$WORK/t.chrome.json"
	[ "$(copies_sized t Host-to-Device 4096)" -eq 20 ]
	[ "$(copies_sized t Device-to-Host 4096)" -eq 20 ]
	# the uprobes saw the same launches
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_launches --format json |
		jq -e --arg m "$COUNT_NAME" '[.[] | select(.mangled == $m) | .launches] | add == 20'
}

@test "attach while the target is exiting (slow atexit handler with CUDA work): its exit path, output and status stay correct, gpuspy exits 0 and says what it did" {
	start_target x 4 "$TGT/inject_workers"
	pid=$TARGET_PID
	send x 4 "slowexit 3000" "^SLOWEXIT ms=3000$"
	go x 4 2
	echo exit >&4
	exec 4>&-
	wait_for_line "$WORK/x.out" "^EXITING ms=3000$"
	"$GPUSPY" record -v -p "$pid" -o "$WORK/t.gpuspy" 2> "$WORK/t.err" 3>&- &
	GPUSPY_PID=$!
	rc=0
	wait "$pid" || rc=$?
	TARGET_PIDS=
	target_ok x "$rc"
	grep -q "^EXITED ok steps=[0-9]*$" "$WORK/x.out"
	# the last line is the exit handler's
	[ "$(tail -n 1 "$WORK/x.out" | cut -d' ' -f1-2)" = "EXITED ok" ]
	# gpuspy ends by itself once its only process has exited
	for _ in $(seq 100); do
		kill -0 "$GPUSPY_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$GPUSPY_PID" 2>/dev/null; then
		echo "gpuspy still running 10 s after its process exited" >&2
		cat "$WORK/t.err" >&2
		return 1
	fi
	rc=0
	wait "$GPUSPY_PID" || rc=$?
	GPUSPY_PID=
	cat "$WORK/t.err"
	[ "$rc" -eq 0 ]
	# one clear line either way
	[ "$(grep -Ec "$(loaded_re "$pid")|$(not_loaded_re "$pid")" "$WORK/t.err")" -eq 1 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report gpu_mode --format json |
		jq -e --argjson pid "$pid" '[.[] | select(.pid == $pid)] | length == 1 and (.[0].bridge | IN("injected", "failed", "skipped"))'
	# the handler's CUDA calls after gpuspy came were traced
	[ "$(api_calls_of t cudaStreamSynchronize)" -gt 0 ]
}

@test "20 attach/detach cycles on one process: injected by the first, present for the others, every window exact" {
	start_target loop 4 "$TGT/cuda_loop"
	pid=$TARGET_PID
	for cycle in $(seq 20); do
		n=$((cycle % 4 + 1))
		start_gpuspy "c$cycle" -v -p "$pid"
		if [ "$cycle" -eq 1 ]; then
			injected_line c1 "$pid" > /dev/null
		fi
		bridge_on "c$cycle" loop "$pid" "$cycle"
		go loop 4 "$n"
		stop_gpuspy "c$cycle"
		wait_for_count "$WORK/loop.log" cuptiUnsubscribe "$cycle"
	done
	go loop 4 2
	finish_target loop 4 "$pid"
	# loaded once, subscribed once per window
	[ "$(grep -c "loaded late" "$WORK/loop.log")" -eq 1 ]
	[ "$(grep -c "activity on: kernel" "$WORK/loop.log")" -eq 20 ]
	[ "$(grep -c "cuptiUnsubscribe" "$WORK/loop.log")" -eq 20 ]
	for cycle in $(seq 20); do
		n=$((cycle % 4 + 1))
		k=$(kernels_of "c$cycle" _Z11tick_kernelPj)
		c=$(copies_of "c$cycle" "[CUDA memcpy Host-to-Device]")
		if [ "$k" -ne "$n" ] || [ "$c" -ne "$n" ]; then
			echo "window $cycle: $k kernels and $c copies, the target made $n of each" >&2
			"$GPUSPY" report "$WORK/c$cycle.gpuspy" --report gpu_mode >&2
			return 1
		fi
		no_unmatched "c$cycle"
		if [ "$cycle" -eq 1 ]; then
			gpu_mode_is c1 "$pid" injected '^cupti$'
		else
			refute_grep "CUPTI bridge (loaded|not loaded)" "$WORK/c$cycle.err"
			gpu_mode_is "c$cycle" "$pid" present '^cupti$'
		fi
	done
}

@test "fork after injection: a CPU child and an exec'ing child exit 0, the parent's CUDA goes on and is recorded exactly" {
	start_target f 4 "$TGT/inject_workers"
	pid=$TARGET_PID
	start_gpuspy t -v -p "$pid"
	injected_line t "$pid" > /dev/null
	bridge_on t f "$pid" 1
	send f 4 "fork cpu" "^FORK mode=cpu status=0 ok$"
	send f 4 "fork exec" "^FORK mode=exec status=0 ok$"
	from=$(lines_of "$WORK/f.out")
	go f 4 3
	window_lines f "$from" "$WORK/window.out"
	# and the children of a busy process
	send f 4 "busy 2" "^BUSY threads=2$"
	send f 4 "fork cpu" "^FORK mode=cpu status=0 ok$"
	send f 4 "quiet" "^QUIET ok$"
	stop_gpuspy t
	finish_target f 4 "$pid"
	[ "$(grep -c '^FORK mode=.* status=0 ok$' "$WORK/f.out")" -eq 3 ]
	# the children were followed, and left alone: only the parent got the bridge
	"$GPUSPY" report "$WORK/t.gpuspy" --report processes --format json > "$WORK/procs.json"
	jq -e --argjson pid "$pid" '[.[] | select(.ppid == $pid)] | length == 3' "$WORK/procs.json"
	jq -e --argjson pid "$pid" '[.[] | select(.ppid == $pid and .name == "true")] | length == 1' "$WORK/procs.json"
	[ "$(grep -c "CUPTI bridge loaded" "$WORK/t.err")" -eq 1 ]
	refute_grep "CUPTI bridge not loaded" "$WORK/t.err"
	gpu_mode_is t "$pid" injected '^cupti$'
	# the parent's batch after the forks, exactly
	[ "$(kernels_of t _Z11tick_kernelPj)" -eq 3 ]
	"$GPUSPY" export "$WORK/t.gpuspy" -o "$WORK/t.chrome.json"
	[ "$(copies_sized t Host-to-Device 4096)" -eq 3 ]
	[ "$(copies_sized t Device-to-Host 4096)" -eq 3 ]
	no_unmatched t
}

@test "Python ctypes process attached by pid: its GPU kernels joined to the launches, which carry the Python stack" {
	[ -x "$PY" ] || skip "no $PY"
	start_target py 4 "$PY" "$ROOT/tests/targets/cuda/inject_ctypes_loop.py"
	pid=$TARGET_PID
	go py 4 2
	start_gpuspy t -v -p "$pid"
	wait_for_line "$WORK/t.err" "^gpuspy: python 3\.11\.[0-9]* in pid $pid: stacks on$"
	injected_line t "$pid" > /dev/null
	bridge_on t py "$pid" 1
	from=$(lines_of "$WORK/py.out")
	go py 4 4
	window_lines py "$from" "$WORK/window.out"
	stop_gpuspy t
	finish_target py 4 "$pid"
	gpu_mode_is t "$pid" injected '^cupti$'
	check_gpu_window t "$WORK/window.out" step_kernel=50000
	python3 "$ROOT/tests/lib/check_inject_python.py" "$WORK/t.chrome.json" step_kernel 4 \
		launch_step train_step run_batch
	python3 "$ROOT/tests/lib/check_python_timeline.py" "$WORK/t.chrome.json" \
		--stacks cuda_driver --stack-function launch_step
	# the copies were made from copy_round_trip()
	jq -e '[.traceEvents[] | select(.cat == "cuda_runtime" and .name == "cudaMemcpy")
		| select(any(.args.python_stack[]?; startswith("copy_round_trip (")))] | length == 8' \
		"$WORK/t.chrome.json"
}

# A parent with no CUDA in it that execs cuda_loop (with ENV) when $WORK/TAG.go is written:
# traced from before, CUDA starts only after gpuspy attached. Sets TARGET_PID; the loop's fifo
# is on fd 4.
start_late_cuda() { # TAG [ENV...]
	local tag=$1
	shift
	mkfifo "$WORK/$tag.go" "$WORK/$tag.ctl"
	env LD_LIBRARY_PATH="$FC" GPUSPY_CUPTI_LOG="$WORK/$tag.log" "$@" \
		bash -c 'read -r _ < "$1"; exec "$2" "$3"' _ "$WORK/$tag.go" "$TGT/cuda_loop" "$WORK/$tag.ready" \
		< "$WORK/$tag.ctl" >> "$WORK/$tag.out" 2>> "$WORK/$tag.err" 3>&- &
	TARGET_PID=$!
	TARGET_PIDS="$TARGET_PIDS $TARGET_PID"
	exec 4> "$WORK/$tag.ctl"
}

@test "-p on a process that starts CUDA after the attach: the bridge is loaded after its first CUDA call, and its kernels from then on are recorded exactly" {
	start_late_cuda late
	pid=$TARGET_PID
	start_gpuspy t -v -p "$pid"
	! bridge_mapped "$pid" || false
	echo go > "$WORK/late.go"
	wait_for_file "$WORK/late.ready"
	injected_line t "$pid" > /dev/null
	grep -E "$(loaded_re "$pid")" "$WORK/t.err" | grep -q '(CUDA started after the attach)$'
	bridge_on t late "$pid" 1
	from=$(lines_of "$WORK/late.out")
	go late 4 3
	window_lines late "$from" "$WORK/window.out"
	stop_gpuspy t
	finish_target late 4 "$pid"
	# once: its later calls do not queue it again
	[ "$(grep -cE "$(loaded_re "$pid")" "$WORK/t.err")" -eq 1 ]
	[ "$(kernels_of t _Z11tick_kernelPj)" -eq 3 ]
	[ "$(copies_of t "[CUDA memcpy Host-to-Device]")" -eq 3 ]
	check_gpu_window t "$WORK/window.out" "$TICK"
	gpu_mode_is t "$pid" injected '^cupti$'
	# the set-up's launch, before the bridge: counted by uprobes
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_launches --format json |
		jq -e '[.[] | select(.mangled == "_Z11tick_kernelPj") | .launches] | add == 4'
}

@test "--no-inject, or CUDA_INJECTION64_PATH naming another tool: a process that starts CUDA after the attach is left alone" {
	# --no-inject
	start_late_cuda late
	pid=$TARGET_PID
	start_gpuspy t -v --no-inject -p "$pid"
	echo go > "$WORK/late.go"
	wait_for_file "$WORK/late.ready"
	go late 4 2
	sleep 1 # past the moment a load would have come
	! bridge_mapped "$pid" || false
	stop_gpuspy t
	finish_target late 4 "$pid"
	refute_grep "CUPTI bridge (loaded|not loaded)" "$WORK/t.err"
	no_gpu_records t
	# another CUPTI tool named at start (as under nsys): the driver loads it at cuInit
	start_late_cuda other CUDA_INJECTION64_PATH="$FC/libcupti_dump.so" CUPTI_DUMP_FILE="$WORK/dump"
	pid=$TARGET_PID
	start_gpuspy t2 -v -p "$pid"
	echo go > "$WORK/other.go"
	wait_for_file "$WORK/other.ready"
	go other 4 2
	sleep 1
	! bridge_mapped "$pid" || false
	stop_gpuspy t2
	finish_target other 4 "$pid"
	refute_grep "CUPTI bridge (loaded|not loaded)" "$WORK/t2.err"
	# the other tool got its records
	[ -s "$WORK/dump" ]
}

@test "ptrace refused (seccomp): one line saying 'ptrace not permitted', the recording goes on with uprobes only, bridge 'refused'" {
	start_target loop 4 "$TGT/cuda_loop"
	pid=$TARGET_PID
	# LeakSanitizer (the sanitizer build make test uses) stops the world with ptrace itself
	WRAP=(env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" python3 "$NO_PTRACE" --check)
	start_gpuspy t -p "$pid" # no -v: the line comes anyway
	wait_for_line "$WORK/t.err" "CUPTI bridge not loaded"
	go loop 4 3
	stop_gpuspy t
	! bridge_mapped "$pid" || false
	finish_target loop 4 "$pid"
	cat "$WORK/t.err"
	[ "$(grep -c "CUPTI bridge not loaded" "$WORK/t.err")" -eq 1 ]
	grep -E "$(not_loaded_re "$pid")" "$WORK/t.err" | grep -q "ptrace not permitted"
	refute_grep "turned on" "$WORK/t.err"
	gpu_mode_is t "$pid" refused '^uprobes-only'
	no_gpu_records t
	[ "$(api_calls_of t cudaMemcpyAsync)" -eq 3 ]
	[ "$(api_calls_of t cudaStreamSynchronize)" -eq 3 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_launches --format json |
		jq -e '[.[] | select(.mangled == "_Z11tick_kernelPj") | .launches] | add == 3'
}

@test "Yama ptrace_scope 2, gpuspy and target without CAP_SYS_PTRACE: refused with 'ptrace not permitted', uprobes only" {
	[ -e "$YAMA" ] || skip "no Yama LSM ($YAMA absent)"
	scope=$(cat "$YAMA")
	[ "$scope" -le 2 ] || skip "Yama ptrace_scope is $scope (3 cannot be lowered)"
	# same uid, and the target's capabilities a subset of gpuspy's: only Yama stands between them
	drop=(setpriv --bounding-set -sys_ptrace --inh-caps -sys_ptrace)
	start_target loop 4 "${drop[@]}" "$TGT/cuda_loop"
	pid=$TARGET_PID
	YAMA_SAVED=$scope
	echo 2 > "$YAMA"
	WRAP=("${drop[@]}")
	start_gpuspy t -p "$pid"
	wait_for_line "$WORK/t.err" "CUPTI bridge not loaded"
	go loop 4 3
	stop_gpuspy t
	echo "$YAMA_SAVED" > "$YAMA"
	YAMA_SAVED=
	finish_target loop 4 "$pid"
	cat "$WORK/t.err"
	grep -E "$(not_loaded_re "$pid")" "$WORK/t.err" | grep -q "ptrace not permitted"
	gpu_mode_is t "$pid" refused '^uprobes-only'
	no_gpu_records t
	[ "$(api_calls_of t cudaMemcpyAsync)" -eq 3 ]
}

@test "--no-inject: the target is left untouched (no bridge mapped), bridge 'skipped', CUDA calls by uprobes only" {
	start_target loop 4 "$TGT/cuda_loop"
	pid=$TARGET_PID
	start_gpuspy t -v --no-inject -p "$pid"
	go loop 4 3
	sleep 0.1 # the bridge would have subscribed by now
	stop_gpuspy t
	! bridge_mapped "$pid" || false
	[ ! -s "$WORK/loop.log" ]
	go loop 4 1
	finish_target loop 4 "$pid"
	cat "$WORK/t.err"
	refute_grep "CUPTI bridge (loaded|in pid)" "$WORK/t.err"
	gpu_mode_is t "$pid" skipped '^uprobes-only'
	no_gpu_records t
	[ "$(api_calls_of t cudaMemcpyAsync)" -eq 3 ]
}

@test "a process whose CUPTI already has a subscriber is left alone: its callbacks and subscription intact, uprobes only" {
	[ -x "$PY" ] || skip "no $PY"
	start_target busy 4 "$PY" "$ROOT/tests/targets/cuda/inject_cupti_busy.py"
	pid=$TARGET_PID
	grep -q "^SUBSCRIBED ok$" "$WORK/busy.out"
	start_gpuspy t -v -p "$pid"
	# the bridge, if gpuspy loaded one, tries CUPTI 20-60 ms after
	sleep 0.3
	go busy 4 3
	stop_gpuspy t
	go busy 4 2 # after detach: its callbacks still exact
	finish_target busy 4 "$pid"
	cat "$WORK/t.err"
	[ "$(grep -c "^CALLBACKS ok" "$WORK/busy.out")" -eq 3 ]
	"$GPUSPY" report "$WORK/t.gpuspy" --report gpu_mode --format json > "$WORK/mode.json"
	cat "$WORK/mode.json"
	jq -e --argjson pid "$pid" '[.[] | select(.pid == $pid)] | length == 1
		and (.[0].mode | startswith("uprobes-only"))
		and (.[0].bridge == "skipped" or (.[0].mode | test("CUPTI busy")))' "$WORK/mode.json"
	no_gpu_records t
	[ "$(api_calls_of t cudaMemcpy)" -eq 6 ]
}
