#!/bin/sh
# The README's demo: record the bundled workload, print its tables, write its timeline.
# usage: tests/demo.sh BUILD_DIR
set -eu
build=${1:-build}
out=$build/demo
# the distribution's interpreter: a pyenv or venv shim would add its own wrapper processes
python=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
mkdir -p "$out"
echo "== gpuspy record: a toy training loop with two data-loader worker processes"
"$build/gpuspy" record -f -o "$out/demo.gpuspy" -- "$python" tests/targets/demo_workload.py
echo
echo "== gpuspy report: answers first: the loop's steps, where their time went, the top stalls"
echo "   with their cause in the worker processes, and advice"
"$build/gpuspy" report "$out/demo.gpuspy" --report summary
echo "== gpuspy report: OS-runtime summary, off-CPU time per thread, processes"
"$build/gpuspy" report "$out/demo.gpuspy" --report osrt_sum,offcpu,processes --limit 12
echo "== gpuspy record: an nvcc-built CUDA program on the simulated GPU (tests/fakecuda);"
echo "   libcudart and libcuda are found and probed as the program starts, and gpuspy's"
echo "   CUPTI bridge (loaded by the CUDA driver) sends the real GPU kernel and copy times"
"$build/gpuspy" record -f -o "$out/cuda.gpuspy" -- \
	env LD_LIBRARY_PATH="$build/fakecuda" "$build/targets/cuda/streams_events" 2>&1 |
	grep -E '^(gpuspy: probing|gpuspy: CUPTI|DONE)'
echo
echo "== gpuspy report: CUDA API calls (host time, errors), kernels by name, GPU memory;"
echo "   its synchronising calls block the thread off-CPU for the simulated kernel time"
"$build/gpuspy" report "$out/cuda.gpuspy" --report cuda_api_sum,cuda_launches,gpu_mem,offcpu --limit 6
echo "== gpuspy report: GPU time of each kernel, GPU busy per stream, the longest GPU-idle gaps"
echo "   and what the launching thread was doing meanwhile"
"$build/gpuspy" report "$out/cuda.gpuspy" --report cuda_gpu_kern_sum,gpu_util,gpu_idle --limit 4
"$build/gpuspy" export "$out/cuda.gpuspy" --format chrome -o "$out/cuda.json"
"$build/gpuspy" export "$out/cuda.gpuspy" --format kineto -o "$out/cuda.kineto.json"
"$build/gpuspy" export "$out/cuda.gpuspy" --format perfetto -o "$out/cuda.perfetto-trace"
rm -f "$out/cuda.sqlite"
"$build/gpuspy" export "$out/cuda.gpuspy" --format sqlite -o "$out/cuda.sqlite"
echo "== gpuspy export --format sqlite: nsys's tables; nsys's kernel summary query, unchanged,"
echo "   run by sqlite3 (the same figures as cuda_gpu_kern_sum above)"
sqlite3 -header -column "$out/cuda.sqlite" "SELECT s.value AS name, count(*) AS instances,
	sum(k.end - k.start) AS total_ns FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
	JOIN StringIds AS s ON s.id = k.demangledName GROUP BY s.value ORDER BY total_ns DESC"
echo

