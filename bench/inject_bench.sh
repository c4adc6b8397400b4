#!/bin/sh
# Loading the CUPTI bridge into a running CUDA process (`gpuspy record -p`, bridge injection), on
# the simulated CUDA stack. Every run attaches to a FRESH tests/targets/cuda/cuda_loop started
# without the bridge (no CUDA_INJECTION64_PATH); the runs of all cases are interleaved, one
# repetition after the other, so the floor and the injection see the same machine. Cases:
#  idle     the target blocked in its stdin read (a safe point at once);
#  busy     the target in a long `go BATCH` loop (tick_kernel launch, 4 KiB HtoD copy, stream
#           sync, over and over) with cuda_loop's 10 us kernels: kernels run all the time, the
#           thread mostly runs and sleeps briefly in each sync (clock_nanosleep, a safe point);
#  busy1ms  the same with 1 ms kernels (FAKECUDA_KERNEL_NS): the thread mostly waits in its sync.
# Runs per case and repetition:
#  - floor: gpuspy record -v --no-inject -p PID (probes attached, nothing loaded);
#  - inject: gpuspy record -v -p PID (the bridge injected);
#  - present (busy only): gpuspy record -v -p PID on a target started with
#    CUDA_INJECTION64_PATH (bridge loaded at cuInit): GPU records without any injection.
# Measured, all on CLOCK_MONOTONIC, t0 = just before gpuspy is started:
#  - pause: how long the borrowed thread was held, from its first ptrace stop to its release
#    (the -v line's "paused N us", checked against gpu_mode's inject_pause_ns), and of it the
#    wait for a safe point ("waited M us"); runs where the bridge was not loaded are counted
#    apart, with how long the thread was held (followed) before gpuspy gave up;
#  - recording: t0 to gpuspy's "gpuspy: recording" line (probes live and, when injecting, the
#    bridge loaded and its probe attached);
#  - activity on: t0 to the bridge's "activity on" line in the target's GPUSPY_CUPTI_LOG (CUPTI
#    enabled by the bridge's control thread, which checks its gate every 20 ms);
#  - first kernel (busy cases; the idle target launches nothing): the first GPU kernel record's
#    start in the trace (the trace header's created_monotonic_ns + cuda_gpu_trace's start_ns)
#    minus t0.
# gpuspy's lines are timestamped as it writes them (its stderr is a pipe read by the timer), the
# bridge log is polled every 0.5 ms. Figures are median, min and max over REPEATS runs; the
# costs are the difference and ratio of medians to the --no-inject floor of the same case and
# run. Results go to stdout as a README-ready table.
# usage: bench/inject_bench.sh BUILD_DIR [REPEATS]     (as root; `make bench` builds what it
#        needs. REPEATS: default $INJECT_REPEATS or 10. INJECT_BATCH: iterations of the busy
#        loop, default 1000000, killed after its run; INJECT_DWELL_MS: how long gpuspy stays
#        attached after activity on, default 200; INJECT_KEEP=FILE: keep the per-run results)
set -eu
usage="usage: bench/inject_bench.sh BUILD_DIR [REPEATS]"
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "$usage" >&2
	exit 1
fi
build=$1
repeats=${2:-${INJECT_REPEATS:-10}}
batch=${INJECT_BATCH:-1000000}
dwell=${INJECT_DWELL_MS:-200}
gpuspy=$build/gpuspy
loop=$build/targets/cuda/cuda_loop
bridge=$build/libgpuspy_cupti.so
libs=$build/fakecuda
py=${PYTHON3:-python3}
long_kernel=_Z11tick_kernelPj=1000000 # the busy1ms case: cuda_loop's kernel made 1 ms long
work=$(mktemp -d)
target=

fail() {
	echo "inject_bench: $*" >&2
	exit 1
}

