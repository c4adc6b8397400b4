#!/usr/bin/env bats
# The simulated CUDA stack (tests/fakecuda, docs/FAKECUDA.md): real nvcc and
# Python programs run on it, CUPTI sees what they did, and nothing exported
# drifts from NVIDIA's ABI.  Build first: make fakecuda.
# bats file_tags=fakecuda

load helpers

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
FC=$BUILD/fakecuda
TGT=$BUILD/targets/cuda
SRC=$ROOT/tests/fakecuda
SPIN=_Z11spin_kernelx

setup() {
	[ -e "$FC/libcuda.so.1" ] && [ -e "$TGT/streams_events" ] ||
		skip "needs the simulated CUDA stack: make fakecuda (with NVIDIA's CUDA toolkit in CUDA_HOME=$CUDA_HOME)"
	require_cmd jq
	require_cmd python3
	OUT=$BATS_TEST_TMPDIR/out.txt
	DUMP=$BATS_TEST_TMPDIR/dump.jsonl
}

# run_on_fake [VAR=value...] -- command...: runs on the fake libraries, with
# the CUPTI dump injection; output in $OUT, records in $DUMP.
run_on_fake() {
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	run env LD_LIBRARY_PATH="$FC" CUDA_INJECTION64_PATH="$FC/libcupti_dump.so" \
		CUPTI_DUMP_FILE="$DUMP" "${envs[@]}" "$@"
	printf '%s\n' "$output" > "$OUT"
}

timing() { # NAME: value of "TIMING NAME=value" in $OUT
	sed -n "s/^TIMING $1=//p" "$OUT"
}

# ---- ABI: names and versions ------------------------------------------------

# bats test_tags=fakecuda
@test "fakecuda: libraries carry NVIDIA's sonames and symbol versions" {
	run readelf -d "$FC/libcudart.so.13"
	[[ "$output" == *"Library soname: [libcudart.so.13]"* ]]
	run readelf -d "$FC/libcuda.so.1"
	[[ "$output" == *"Library soname: [libcuda.so.1]"* ]]
	run readelf -d "$FC/libcupti.so.13"
	[[ "$output" == *"Library soname: [libcupti.so.13]"* ]]
	run nm -D --defined-only "$FC/libcudart.so.13"
	[[ "$output" == *"cudaMalloc@@libcudart.so.13"* ]]
	[[ "$output" == *"__cudaLaunchKernel@@libcudart.so.13"* ]]
	run nm -D --defined-only "$FC/libcupti.so.13"
	[[ "$output" == *"cuptiSubscribe@@libcupti.so.13"* ]]
}

# bats test_tags=fakecuda,abi
@test "fakecuda: every exported name is declared in NVIDIA's headers" {
	require_cuda_toolkit
	run sh "$SRC/check_exports.sh" "$CUDA_HOME/include" \
		"$FC/libcuda.so.1" "$FC/libcudart.so.13" "$FC/libcupti.so.13"
	echo "$output"
	[ "$status" -eq 0 ]
}

# bats test_tags=fakecuda,abi
@test "fakecuda: the export check rejects a name NVIDIA does not declare" {
	require_cuda_toolkit
	printf 'int cudaNotARealApi(void) { return 0; }\n' > "$BATS_TEST_TMPDIR/bad.c"
	gcc -shared -fPIC -o "$BATS_TEST_TMPDIR/libbad.so" "$BATS_TEST_TMPDIR/bad.c"
	run sh "$SRC/check_exports.sh" "$CUDA_HOME/include" "$BATS_TEST_TMPDIR/libbad.so"
	[ "$status" -eq 1 ]
	[[ "$output" == *cudaNotARealApi* ]]
}

# bats test_tags=fakecuda,abi
@test "fakecuda: every export also exists in NVIDIA's own libraries" {
	require_cuda_toolkit
	local mine real
	mine=$(nm -D --defined-only "$FC/libcudart.so.13" | awk '{print $3}' | sort)
	real=$(nm -D --defined-only "$CUDA_HOME/lib64/libcudart.so.13" | awk '{print $3}' | sort)
	run comm -23 <(echo "$mine") <(echo "$real")
	[ -z "$output" ] || { echo "libcudart extra: $output"; false; }
	mine=$(nm -D --defined-only "$FC/libcuda.so.1" | awk '{print $3}' | grep -v '^fakecuda_internal_' | sort)
	real=$(nm -D --defined-only "$CUDA_HOME/lib64/stubs/libcuda.so" | awk '{print $3}' | sort)
	run comm -23 <(echo "$mine") <(echo "$real")
	[ -z "$output" ] || { echo "libcuda extra: $output"; false; }
	mine=$(nm -D --defined-only "$FC/libcupti.so.13" | awk '{print $3}' | sort)
	real=$(nm -D --defined-only "$CUDA_HOME/lib64/libcupti.so.13" | awk '{print $3}' | sort)
	run comm -23 <(echo "$mine") <(echo "$real")
	[ -z "$output" ] || { echo "libcupti extra: $output"; false; }
	# exactly one private symbol
	run sh -c "nm -D --defined-only '$FC/libcuda.so.1' | awk '{print \$3}' | grep -c '^fakecuda_internal_'"
	[ "$output" = 1 ]
}