# Waits until FILE has a line containing TEXT (the programs say when they are ready).
wait_for() { # FILE TEXT
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 600 ] || { echo "demo: timed out waiting for '$2' in $1" >&2; exit 1; }
		sleep 0.1
	done
}
wait_for_file() { # FILE
	i=0
	until [ -e "$1" ]; do
		i=$((i + 1))
		[ "$i" -lt 600 ] || { echo "demo: timed out waiting for $1" >&2; exit 1; }
		sleep 0.1
	done
}
# Starts cuda_loop on the simulated GPU as NAME: it reads its commands from the fifo
# $out/NAME.ctl (the caller opens it for writing on a descriptor of its own), says it is ready
# in $out/NAME.ready, and its CUPTI bridge, once loaded, logs to $out/NAME.log. ENV: more
# variables for it. Sets loop_pid.
start_loop() { # PROGRAM NAME [ENV...]: a program of tests/targets/cuda driven through a fifo
	prog=$1
	name=$2
	shift 2
	rm -f "$out/$name.ctl" "$out/$name.ready" "$out/$name.log"
	mkfifo "$out/$name.ctl"
	env LD_LIBRARY_PATH="$build/fakecuda" GPUSPY_CUPTI_LOG="$out/$name.log" "$@" \
		"$build/targets/cuda/$prog" "$out/$name.ready" <"$out/$name.ctl" >"$out/$name.out" 2>&1 &
	loop_pid=$!
}
start_cuda_loop() { start_loop cuda_loop "$@"; } # NAME [ENV...]
echo "== gpuspy record -p: a CUDA program that is already running and was started WITHOUT the"
echo "   CUPTI bridge: gpuspy loads it (one thread stopped at a syscall, dlopen, restored) and"
echo "   gets the GPU kernel and copy times of what the program launches while attached"
start_cuda_loop attach
cuda_pid=$loop_pid
exec 5>"$out/attach.ctl"
wait_for_file "$out/attach.ready"
"$build/gpuspy" record -v -f -o "$out/attach.gpuspy" -p "$cuda_pid" 2>"$out/attach.err" &
gpuspy_pid=$!
wait_for "$out/attach.log" "activity on"
echo "go 5" >&5
wait_for "$out/attach.out" "BATCH done n=5"
kill -INT "$gpuspy_pid"
wait "$gpuspy_pid" || true
echo exit >&5
exec 5>&-
wait "$cuda_pid"
grep -E '^gpuspy: pid [0-9]+: CUPTI bridge' "$out/attach.err" || true
tail -1 "$out/attach.out"
"$build/gpuspy" report "$out/attach.gpuspy" --report gpu_mode,cuda_gpu_kern_sum
"$build/gpuspy" export "$out/attach.gpuspy" --format chrome -o "$out/attach.json"
echo
echo "== safety: gpuspy SIGKILLed in the middle of loading the bridge into a running CUDA program"
echo "   (its dlopen made slow on purpose): the borrowed thread returns through the signal frame"
echo "   gpuspy left on its stack, and the program goes on as if nothing had happened"
start_cuda_loop victim GPUSPY_BRIDGE_LOAD_DELAY_MS=1500
victim_pid=$loop_pid
exec 5>"$out/victim.ctl"
wait_for_file "$out/victim.ready"
"$build/gpuspy" record -q -f -o "$out/victim.gpuspy" -p "$victim_pid" 2>"$out/victim.err" &
gpuspy_pid=$!
i=0
until grep -q libgpuspy_cupti "/proc/$victim_pid/maps"; do
	i=$((i + 1))
	[ "$i" -lt 600 ] || { echo "demo: the bridge was never mapped" >&2; exit 1; }
	sleep 0.05
done
kill -KILL "$gpuspy_pid"
wait "$gpuspy_pid" 2>/dev/null || true
echo "gpuspy (pid $gpuspy_pid) killed with SIGKILL while cuda_loop (pid $victim_pid) was inside dlopen"
echo "go 3" >&5
wait_for "$out/victim.out" "BATCH done n=3"
echo exit >&5
exec 5>&-
victim_status=0
wait "$victim_pid" || victim_status=$?
echo "cuda_loop went on: $(tail -1 "$out/victim.out"), exit status $victim_status"
[ "$victim_status" -eq 0 ]
torch_python=/usr/bin/python3.11 # Debian's python3-torch is built for it
echo "== gpuspy record -p --record-shapes: a PyTorch training loop that is already running (no"
echo "   restart, no code change): its Python stacks, CPU samples and every operator call, from"
echo "   gpuspy's in-process observer (a RecordFunction callback it loads), with input shapes"
rm -f "$out/torch.go"
mkfifo "$out/torch.go"
"$torch_python" tests/targets/torch/train_loop.py --iters 200 --go "$out/torch.go" \
	>"$out/torch.out" 2>&1 &