# A gpuspy killed while it holds a thread leaves the target stopped: SIGKILL ends it anyway.
cleanup() {
	exec 4>&- 2> /dev/null || true
	if [ -n "$target" ]; then kill -KILL "$target" 2> /dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

case $repeats in '' | *[!0-9]* | 0*) fail "REPEATS must be a positive integer: $repeats" ;; esac
case $batch in '' | *[!0-9]* | 0*) fail "INJECT_BATCH must be a positive integer: $batch" ;; esac
case $dwell in '' | *[!0-9]*) fail "INJECT_DWELL_MS must be an integer: $dwell" ;; esac
[ "$(id -u)" -eq 0 ] || fail "must run as root (uprobes, ptrace)"
[ -x "$gpuspy" ] || fail "$gpuspy not found: make BUILD=$build"
[ -f "$bridge" ] || fail "$bridge not found: make BUILD=$build (needs the CUPTI headers)"
for f in "$loop" "$libs/libcudart.so.13"; do
	[ -e "$f" ] || fail "$f not found: make BUILD=$build fakecuda"
done
"$py" -c 'import json, select, struct, subprocess' 2> /dev/null || fail "needs python3 ($py)"

# ---- the timer: runs gpuspy, timestamps its lines and the bridge log; then the summary ----
cat > "$work/timer.py" << 'EOF'
import json, os, re, select, signal, statistics, struct, subprocess, sys, time