# bats test_tags=fakecuda,abi
@test "fakecuda: every probed name exists in NVIDIA's libcudart.so.13 and stub libcuda.so" {
	require_cuda_toolkit
	run sh "$SRC/check_probe_list.sh" "$ROOT/output/trace/cuda_probe_list.h" \
		"$CUDA_HOME/lib64/libcudart.so.13" "$CUDA_HOME/lib64/stubs/libcuda.so"
	echo "$output"
	[ "$status" -eq 0 ]
}

# bats test_tags=fakecuda
@test "fakecuda: every probed name exists in the fakes" {
	run sh "$SRC/check_probe_list.sh" "$ROOT/output/trace/cuda_probe_list.h" \
		"$FC/libcudart.so.13" "$FC/libcuda.so.1"
	echo "$output"
	[ "$status" -eq 0 ]
}

# bats test_tags=fakecuda,abi
@test "fakecuda: the probe list check rejects an unknown or unversioned name" {
	require_cuda_toolkit
	printf 'CUDA_PROBE(CUDART, cudaMalloc)\nCUDA_PROBE(CUDA, cuMemAlloc)\nCUDA_PROBE(CUDART, cudaNope)\n' \
		> "$BATS_TEST_TMPDIR/list.h"
	run sh "$SRC/check_probe_list.sh" "$BATS_TEST_TMPDIR/list.h" \
		"$CUDA_HOME/lib64/libcudart.so.13" "$CUDA_HOME/lib64/stubs/libcuda.so"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cudaNope"* ]]
	[[ "$output" != *"cudaMalloc"* ]]
}

# bats test_tags=fakecuda
@test "fakecuda: without NVIDIA's toolkit in CUDA_HOME the ABI checks skip, saying why" {
	mkdir "$BATS_TEST_TMPDIR/empty"
	run env CUDA_HOME="$BATS_TEST_TMPDIR/empty" bats --filter-tags abi "$ROOT/tests/fakecuda.bats"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^ok ' <<< "$output")" -eq 5 ]
	[ "$(grep -c "^ok .* # skip needs NVIDIA's CUDA toolkit in CUDA_HOME=$BATS_TEST_TMPDIR/empty (no include/cuda.h; not in Debian, see README)" <<< "$output")" -eq 5 ]
}

# bats test_tags=fakecuda
@test "fakecuda: nvcc targets need libcudart.so.13 and bake in no rpath" {
	run readelf -d "$TGT/streams_events"
	[[ "$output" == *"Shared library: [libcudart.so.13]"* ]]
	[[ "$output" != *RPATH* && "$output" != *RUNPATH* ]]
	run env LD_LIBRARY_PATH="$FC" ldd "$TGT/streams_events"
	[[ "$output" == *"libcudart.so.13 => $FC/libcudart.so.13"* ]]
}

# ---- programs on the simulator -------------------------------------------------

# bats test_tags=fakecuda
@test "fakecuda: streams overlap, streams are FIFO and syncs block for simulated time" {
	run_on_fake -- "$TGT/streams_events"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"DONE ok"* ]]
	# the program's own checks: orderings and device time between events, never wall time
	for check in "two streams overlap" "stream is FIFO" "stream waits for event"; do
		[[ "$output" == *"CHECK $check"*" ok"* ]]
	done
	# CUPTI's account of when each kernel ran: two spin kernels on two streams overlap ...
	jq -se --arg spin "$SPIN" '[.[] | select(.type == "kernel" and .name == $spin)] as $k
		| any($k[]; . as $a | any($k[]; .stream != $a.stream and
			.start < $a.end and $a.start < .end))' "$DUMP"
	# ... the kernels of one stream never do ...
	jq -se '[.[] | select(.type == "kernel")] | group_by(.stream)
		| all(.[]; sort_by(.start) as $s
			| all(range(1; $s | length); $s[.].start >= $s[. - 1].end))' "$DUMP"
	# ... and a context synchronisation returns once everything queued before it has ended
	jq -se '[.[] | select(.type == "kernel")] as $k
		| [.[] | select(.type == "sync" and .syncType == 4)] as $s
		| ($s | length) >= 3 and all($s[]; . as $y
			| all($k[] | select(.queued <= $y.start); .end <= $y.end))' "$DUMP"
}