loop_pid=$!
wait_for "$out/torch.out" READY
"$build/gpuspy" record -f --record-shapes -o "$out/torch.gpuspy" -p "$loop_pid" 2>"$out/torch.err" &
gpuspy_pid=$!
wait_for "$out/torch.err" "recording 1 process"
exec 4>"$out/torch.go"
echo go >&4
wait_for "$out/torch.out" "DONE 200"
kill -INT "$gpuspy_pid"
wait "$gpuspy_pid" || true
echo exit >&4
exec 4>&-
wait "$loop_pid"
grep -E '^gpuspy: (python|probing|PyTorch|pid [0-9]+: PyTorch)' "$out/torch.err" || true
echo
echo "== gpuspy report: torch.profiler's operator table, from outside the process"
"$build/gpuspy" report "$out/torch.gpuspy" --report ops --limit 8
echo "== gpuspy report --group-by-input-shape: one row per operator and input shapes"
"$build/gpuspy" report "$out/torch.gpuspy" --report ops --group-by-input-shape --limit 5 |
	sed -n '/^---/,$p'
echo "== gpuspy report: CPU time per Python function (sampled, as cProfile's tottime/cumtime)"
"$build/gpuspy" report "$out/torch.gpuspy" --report python --limit 8
"$build/gpuspy" report "$out/torch.gpuspy" --report python --format collapsed >"$out/torch.folded"
"$build/gpuspy" export "$out/torch.gpuspy" --format chrome -o "$out/torch.json"
echo "== gpuspy record: PyTorch-style operators launching kernels on the simulated GPU"
echo "   (tests/targets/cuda/aten_like.cu): the operator table gets its CUDA columns"
"$build/gpuspy" record -q -f -o "$out/ops_gpu.gpuspy" -- env LD_LIBRARY_PATH="$build/fakecuda" \
	"$python" tests/targets/cuda/aten_like.py "$build/targets/cuda/libtorch_aten_like_cuda.so" 20 \
	>/dev/null
"$build/gpuspy" report "$out/ops_gpu.gpuspy" --report ops --sort self_cuda_time_total --limit 6
echo "== gpuspy top and gpuspy serve: who uses the GPUs on this host, live. Two CUDA programs:"
echo "   one started with the CUPTI bridge, one without it (gpuspy loads it when it attaches)"
start_cuda_loop live_a CUDA_INJECTION64_PATH="$build/libgpuspy_cupti.so"
live_a=$loop_pid
exec 6>"$out/live_a.ctl"
start_cuda_loop live_b
live_b=$loop_pid
exec 7>"$out/live_b.ctl"
wait_for_file "$out/live_a.ready"
wait_for_file "$out/live_b.ready"
"$build/gpuspy" top --once --interval 4s --sort launches_per_s --limit 5 >"$out/top.txt" \
	2>"$out/top.err" &