def run(argv):
    # timer.py run OUT.gpuspy LOG WANT_ACTIVITY DWELL_MS GPUSPY RECORD-ARGS...
    out, log, want_act, dwell_ms, gpuspy = argv[0], argv[1], argv[2] == "1", int(argv[3]), argv[4]
    cmd = [gpuspy, "record"] + argv[5:] + ["-f", "-o", out]
    res = {}
    def stamp(key, t):
        res.setdefault(key, (t - t0) / 1e6)
    t0 = time.monotonic_ns()
    g = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    fd = g.stderr.fileno()
    os.set_blocking(fd, False)
    buf, err_lines, log_pos, log_buf = b"", [], 0, b""
    stop_at = None
    deadline = t0 + 30_000_000_000
    interrupted = False
    try:
        while True:
            r, _, _ = select.select([fd], [], [], 0.0005)
            now = time.monotonic_ns()
            if r:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for raw in lines:
                    line = raw.decode(errors="replace")
                    if not line.startswith("libbpf:"):
                        err_lines.append(line)
                    if re.match(r"gpuspy: recording \d+ process", line):
                        stamp("rec_ms", now)
                    m = re.search(r"CUPTI bridge loaded \(thread (\d+) paused (\d+) us, "
                                  r"waited (\d+) us for a safe point\): "
                                  r".*(entering|blocked in) (\w+)\(\)", line)
                    if m:
                        stamp("inject_ms", now)
                        res["tid"] = m.group(1)
                        res["pause_us"], res["wait_us"] = int(m.group(2)), int(m.group(3))
                        res["safe_point"] = ("entering_" if m.group(4) == "entering"
                                             else "in_") + m.group(5)
                    m = re.search(r"CUPTI bridge not loaded: (.*); GPU activity", line)
                    if m:
                        res["why"] = re.sub(r"\s+", "_", re.sub(r"\d+", "N", m.group(1)))
                    if re.search(r"CUPTI bridge in pid \d+: .*turned on", line):
                        stamp("on_ms", now)
            try:
                size = os.stat(log).st_size
            except OSError:
                size = log_pos
            if size > log_pos:
                with open(log, "rb") as f:
                    f.seek(log_pos)
                    log_buf += f.read(size - log_pos)
                log_pos = size
                if b"activity on:" in log_buf:
                    stamp("act_ms", now)
            if stop_at is None and "rec_ms" in res and ("act_ms" in res or not want_act
                                                        or "why" in res):
                stop_at = now + dwell_ms * 1_000_000
            if not interrupted and ((stop_at is not None and now >= stop_at) or now >= deadline):
                if now >= deadline:
                    res["timed_out"] = 1
                g.send_signal(signal.SIGINT)
                interrupted = True
                deadline = now + 30_000_000_000
            elif interrupted and now >= deadline:
                g.kill()
    except BaseException:
        # whatever went wrong here, gpuspy stops cleanly (it gives back a held thread)
        g.send_signal(signal.SIGINT)
        try:
            g.wait(10)
        except subprocess.TimeoutExpired:
            g.kill()
        raise
    rc = g.wait()
    if rc != 0:
        sys.stderr.write("gpuspy exited with %d: %s\n%s\n"
                         % (rc, " ".join(cmd), "\n".join(err_lines[-15:])))
        sys.exit(1)
    # the trace: its start on CLOCK_MONOTONIC, the bridge record, the first kernel
    with open(out, "rb") as f:
        hdr = f.read(32)
    if hdr[:8] != b"GPUSPYTR":
        sys.exit("%s: not a gpuspy trace" % out)
    created_mono = struct.unpack_from("<Q", hdr, 24)[0]
    res["trace_start_ms"] = (created_mono - t0) / 1e6
    def report(name):
        # retried: on a shared machine a stray signal (a reused pid) has ended one
        for attempt in range(3):
            p = subprocess.run([gpuspy, "report", out, "--report", name, "--format", "json"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            if p.returncode >= 0:
                break
        if p.returncode != 0:
            sys.exit("gpuspy report %s --report %s: exit status %d" % (out, name, p.returncode))
        return json.loads(p.stdout or b"[]")
    pid = int(cmd[cmd.index("-p") + 1])
    modes = [m for m in report("gpu_mode") if m.get("pid") == pid]
    if modes:
        res["bridge"] = modes[0].get("bridge")
        res["mode_pause_us"] = (modes[0].get("inject_pause_ns") or 0) / 1e3
    kernels = [k for k in report("cuda_gpu_trace") if k.get("grid_x") is not None]
    if kernels:
        res["kern_ms"] = (created_mono + min(k["start_ns"] for k in kernels) - t0) / 1e6
        res["kernels"] = len(kernels)
    res["gpu_lost"] = sum(l.get("lost", 0) for l in report("losses") if "GPU" in l.get("kind", ""))
    print(" ".join("%s=%s" % kv for kv in res.items()))

def summary(argv):
    path, header = argv[0], argv[1]
    runs = {}
    for line in open(path):
        kv = dict(f.split("=", 1) for f in line.split())
        # steps within one run (less noisy than the whole attach, which varies run to run)
        for a, b in (("inject", "rec"), ("rec", "act"), ("inject", "act")):
            if a + "_ms" in kv and b + "_ms" in kv:
                kv["%s_to_%s_ms" % (a, b)] = float(kv[b + "_ms"]) - float(kv[a + "_ms"])
        runs.setdefault(kv["case"], []).append(kv)
    def ok(case):
        # runs of an injecting case count only where the bridge was loaded; failures are listed
        rs = runs.get(case, [])
        return [r for r in rs if r.get("bridge") == "injected"] if case.endswith("_inject") else rs
    def vals(case, key):
        return [float(r[key]) for r in ok(case) if key in r]
    rows = []
    def row(label, case, key, unit, floor=None):
        v = vals(case, key)
        n = len(runs.get(case, []))
        if not v:
            rows.append((label, "n/a (0/%d runs)" % n, "", "", ""))
            return
        fmt = "%.0f" if unit == "us" else "%.1f"
        cells = [(fmt % x) + " " + unit for x in (statistics.median(v), min(v), max(v))]
        note = "" if len(v) == n else " (%d/%d runs)" % (len(v), n)
        vs = ""
        f = vals(*floor) if floor else []
        if f:
            m, fm = statistics.median(v), statistics.median(f)
            vs = "%+.1f ms, %.2fx" % (m - fm, m / fm)
        rows.append((label + note, cells[0], cells[1], cells[2], vs))
    def failures(case):
        bad = [r for r in runs.get(case, []) if r.get("bridge") != "injected"]
        if bad:
            held = [float(r.get("mode_pause_us", 0)) / 1e3 for r in bad]
            why = sorted({r.get("why", "?").replace("_", " ") for r in bad})
            rows.append(("bridge NOT loaded: %d/%d runs (%s); the thread was held (followed) for"
                         % (len(bad), len(runs[case]), "; ".join(why)),
                         "%.0f ms" % statistics.median(held), "%.0f ms" % min(held),
                         "%.0f ms" % max(held), ""))
    print(header)
    cases = (("idle", "idle target, blocked in read(0)"),
             ("busy", "busy target, cuda_loop's 10 us kernels: launch + 4 KiB copy + sync in a loop"),
             ("busy1ms", "busy target, 1 ms kernels (the thread mostly waits in its sync)"))
    for case, title in cases:
        if case + "_floor" not in runs:
            continue
        fl = (case + "_floor", "rec_ms")
        inj = case + "_inject"
        rows.append(("**" + title + "**", "", "", "", ""))
        row("thread paused (-v line)", inj, "pause_us", "us")
        row("thread paused (gpu_mode inject_pause_ns)", inj, "mode_pause_us", "us")
        row("of it, waiting for a safe point", inj, "wait_us", "us")
        failures(inj)
        row("start to `recording`, --no-inject (floor)", fl[0], "rec_ms", "ms")
        row("start to `recording`, injected", inj, "rec_ms", "ms", fl)
        row("  of it, -v line to `recording` (the new bridge's probe attached)", inj,
            "inject_to_rec_ms", "ms")
        row("start to bridge `activity on`, injected", inj, "act_ms", "ms", fl)
        row("  `recording` to `activity on`", inj, "rec_to_act_ms", "ms")
        row("  -v line to `activity on` (the new bridge's control thread: two 20 ms gate polls)",
            inj, "inject_to_act_ms", "ms")
        if case != "idle":
            row("start to first kernel record, injected", inj, "kern_ms", "ms", fl)
        if case + "_present" in runs:
            pre = case + "_present"
            row("start to `recording`, bridge preloaded (no injection)", pre, "rec_ms", "ms", fl)
            row("start to `activity on`, bridge preloaded", pre, "act_ms", "ms", fl)
            row("  `recording` to `activity on`", pre, "rec_to_act_ms", "ms")
            row("start to first kernel record, bridge preloaded", pre, "kern_ms", "ms", fl)
    print("| measurement | median | min | max | vs floor (median) |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    # consistency: the -v line against gpu_mode (us, truncated), the safe points, the bridge state
    def counts(rs, key):
        c = {}
        for r in rs:
            c[r.get(key, "none")] = c.get(r.get(key, "none"), 0) + 1
        return ", ".join("%s x%d" % kv for kv in sorted(c.items()))
    for case in sorted(runs):
        rs = runs[case]
        line = "%s: gpu_mode bridge %s" % (case, counts(rs, "bridge"))
        if case.endswith("_inject"):
            bad = [r for r in rs if "pause_us" in r and "mode_pause_us" in r
                   and not 0 <= float(r["mode_pause_us"]) - float(r["pause_us"]) < 1]
            line += "; safe points %s; -v pause %s gpu_mode inject_pause_ns" % (
                counts(rs, "safe_point"),
                "agrees with" if not bad else "DISAGREES (%d runs) with" % len(bad))
        lost = sum(int(r.get("gpu_lost", 0)) for r in rs)
        if lost:
            line += "; GPU records lost: %d" % lost
        print(line)
    late = [r for c in runs.values() for r in c if "timed_out" in r]
    if late:
        print("WARNING: %d runs timed out" % len(late))

{"run": run, "summary": summary}[sys.argv[1]](sys.argv[2:])
EOF

# ---- targets ----

# Waits up to 10 s for a file to exist (or a line in it).
wait_for() { # FILE [PATTERN]
	i=0
	while ! { [ -e "$1" ] && { [ $# -lt 2 ] || grep -q -- "$2" "$1"; }; }; do
		i=$((i + 1))
		[ $i -lt 2000 ] || fail "timed out waiting for ${2:-$1} in $1"
		sleep 0.005
	done
}

# Starts a fresh cuda_loop driven through a fifo on fd 4; sets target. ENV... go to env(1).
start_target() { # ENV...
	rm -f "$work/ctl" "$work/ready" "$work/loop.out" "$work/loop.err" "$work/bridge.log"
	mkfifo "$work/ctl"
	env LD_LIBRARY_PATH="$libs" GPUSPY_CUPTI_LOG="$work/bridge.log" "$@" \
		"$loop" "$work/ready" < "$work/ctl" > "$work/loop.out" 2> "$work/loop.err" &
	target=$!
	exec 4> "$work/ctl"
	wait_for "$work/ready"
}

# Idle: the main (only) thread blocked in read(0) on the fifo.
wait_idle() {
	i=0
	while ! grep -q '^0 ' "/proc/$target/syscall" 2> /dev/null; do
		i=$((i + 1))
		[ $i -lt 2000 ] || fail "cuda_loop $target never blocked in read"
		sleep 0.005
	done
}

# Busy: a batch running, some iterations done.
start_busy() {
	echo "go $batch" >&4
	i=0
	while [ "$(grep -c '^LAUNCH' "$work/loop.out")" -lt 100 ]; do
		i=$((i + 1))
		[ $i -lt 2000 ] || fail "cuda_loop $target does not run its batch"
		sleep 0.005
	done
}

# Idle target after a run: it must still work and end cleanly.
finish_idle() {
	echo "go 10" >&4
	wait_for "$work/loop.out" "^BATCH done n=10$"
	echo exit >&4
	exec 4>&-
	rc=0
	wait "$target" || rc=$?
	if [ $rc -ne 0 ] || ! grep -q '^DONE ok$' "$work/loop.out"; then
		fail "cuda_loop exited with $rc after the run: $(tail -3 "$work/loop.err")"
	fi
	target=
}

# Busy target after a run: still making progress, then killed (its batch is long).
finish_busy() {
	before=$(wc -c < "$work/loop.out")
	sleep 0.05
	[ "$(wc -c < "$work/loop.out")" -gt "$before" ] || fail "cuda_loop $target stopped making progress"
	exec 4>&-
	kill -KILL "$target"
	wait "$target" 2> /dev/null || true
	target=
}

# One timed gpuspy run against the current target; appends a result line.
timed() { # CASE WANT_ACTIVITY RECORD-ARGS...
	name=$1 want=$2
	shift 2
	"$py" "$work/timer.py" run "$work/t.gpuspy" "$work/bridge.log" "$want" "$dwell" "$gpuspy" \
		-v "$@" -p "$target" > "$work/run.txt" || fail "run $name $rep failed"
	echo "case=$name rep=$rep $(cat "$work/run.txt")" >> "$work/results"
	printf ' %s' "$name" >&2
}

cmdline="sh bench/inject_bench.sh $build $repeats"
[ "$batch" = 1000000 ] || cmdline="INJECT_BATCH=$batch $cmdline"
[ "$dwell" = 200 ] || cmdline="INJECT_DWELL_MS=$dwell $cmdline"
: > "$work/results"
rep=1
while [ $rep -le "$repeats" ]; do
	printf 'repetition %d/%d:' "$rep" "$repeats" >&2
	start_target
	wait_idle
	timed idle_floor 0 --no-inject
	finish_idle

	start_target
	wait_idle
	timed idle_inject 1
	finish_idle

	start_target
	start_busy
	timed busy_floor 0 --no-inject
	finish_busy

	start_target
	start_busy
	timed busy_inject 1
	finish_busy

	start_target CUDA_INJECTION64_PATH="$(realpath "$bridge")"
	start_busy
	timed busy_present 1
	finish_busy

	start_target FAKECUDA_KERNEL_NS="$long_kernel"
	start_busy
	timed busy1ms_floor 0 --no-inject
	finish_busy

	start_target FAKECUDA_KERNEL_NS="$long_kernel"
	start_busy
	timed busy1ms_inject 1
	finish_busy
	echo >&2
	rep=$((rep + 1))
done

"$py" "$work/timer.py" summary "$work/results" \
	"machine: $(nproc) CPUs, kernel $(uname -r); $repeats fresh cuda_loop processes per case; gpuspy record -v; dwell ${dwell} ms
command: $cmdline"
[ -z "${INJECT_KEEP:-}" ] || cp "$work/results" "$INJECT_KEEP"
