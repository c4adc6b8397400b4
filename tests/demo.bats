#!/usr/bin/env bats
# The README's demo must keep working and keep showing what it claims.

load helpers

@test "the demo records the bundled workload and shows tables and a timeline" {
	require_bpf
	require_cmd python3
	run sh "$ROOT/tests/demo.sh" "$BUILD"
	[ "$status" -eq 0 ]
	[[ "$output" == *"demo_workload: "*" steps, 48 samples read by 2 workers"* ]]
	[[ "$output" == *"** summary"* && "$output" == *"finding 1  "* && "$output" == *"advice: "* ]]
	[[ "$output" == *"** osrt_sum"* && "$output" == *"** offcpu"* && "$output" == *"** processes"* ]]
	[[ "$output" == *"events lost: 0"* ]]
	# the workers are followed: every sample file is read in a traced child process
	jq -e '[.traceEvents[] | select(.name == "read" and (.args.file // "" | test("sample[0-9]+\\.bin$"))) | .args.file] | unique | length == 48' \
		"$BUILD/demo/demo.json"
	python3 "$ROOT/tests/lib/check_chrome.py" "$BUILD/demo/demo.json"
	# the CUDA program ran on the simulated GPU and its syncs blocked the thread off CPU
	[[ "$output" == *"DONE ok"* ]]
	"$GPUSPY" report "$BUILD/demo/cuda.gpuspy" --report offcpu --format json |
		jq -e '.[] | select(.thread == "streams_events") | .sleeping_ns > 100000000'
	# ... and its CUDA calls were probed: kernels by name, synchronisations, GPU memory
	[[ "$output" == *"gpuspy: probing CUDA runtime in pid"* ]]
	[[ "$output" == *"** cuda_api_sum"* && "$output" == *"** cuda_launches"* && "$output" == *"** gpu_mem"* ]]
	[[ "$output" == *"spin_kernel(long long)"* && "$output" == *"cudaDeviceSynchronize"* ]]
	"$GPUSPY" report "$BUILD/demo/cuda.gpuspy" --report cuda_launches --format json |
		jq -e '.[] | select(.mangled == "_Z11spin_kernelx") | .launches == 8'
	python3 "$ROOT/tests/lib/check_chrome.py" "$BUILD/demo/cuda.json"
	# ... with the GPU side from the CUPTI bridge: kernel times, busy time, idle gaps, Kineto
	[[ "$output" == *"gpuspy: CUPTI bridge in pid"* ]]
	[[ "$output" == *"** cuda_gpu_kern_sum"* && "$output" == *"** gpu_util"* && "$output" == *"** gpu_idle"* ]]
	"$GPUSPY" report "$BUILD/demo/cuda.gpuspy" --report cuda_gpu_kern_sum --format json |
		jq -e '.[] | select(.mangled == "_Z11spin_kernelx") | .instances == 8 and .total_ns == 160000000'
	python3 "$ROOT/tests/lib/check_kineto.py" "$BUILD/demo/cuda.kineto.json"
	# the Perfetto file parses; the SQLite one answers nsys's kernel query as the report does
	protoc --decode_raw < "$BUILD/demo/cuda.perfetto-trace" > /dev/null
	[[ "$output" == *"instances"*"total_ns"* ]]
	"$GPUSPY" report "$BUILD/demo/cuda.gpuspy" --report cuda_gpu_kern_sum --format json |
		jq -r '.[] | "\(.name)|\(.instances)"' | sort > "$BUILD/demo/kern.report"
	sqlite3 "$BUILD/demo/cuda.sqlite" "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL
		AS k JOIN StringIds AS s ON s.id = k.demangledName GROUP BY s.value" |
		sort > "$BUILD/demo/kern.sql"
	[ -s "$BUILD/demo/kern.sql" ]
	diff "$BUILD/demo/kern.report" "$BUILD/demo/kern.sql"
	# a running CUDA program started without the bridge: loaded on attach, GPU times follow
	[[ "$output" == *"CUPTI bridge loaded (thread "*"paused "* ]]
	"$GPUSPY" report "$BUILD/demo/attach.gpuspy" --report gpu_mode,cuda_gpu_kern_sum --format json |
		jq -e '(.gpu_mode[0].bridge == "injected") and (.gpu_mode[0].inject_pause_ns > 0) and ((.cuda_gpu_kern_sum | map(.instances) | add) == 5)'
	python3 "$ROOT/tests/lib/check_chrome.py" "$BUILD/demo/attach.json"
	# gpuspy SIGKILLed inside the bridge's dlopen: the program went on and exited 0
	[[ "$output" == *"killed with SIGKILL while cuda_loop"* ]]
	[[ "$output" == *"cuda_loop went on: DONE ok, exit status 0"* ]]
	# a running PyTorch loop, attached: operators, Python stacks and samples, a timeline
	[[ "$output" == *"gpuspy: PyTorch observer in pid "*"libgpuspy_torch.so: turned on"* ]]
	[[ "$output" == *"PyTorch operators recorded in-process"* ]]
	[[ "$output" == *"== gpuspy report --group-by-input-shape"*"Input Shapes"* ]]
	[[ "$output" == *"stacks on"* && "$output" == *"** ops"* && "$output" == *"** python"* ]]
	"$GPUSPY" report "$BUILD/demo/torch.gpuspy" --report ops --format json |
		jq -e '.[] | select(.name == "aten::conv2d") | .calls == 200'
	"$GPUSPY" report "$BUILD/demo/torch.gpuspy" --report ops --format json |
		jq -e '.[] | select(.name == "Optimizer.step#SGD.step") | .calls == 200'
	"$GPUSPY" report "$BUILD/demo/torch.gpuspy" --report ops --group-by-input-shape \
		--format json | jq -e '.[] | select(.name == "aten::conv2d") |
		.calls == 200 and .input_shapes == "[[16, 3, 16, 16], [8, 3, 3, 3], [8], [], [], [], []]"'
	"$GPUSPY" report "$BUILD/demo/torch.gpuspy" --report python --format json |
		jq -e '[.[] | select(.function == "Net.forward")] | length == 1'
	[ -s "$BUILD/demo/torch.folded" ]
	python3 "$ROOT/tests/lib/check_chrome.py" "$BUILD/demo/torch.json"
	# ... and operators on the simulated GPU get their CUDA columns
	"$GPUSPY" report "$BUILD/demo/ops_gpu.gpuspy" --report ops --format json |
		jq -e '.[] | select(.name == "aten::mm") | .calls == 40 and .self_cuda_ns == 8000000'
	# the live views: top names each CUDA program's mode, serve exports their series
	grep -E '^ +[0-9]+ .* bridge .* cuda_loop' "$BUILD/demo/top.txt"
	grep -E '^ +[0-9]+ .* injected .* cuda_loop' "$BUILD/demo/top.txt"
	[ "$(grep -cE '^gpuspy_process_info\{.*comm="cuda_loop".*mode="bridge"\} 1$' "$BUILD/demo/metrics.txt")" -eq 2 ]
	# the one started while serve ran: injected after its first CUDA call (its set-up launch before)
	[ "$(grep -cE '^gpuspy_process_info\{.*comm="cuda_loop".*mode="injected"\} 1$' "$BUILD/demo/metrics.txt")" -eq 1 ]
	[ "$(grep -cE '^gpuspy_process_cuda_launches_total\{.*comm="cuda_loop".*\} 50$' "$BUILD/demo/metrics.txt")" -eq 2 ]
	[ "$(grep -cE '^gpuspy_process_cuda_launches_total\{.*comm="cuda_loop".*\} 51$' "$BUILD/demo/metrics.txt")" -eq 1 ]
	[ "$(grep -cE '^gpuspy_process_gpu_kernels_total\{.*comm="cuda_loop".*\} 50$' "$BUILD/demo/metrics.txt")" -eq 3 ]
	# --gpu-sample: the estimate of a program busy half the time, from one window in two
	[[ "$output" == *"~GPU%"* ]]
	busy=$(awk '$NF == "duty_loop" && $4 == "bridge" { print $5 }' "$BUILD/demo/top_sample.txt" | tail -1)
	awk -v b="$busy" 'BEGIN { exit !(b >= 35 && b <= 65) }'
}