top_pid=$!
wait_for "$out/top.err" "gpuspy: watching"
# each bridge turns CUPTI on within about 0.1 s of gpuspy's attach
wait_for "$out/live_a.log" "activity on"
wait_for "$out/live_b.log" "activity on"
echo "go 200" >&6
echo "go 100" >&7
wait "$top_pid"
cat "$out/top.txt"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$build/gpuspy" serve --listen "127.0.0.1:$port" --interval 500ms 2>"$out/serve.err" &
serve_pid=$!
wait_for "$out/serve.err" "gpuspy: collecting"
# a new session for each bridge: a second "activity on"
wait_activity_again() { # LOG
	i=0
	until [ "$(grep -c "activity on" "$1")" -ge 2 ]; do
		i=$((i + 1))
		[ "$i" -lt 600 ] || { echo "demo: no second session in $1" >&2; exit 1; }
		sleep 0.1
	done
}
wait_activity_again "$out/live_a.log"
wait_activity_again "$out/live_b.log"
# a third program starts while serve runs: the bridge follows its first CUDA call
start_cuda_loop live_c
live_c=$loop_pid
exec 8>"$out/live_c.ctl"
wait_for_file "$out/live_c.ready"
wait_for "$out/live_c.log" "activity on"
echo "go 50" >&6
echo "go 50" >&7
echo "go 50" >&8
wait_for "$out/live_a.out" "BATCH done n=50"
wait_for "$out/live_b.out" "BATCH done n=50"
wait_for "$out/live_c.out" "BATCH done n=50"
sleep 2.5 # the bridges hand over their GPU records at least once a second
echo "curl http://127.0.0.1:$port/metrics (gpuspy serve, for Prometheus), the CUDA programs' series"
echo "(serve finds the bridge top loaded already there: both are in bridge mode for it; the"
echo "third program started while serve ran: injected after its first CUDA call, its set-up"
echo "launch counted by uprobes before that):"
curl -sf "http://127.0.0.1:$port/metrics" >"$out/metrics.txt"
grep -E '^gpuspy_process_(info|cuda_launches_total|gpu_kernels_total|gpu_busy_seconds_total)\{.*comm="cuda_loop"' \
	"$out/metrics.txt"
kill -TERM "$serve_pid"
wait "$serve_pid" || true
echo exit >&6
echo exit >&7
echo exit >&8
exec 6>&- 7>&- 8>&-
wait "$live_a" "$live_b" "$live_c"
echo "== gpuspy top --gpu-sample 1s/2s: CUPTI's kernel records taken one second in two, GPU busy"
echo "   estimated from them (~GPU%); launches stay exact. A program that keeps the simulated GPU"
echo "   busy half the time (a 10 ms kernel every 20 ms), the last refresh of a 4 s view:"
start_loop duty_loop duty CUDA_INJECTION64_PATH="$build/libgpuspy_cupti.so"
duty_pid=$loop_pid
exec 6>"$out/duty.ctl"
wait_for_file "$out/duty.ready"
"$build/gpuspy" top --gpu-sample 1s/2s -d 4s --sort gpu_busy_pct --limit 1 \
	>"$out/top_sample.txt" 2>"$out/top_sample.err" &
top_pid=$!
wait_for "$out/top_sample.err" "gpuspy: watching"
echo "run 5000" >&6
wait "$top_pid"
tail -n 3 "$out/top_sample.txt"
echo exit >&6
exec 6>&-
wait "$duty_pid"
echo
echo "== gpuspy export: timeline"
"$build/gpuspy" export "$out/demo.gpuspy" --format chrome -o "$out/demo.json"
echo "trace:    $out/demo.gpuspy"
echo "timeline: $out/demo.json  (open it in https://ui.perfetto.dev)"
echo "CUDA timeline: $out/cuda.json  (CUDA API spans, GPU tracks per stream with launch flows)"
echo "Kineto trace:  $out/cuda.kineto.json  (for Holistic Trace Analysis / TensorBoard)"
echo "Perfetto trace: $out/cuda.perfetto-trace  (Perfetto's own protobuf, for large recordings)"
echo "SQLite:        $out/cuda.sqlite  (nsys's tables: SQL written for nsys runs on it)"
echo "attach timeline: $out/attach.json  (the bridge loaded on attach: the pause it cost, the GPU"
echo "                 work launched while attached)"
echo "PyTorch timeline: $out/torch.json  (cpu_op slices, Python stacks on every span, CPU"
echo "                  samples as a flame chart per thread)"
echo "flame graph input: $out/torch.folded  (flamegraph.pl $out/torch.folded > cpu.svg)"