# bats test_tags=fakecuda
@test "fakecuda: the per-kernel duration override really drives the timeline" {
	# axpy_kernel at 7 ms instead of the default 100 us: each of the program's three runs
	# exactly that long, and what its stream runs next starts once it has ended
	run_on_fake FAKECUDA_KERNEL_NS="$SPIN=20000000,_Z11axpy_kernelPfPKffi=7000000" \
		-- "$TGT/streams_events"
	[ "$status" -eq 0 ]
	jq -se '[.[] | select(.type == "kernel")] as $k
		| [$k[] | select(.name == "_Z11axpy_kernelPfPKffi")] as $a
		| ($a | length) == 3 and all($a[]; .end - .start == 7000000)
		and all($a[]; . as $x | all($k[] | select(.stream == $x.stream and
			.queued > $x.queued); .start >= $x.end))' "$DUMP"
}

# bats test_tags=fakecuda
@test "fakecuda: copies round-trip data, copy time follows the bandwidth, errors match a GPU" {
	run_on_fake FAKECUDA_BW_HTOD_GBPS=1 -- "$TGT/memory_errors"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"DONE ok"* ]]
	# 8 MiB at 1 GB/s = 8.39 ms of simulated transfer; the sync copy waits for it.
	[ "$(timing htod_sync_ns)" -ge 8389608 ]
	[[ "$output" == *"cudaFree(d) = cudaErrorInvalidValue ok"* ]]
	[[ "$output" == *"cudaFree((void *)0x1234) = cudaErrorInvalidValue ok"* ]]
}

# bats test_tags=fakecuda
@test "fakecuda: a Python program drives the runtime and driver through ctypes" {
	run_on_fake -- python3 "$ROOT/tests/targets/cuda/runtime_ctypes.py"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"CHECK python driver launches ok"* ]]
	[[ "$output" == *"DONE ok"* ]]
}

# ---- CUPTI ------------------------------------------------------------------------

# bats test_tags=fakecuda
@test "fakecuda: CUPTI records match streams_events one for one (custom timing model)" {
	run_on_fake FAKECUDA_KERNEL_DEFAULT_NS=250000 FAKECUDA_BW_DTOD_GBPS=100 \
		FAKECUDA_COPY_LATENCY_NS=3000 FAKECUDA_CUPTI_CLOCK_OFFSET_NS=777000000000 \
		-- "$TGT/streams_events"
	[ "$status" -eq 0 ]
	run python3 "$SRC/compare_cupti.py" "$OUT" "$DUMP" --fake --kernel-ns $SPIN=20000000 \
		--default-ns 250000 --bw-dtod 100 --latency-ns 3000 --clock-offset 777000000000
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -s '[.[] | select(.type == "kernel")] | length' "$DUMP")" -eq "$(grep -c '^LAUNCH ' "$OUT")" ]
}

# bats test_tags=fakecuda
@test "fakecuda: CUPTI records match memory_errors one for one (default timing model)" {
	run_on_fake -- "$TGT/memory_errors"
	[ "$status" -eq 0 ]
	run python3 "$SRC/compare_cupti.py" "$OUT" "$DUMP" --fake
	echo "$output"
	[ "$status" -eq 0 ]
	# the async copy's API call returned before the copy finished
	jq -se '[.[] | select(.type == "memcpy" and .async == 1)] as $m
		| [.[] | select(.type == "runtime" and .name == "cudaMemcpyAsync")] as $a
		| ($m | length) == 2 and all($a[]; . as $r | $m[] | select(.corr == $r.corr)
			| $r.end < .end)' "$DUMP"
}

# bats test_tags=fakecuda
@test "fakecuda: CUPTI records match the Python program one for one" {
	run_on_fake -- python3 "$ROOT/tests/targets/cuda/runtime_ctypes.py"
	[ "$status" -eq 0 ]
	run python3 "$SRC/compare_cupti.py" "$OUT" "$DUMP" --fake
	echo "$output"
	[ "$status" -eq 0 ]
}

