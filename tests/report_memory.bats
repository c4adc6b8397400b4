#!/usr/bin/env bats
# What `gpuspy report` may allocate for what a trace holds: crafted traces written as the trace
# writer writes them (tests/lib/make_big_trace.py), the peak resident memory of the report
# measured by /usr/bin/time (a memory bound, not a timing). Measured on build/gpuspy: the
# sanitizer build's shadow memory and quarantine are not the program's.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	require_cmd python3
	require_cmd zstd
	[ -x /usr/bin/time ] || skip "needs /usr/bin/time (Debian package time)"
	[ -x "$BUILD/gpuspy" ] || skip "needs $BUILD/gpuspy (make)"
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

# Peak resident memory of `gpuspy report ARGS...`, in bytes; the report must succeed.
report_rss() {
	/usr/bin/time -f %M -o "$WORK/rss" "$BUILD/gpuspy" report "$@" > "$WORK/report.out"
	echo $(($(tail -n 1 "$WORK/rss") * 1024))
}

@test "2,000,000 CUPTI API records that join nothing: the report stays under 32 bytes of memory per byte of trace" {
	# the issue's trace: 5.3 MB of API records took 368 MiB (72 bytes per byte: a hash entry
	# per record for the correlation join, and every unmatched record listed and sorted
	# whether or not the gpu_unmatched report was asked for); 76 bytes per record now, and
	# zstd stores such a record in about 2.7 bytes
	python3 "$ROOT/tests/lib/make_big_trace.py" api 2000000 "$WORK/api.gpuspy" "$ROOT"
	size=$(stat -c %s "$WORK/api.gpuspy")
	rss=$(report_rss "$WORK/api.gpuspy")
	echo "trace $size bytes, report peak RSS $rss bytes ($((rss / size)) per byte)"
	grep -q "2000000 api records without uprobe span" "$WORK/report.out"
	[ "$rss" -le $((32 * size + 16 * 1024 * 1024)) ]
}

@test "the unmatched API records are still listed when gpu_unmatched is asked for" {
	python3 "$ROOT/tests/lib/make_big_trace.py" api 1000 "$WORK/api.gpuspy" "$ROOT"
	"$BUILD/gpuspy" report "$WORK/api.gpuspy" --report gpu_unmatched --format json > "$WORK/u.json"
	jq -e 'length == 1000 and all(.[]; .kind == "api record without uprobe span" and
		.name == "cudaLaunchKernel_v7000") and ([.[].correlation] == [range(1; 1001)])' \
		"$WORK/u.json"
}

@test "a GPU name longer than the bridge ever writes is kept cut at 1023 bytes" {
	python3 - "$WORK/long.gpuspy" "$ROOT" <<-'PY'
		import struct, sys
		sys.path.insert(0, sys.argv[2] + "/tests/lib")
		import make_big_trace as big, make_py_trace as mpt
		kernel = big.gpu_kernel(mpt.T0, 5000, 0)
		body = kernel[24:kernel.index(big.KERNEL)] + b"k" * 5000 + b"\0"
		recs = [mpt.trace_info(), mpt.rec(20, body, tid=0, ts=mpt.T0)]
		recs.append(mpt.rec(105, struct.pack("<Q", len(recs)), ts=mpt.T0 + 10**6))
		with open(sys.argv[1], "wb") as f:
		    f.write(struct.pack("<8sHHIQQ64s64s", b"GPUSPYTR", 2, 1, 160, 0, mpt.T0, b"h", b"k"))
		    f.write(big.zblock(recs))
	PY
	"$BUILD/gpuspy" report "$WORK/long.gpuspy" --report cuda_gpu_kern_sum --format json |
		jq -e 'length == 1 and (.[0].mangled | length == 1023 and test("^k+$"))'
}

@test "an operator name record's index cannot make report allocate by it" {
	# fuzz_report found it (tests/fuzz/regressions/op-name-index-134217729.gpuspy, 3.4 KB):
	# operator names were kept in an array indexed by the record's u32 index, so one OP_NAME
	# record of index 134,217,729 made report take 1 GB, and 2^32 - 1 would ask for 32 GiB
	python3 - "$WORK/op.gpuspy" "$ROOT" <<-'PY'
		import struct, sys
		sys.path.insert(0, sys.argv[2] + "/tests/lib")
		import make_big_trace as big, make_py_trace as mpt
		op = 0x08000001
		recs = [mpt.trace_info(), mpt.op_name(op, "aten::add"),
		        mpt.op_call(mpt.PID, mpt.T0, 1000, op, 0, False)]
		recs.append(mpt.rec(105, struct.pack("<Q", len(recs)), ts=mpt.T0 + 10**6))
		with open(sys.argv[1], "wb") as f:
		    f.write(struct.pack("<8sHHIQQ64s64s", b"GPUSPYTR", 2, 1, 160, 0, mpt.T0, b"h", b"k"))
		    f.write(big.zblock(recs))
	PY
	rss=$(report_rss "$WORK/op.gpuspy" --report ops --format json)
	echo "report peak RSS $rss bytes"
	jq -e 'length == 1 and .[0].name == "aten::add" and .[0].calls == 1' "$WORK/report.out"
	[ "$rss" -lt $((64 * 1024 * 1024)) ]
	# the fuzzer's own input too
	rss=$(report_rss "$ROOT/tests/fuzz/regressions/op-name-index-134217729.gpuspy")
	[ "$rss" -lt $((64 * 1024 * 1024)) ]
}