# bats test_tags=fakecuda
@test "fakecuda: the comparison fails when the timing model disagrees" {
	run_on_fake -- "$TGT/streams_events"
	[ "$status" -eq 0 ]
	launches=$(grep -c '^LAUNCH ' "$OUT")
	run python3 "$SRC/compare_cupti.py" "$OUT" "$DUMP" --fake
	[ "$status" -eq 1 ]
	[[ "$output" == *"MISMATCH kernel $SPIN took 20000000 ns, model says 100000"* ]]
	# and when a launch is missing from the program's account
	sed '0,/LAUNCH name=_Z14/{/LAUNCH name=_Z14/d}' "$OUT" > "$BATS_TEST_TMPDIR/less.txt"
	run python3 "$SRC/compare_cupti.py" "$BATS_TEST_TMPDIR/less.txt" "$DUMP"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$((launches - 1)) kernel lines but $launches CUPTI kernel records"* ]]
}

# bats test_tags=fakecuda
@test "fakecuda: runtime call, nested driver call and kernel share one correlation id" {
	run_on_fake -- "$TGT/streams_events"
	[ "$status" -eq 0 ]
	# every kernel: a __cudaLaunchKernel runtime record enclosing a cuLaunchKernel
	# driver record, all three with the kernel's correlation id
	jq -se '[.[] | select(.type == "kernel")] as $k
		| [.[] | select(.type == "runtime" and .name == "__cudaLaunchKernel")] as $rt
		| [.[] | select(.type == "driver" and .name == "cuLaunchKernel")] as $dr
		| ($k | length) > 0 and all($k[]; . as $x
			| ([$rt[] | select(.corr == $x.corr)] | length) == 1
			and ([$dr[] | select(.corr == $x.corr)] | length) == 1
			and ([$rt[] | select(.corr == $x.corr)][0] as $r
				| [$dr[] | select(.corr == $x.corr)][0] as $d
				| $r.start <= $d.start and $d.end <= $r.end and $d.start <= $x.queued))' "$DUMP"
	# kernel records use CUPTI clock; distinct launches have distinct ids
	jq -se '[.[] | select(.type == "kernel") | .corr] | length == (unique | length)' "$DUMP"
}

# bats test_tags=fakecuda
@test "fakecuda: a second CUPTI subscriber is refused and callbacks carry kernel names" {
	run_on_fake -- "$TGT/streams_events"
	[ "$status" -eq 0 ]
	[ "$(jq -s '[.[] | select(.type == "second_subscribe")][0].result' "$DUMP")" -eq 39 ]
	jq -se '[.[] | select(.type == "callback" and .name == "cuLaunchKernel" and .site == "enter")
		| .symbol] | unique == ["_Z11axpy_kernelPfPKffi", "_Z11spin_kernelx", "_Z14scale2d_kernelPfii"]' "$DUMP"
	# synchronisation records: one context sync per cudaDeviceSynchronize
	[ "$(jq -s '[.[] | select(.type == "sync" and .syncType == 4)] | length' "$DUMP")" -eq \
	  "$(jq -s '[.[] | select(.type == "runtime" and .name == "cudaDeviceSynchronize")] | length' "$DUMP")" ]
}

# bats test_tags=fakecuda
@test "fakecuda: CUPTI's device record (CUpti_ActivityDevice5) at cuInit, with what cudaGetDeviceProperties reports" {
	# the dump library enables DEVICE in InitializeInjection, before cuInit has finished: one
	# record per device, emitted then; device_props prints the runtime's view of each device
	run_on_fake -- "$TGT/device_props"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"DONE ok"* ]]
	python3 - "$OUT" "$DUMP" <<-'EOF'
		import json, sys
		props = {}
		for line in open(sys.argv[1]):
		    if line.startswith("DEVICE "):
		        d = json.loads(line[7:])
		        props[d["id"]] = d
		recs = [r for r in map(json.loads, open(sys.argv[2])) if r["type"] == "device"]
		assert props and sorted(r["id"] for r in recs) == sorted(props), (props, recs)
		for r in recs:
		    p = props[r["id"]]
		    want = {"name": p["name"], "globalMemorySize": p["totalGlobalMem"],
		            "computeCapabilityMajor": p["computeMajor"],
		            "computeCapabilityMinor": p["computeMinor"],
		            "numMultiprocessors": p["numSms"], "numThreadsPerWarp": p["warpSize"],
		            "maxThreadsPerBlock": p["maxThreadsPerBlock"],
		            "maxRegistersPerBlock": p["regsPerBlock"],
		            "maxRegistersPerMultiprocessor": p["regsPerMultiprocessor"],
		            "maxSharedMemoryPerBlock": p["sharedMemPerBlock"],
		            "maxSharedMemoryPerMultiprocessor": p["sharedMemPerMultiprocessor"]}
		    for k, v in want.items():
		        assert r[k] == v, (k, r[k], v)
		    assert r["maxWarpsPerMultiprocessor"] * r["numThreadsPerWarp"] == \
		        p["maxThreadsPerMultiprocessor"], r
		print(f"{len(recs)} device record(s) equal to cudaGetDeviceProperties()")
	EOF
}

# bats test_tags=fakecuda
@test "fakecuda: CUPTI attached late records only work launched while enabled, and detaches" {
	# late_cupti dlopens its CUPTI client after CUDA is busy: a spin kernel runs and
	# another thread waits in cudaStreamSynchronize when S1 enables activity
	run env LD_LIBRARY_PATH="$FC" "$TGT/late_cupti" "$FC/liblate_cupti_client.so"
	printf '%s\n' "$output" > "$OUT"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"CHECK enabled while a kernel runs ok"* ]]
	[[ "$output" == *"DONE ok"* ]]
	has() { grep -qxF -- "$1" "$OUT" || { echo "missing: $1"; false; }; }
	lines_of() { grep -c -- "^$1 " "$OUT" || true; }
	# S1: the 5 window kernels, one copy, one memset and the main thread's two stream
	# syncs; not the warm-up, spin or after kernels, nor the helper's earlier sync
	has "S1 result subscribe=0 register=0 enable=0 disable=0 flush=0 end=0"
	has "S1 count kernel=5 memcpy=1 memset=1 runtime=20 driver=14 sync=2 other=0"
	[ "$(lines_of 'S1 kernel')" -eq 1 ]
	has "S1 kernel _Z13window_kerneli 5"
	has "S1 runtime __cudaLaunchKernel 5"
	has "S1 driver cuLaunchKernel 5"
	has "S1 runtime cudaMemcpyAsync 1"
	has "S1 runtime cudaMemsetAsync 1"
	has "S1 runtime cudaStreamSynchronize 2"
	has "S1 driver cuStreamSynchronize 2"
	has "S1 outside=0 orphans=0 dropped=0"
	# S2 subscribes again: a spin and 2 window kernels still pending at the disable
	# keep their CONCURRENT_KERNEL kind; cuptiFinalize from an exit callback works
	has "S2 result subscribe=0 register=0 enable=0 disable=0 flush=0 end=0"
	has "S2 count kernel=3 memcpy=0 memset=0 runtime=10 driver=6 sync=0 other=0"
	[ "$(lines_of 'S2 kernel')" -eq 2 ]
	has "S2 kernel _Z11spin_kernelx 1"
	has "S2 kernel _Z13window_kerneli 2"
	has "S2 outside=0 orphans=0 dropped=0"
	# S3 attaches after cuptiFinalize: nothing from while it was detached
	has "S3 result subscribe=0 register=0 enable=0 disable=0 flush=0 end=0"
	has "S3 count kernel=1 memcpy=0 memset=0 runtime=4 driver=3 sync=1 other=0"
	[ "$(lines_of 'S3 kernel')" -eq 1 ]
	has "S3 kernel _Z13window_kerneli 1"
	has "S3 runtime cudaDeviceSynchronize 1"
	has "S3 outside=0 orphans=0 dropped=0"
	[[ "$output" != *after_kernel* ]]
}

# bats test_tags=fakecuda
@test "fakecuda: cuGetProcAddress resolves base names by CUDA version and stream flavour" {
	run env LD_LIBRARY_PATH="$FC" python3 - <<'PY'
import ctypes as C
cuda = C.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
def get(name, version, flags=0):
    p, st = C.c_void_p(), C.c_int(-1)
    r = cuda.cuGetProcAddress_v2(name, C.byref(p), version, C.c_uint64(flags), C.byref(st))
    return r, p.value, st.value
addr = lambda n: C.cast(getattr(cuda, n), C.c_void_p).value
assert get(b"cuMemAlloc", 13000) == (0, addr("cuMemAlloc_v2"), 0)
assert get(b"cuLaunchKernel", 13000, 2) == (0, addr("cuLaunchKernel_ptsz"), 0)
assert get(b"cuEventElapsedTime", 12000)[1] == addr("cuEventElapsedTime")
assert get(b"cuEventElapsedTime", 12080)[1] == addr("cuEventElapsedTime_v2")
assert get(b"cuLibraryLoadData", 11000)[::2] == (500, 2)   # version not sufficient
assert get(b"cuNoSuchThing", 13000)[::2] == (500, 1)       # symbol not found
print("ok")
PY
	echo "$output"
	[ "$status" -eq 0 ]
}
