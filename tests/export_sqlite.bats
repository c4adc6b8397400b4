#!/usr/bin/env bats
# `gpuspy export --format sqlite` (output/export/export_sqlite*.c, docs/SQLITE.md): nsys's
# tables queried with the sqlite3 CLI reproduce gpuspy's own reports exactly: the kernel summary
# (cuda_gpu_kern_sum), copies and memsets (cuda_gpu_mem_time_sum) and operators (ops) on the
# simulated GPU, the OS-runtime summary (osrt_sum) with every call a span and NVTX ranges
# (nvtx_sum), the steps and stalls reports on a stall workload; a path that cannot be written
# leaves nothing behind.
# bats file_tags=bpf,cuda,cupti

load helpers
load lib/stalls
bats_require_minimum_version 1.5.0

TGT=$BUILD/targets/cuda

setup() {
	require_bpf
	require_cmd jq
	require_cmd sqlite3
	WORK=$(mktemp -d)
}

teardown() {
	rm -rf "$WORK"
}

require_fakecuda() {
	[ -e "$FC/libcudart.so.13" ] && [ -e "$TGT/streams_events" ] || skip "run 'make fakecuda' first"
	[ -e "$BUILD/libgpuspy_cupti.so" ] || skip "the CUPTI bridge was not built (no CUPTI headers)"
}

# Records COMMAND with every syscall a span (--osrt-threshold 0: OSRT_API then holds every call
# osrt_sum counts) and exports it to $WORK/t.sqlite.
record_and_export() { # COMMAND...
	run "$GPUSPY" record -q -f --osrt-threshold 0 -o "$WORK/t.gpuspy" -- "$@"
	[ "$status" -eq 0 ]
	run "$GPUSPY" export "$WORK/t.gpuspy" --format sqlite -o "$WORK/t.sqlite"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "export sqlite: nsys's kernel table reproduces cuda_gpu_kern_sum exactly" {
	require_fakecuda
	record_and_export env LD_LIBRARY_PATH="$FC" "$TGT/streams_events"
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_gpu_kern_sum --format json |
		jq -r '.[] | "\(.name)|\(.instances)|\(.total_ns)|\(.min_ns)|\(.max_ns)"' |
		sort > "$WORK/report"
	# nsys's cuda_gpu_kern_sum recipe, reduced to the exact columns
	sqlite3 "$WORK/t.sqlite" "SELECT s.value, count(*), sum(k.end - k.start),
		min(k.end - k.start), max(k.end - k.start)
		FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON s.id = k.demangledName
		GROUP BY s.value" | sort > "$WORK/sql"
	cat "$WORK/report"
	[ -s "$WORK/report" ]
	diff "$WORK/report" "$WORK/sql"
	# every kernel's launch is in the runtime table under its correlation id
	run sqlite3 "$WORK/t.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
		WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
		WHERE r.correlationId = k.correlationId AND r.globalTid >> 24 = k.globalPid >> 24)"
	[ "$output" = 0 ]
	# globalTid is nsys's pid << 24 | tid, of a thread that ThreadNames names
	run sqlite3 "$WORK/t.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
		WHERE NOT EXISTS (SELECT 1 FROM ThreadNames AS t WHERE t.globalTid = r.globalTid)"
	[ "$output" = 0 ]
	run sqlite3 "$WORK/t.sqlite" "SELECT count(*) FROM sqlite_master WHERE type = 'index'
		AND name IN ('CUPTI_ACTIVITY_KIND_KERNEL_start', 'CUPTI_ACTIVITY_KIND_KERNEL_corr')"
	[ "$output" = 2 ]
}

@test "export sqlite: the copy and memset tables reproduce cuda_gpu_mem_time_sum's counts and totals" {
	require_fakecuda
	record_and_export env LD_LIBRARY_PATH="$FC" "$TGT/memory_errors"
	"$GPUSPY" report "$WORK/t.gpuspy" --report cuda_gpu_mem_time_sum --format json |
		jq -r '.[] | "\(.operation)|\(.count)|\(.total_ns)"' | sort > "$WORK/report"
	sqlite3 "$WORK/t.sqlite" "SELECT '[CUDA memcpy ' || e.label || ']', count(*),
		sum(m.end - m.start) FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m
		JOIN ENUM_CUDA_MEMCPY_OPER AS e ON e.id = m.copyKind GROUP BY e.label
		UNION ALL SELECT '[CUDA memset]', count(*), sum(end - start)
		FROM CUPTI_ACTIVITY_KIND_MEMSET HAVING count(*) > 0" | sort > "$WORK/sql"
	cat "$WORK/report"
	grep -q memcpy "$WORK/report"
	diff "$WORK/report" "$WORK/sql"
}

# nsys numbers ENUM_CUDA_MEM_KIND from PAGEABLE (0), CUPTI from UNKNOWN: recipes that test
# srcKind = 1 for pinned memory, or look the ids up by nsys's names, must find the same rows.
@test "export sqlite: enum ids and names as nsys's; each copy's kinds as the Kineto export names them" {
	require_fakecuda
	record_and_export env LD_LIBRARY_PATH="$FC" "$TGT/memory_errors"
	run sqlite3 "$WORK/t.sqlite" "SELECT id || ' ' || name || ' ' || label FROM ENUM_CUDA_MEM_KIND
		WHERE id IN (0, 1, 2, 7) ORDER BY id"
	[ "$output" = "0 CUDA_MEMOPR_MEMORY_KIND_PAGEABLE Pageable
1 CUDA_MEMOPR_MEMORY_KIND_PINNED Pinned
2 CUDA_MEMOPR_MEMORY_KIND_DEVICE Device
7 CUDA_MEMOPR_MEMORY_KIND_UNKNOWN Unknown" ]
	run sqlite3 "$WORK/t.sqlite" "SELECT id || ' ' || name || ' ' || label FROM ENUM_CUDA_MEMCPY_OPER
		WHERE id IN (1, 2, 8) ORDER BY id"
	[ "$output" = "1 CUDA_MEMCPY_KIND_HTOD Host-to-Device
2 CUDA_MEMCPY_KIND_DTOH Device-to-Host
8 CUDA_MEMCPY_KIND_DTOD Device-to-Device" ]
	# the program copies from pageable and from pinned memory: both kinds are there
	run sqlite3 "$WORK/t.sqlite" "SELECT DISTINCT srcKind FROM CUPTI_ACTIVITY_KIND_MEMCPY
		WHERE copyKind = 1 ORDER BY 1"
	[ "$output" = "0
1" ]
	# every copy, named from the enums as the Kineto export names it from the records
	"$GPUSPY" export "$WORK/t.gpuspy" --format kineto -o "$WORK/t.json"
	jq -r '.traceEvents[] | select(.cat == "gpu_memcpy") | .name | ascii_upcase' "$WORK/t.json" |
		sort > "$WORK/kineto"
	sqlite3 "$WORK/t.sqlite" "SELECT upper('Memcpy ' || substr(o.name, 18) || ' (' || s.label ||
		' -> ' || d.label || ')') FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m
		JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = m.copyKind
		JOIN ENUM_CUDA_MEM_KIND AS s ON s.id = m.srcKind
		JOIN ENUM_CUDA_MEM_KIND AS d ON d.id = m.dstKind" | sort > "$WORK/sql"
	[ -s "$WORK/kineto" ]
	diff "$WORK/kineto" "$WORK/sql"
	# the event classes and NVTX types looked up by name, as recipes do
	run sqlite3 "$WORK/t.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
		JOIN ENUM_NSYS_EVENT_CLASS AS c ON c.id = r.eventClass
		WHERE c.name NOT IN ('TRACE_PROCESS_EVENT_CUDA_RUNTIME', 'TRACE_PROCESS_EVENT_CUDA_DRIVER')
		UNION ALL SELECT count(*) FROM OSRT_API AS o JOIN ENUM_NSYS_EVENT_CLASS AS c
		ON c.id = o.eventClass WHERE c.name != 'TRACE_PROCESS_EVENT_OS_RUNTIME'
		UNION ALL SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME) > 0"
	[ "$output" = "0
0
1" ]
	run sqlite3 "$WORK/t.sqlite" "SELECT id FROM ENUM_NSYS_EVENT_TYPE
		WHERE name IN ('NvtxMark', 'NvtxPushPopRange', 'NvtxStartEndRange') ORDER BY id"
	[ "$output" = "34
59
60" ]
}

@test "export sqlite: OSRT_API reproduces osrt_sum's calls, total, min and max exactly" {
	require_fakecuda
	record_and_export env LD_LIBRARY_PATH="$FC" "$TGT/nvtx_ranges"
	"$GPUSPY" report "$WORK/t.gpuspy" --report osrt_sum --format json |
		jq -r '.[] | "\(.name)|\(.calls)|\(.total_ns)|\(.min_ns)|\(.max_ns)"' |
		sort > "$WORK/report"
	sqlite3 "$WORK/t.sqlite" "SELECT s.value, count(*), sum(o.end - o.start),
		min(o.end - o.start), max(o.end - o.start)
		FROM OSRT_API AS o JOIN StringIds AS s ON s.id = o.nameId GROUP BY s.value" |
		sort > "$WORK/sql"
	[ -s "$WORK/report" ]
	diff "$WORK/report" "$WORK/sql"
	# the program's NVTX ranges and marks, as nvtx_sum counts them (a mark's end is NULL)
	"$GPUSPY" report "$WORK/t.gpuspy" --report nvtx_sum --format json |
		jq -r '.[] | "\(.range)|\(.instances)|\(.total_ns)"' | sort > "$WORK/nvtx_report"
	sqlite3 "$WORK/t.sqlite" "SELECT text, count(*), sum(coalesce(end - start, 0))
		FROM NVTX_EVENTS GROUP BY text, eventType" | sort > "$WORK/nvtx_sql"
	cat "$WORK/nvtx_report"
	[ -s "$WORK/nvtx_report" ]
	diff "$WORK/nvtx_report" "$WORK/nvtx_sql"
}

@test "export sqlite: STEPS holds the steps report's steps, STALLS the stalls report's findings" {
	require_root
	[ -x "$PYTHON" ] || skip "needs $PYTHON"
	record_workload lock_wait
	run "$GPUSPY" export "$WORK/lock_wait.gpuspy" --format sqlite -o "$WORK/t.sqlite"
	[ "$status" -eq 0 ]
	"$GPUSPY" report "$WORK/lock_wait.gpuspy" --report steps --format json |
		jq -r '.[] | select(.note != "median" and .note != "p90") |
			"\(.pid)|\(.step)|\(.start_ns)|\(.duration_ns)"' > "$WORK/report"
	sqlite3 "$WORK/t.sqlite" "SELECT pid, step, start, duration_ns FROM STEPS
		ORDER BY pid, step" > "$WORK/sql"
	[ "$(wc -l < "$WORK/report")" -eq "$STEPS" ]
	diff "$WORK/report" "$WORK/sql"
	"$GPUSPY" report "$WORK/lock_wait.gpuspy" --report stalls --format json |
		jq -r '.[] | "\(.rank)|\(.kind)|\(.total_ns)|\(.steps)"' > "$WORK/stalls_report"
	sqlite3 "$WORK/t.sqlite" "SELECT rank, kind, total_ns, steps FROM STALLS ORDER BY rank" \
		> "$WORK/stalls_sql"
	[ -s "$WORK/stalls_report" ]
	diff "$WORK/stalls_report" "$WORK/stalls_sql"
}

@test "export sqlite: PYTORCH_OPS reproduces the ops report's calls, CPU and GPU times exactly" {
	require_fakecuda
	[ -e "$TGT/libtorch_aten_like_cuda.so" ] || skip "run 'make fakecuda' first"
	record_and_export env LD_LIBRARY_PATH="$FC" python3 "$ROOT/tests/targets/cuda/aten_like.py" \
		"$TGT/libtorch_aten_like_cuda.so" 20
	"$GPUSPY" report "$WORK/t.gpuspy" --report ops --format json |
		jq -r '.[] | "\(.name)|\(.calls)|\(.self_cpu_ns)|\(.cpu_total_ns)|\(.self_cuda_ns)|\(.cuda_total_ns)"' |
		sort > "$WORK/report"
	sqlite3 "$WORK/t.sqlite" "SELECT s.value, count(*), sum(o.self_ns), sum(o.end - o.start),
		sum(o.self_cuda_ns), sum(o.cuda_total_ns)
		FROM PYTORCH_OPS AS o JOIN StringIds AS s ON s.id = o.nameId GROUP BY s.value" |
		sort > "$WORK/sql"
	cat "$WORK/report"
	[ -s "$WORK/report" ]
	diff "$WORK/report" "$WORK/sql"
}

@test "export sqlite: an output that cannot be written is one line, and nothing is left behind" {
	printf 'not a trace' > "$WORK/bad.gpuspy"
	run "$GPUSPY" export "$WORK/bad.gpuspy" --format sqlite -o "$WORK/out.sqlite"
	[ "$status" -eq 3 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$(ls "$WORK")" = bad.gpuspy ]
	run "$GPUSPY" record -q -f -o "$WORK/t.gpuspy" -- true
	[ "$status" -eq 0 ]
	run "$GPUSPY" export "$WORK/t.gpuspy" --format sqlite -o "$WORK/no/such/dir/out.sqlite"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "gpuspy: cannot create $WORK/no/such/dir/out.sqlite: "* ]]
	mkdir "$WORK/ro"
	ln -s /etc/passwd "$WORK/ro/link.sqlite"
	run "$GPUSPY" export "$WORK/t.gpuspy" --format sqlite -o "$WORK/ro/link.sqlite"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$(ls "$WORK/ro")" = link.sqlite ]
	run "$GPUSPY" export "$WORK/t.gpuspy" --format sqlite -o -
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 1 ]
	# the default name, and a database sqlite3 reads
	run "$GPUSPY" export "$WORK/t.gpuspy" --format sqlite
	[ "$status" -eq 0 ]
	run sqlite3 "$WORK/t.gpuspy.sqlite" "PRAGMA integrity_check"
	[ "$output" = ok ]
	# no temporary file (OUT.XXXXXX) left by any of the exports above
	[ "$(ls "$WORK" | tr '\n' ' ')" = "bad.gpuspy ro t.gpuspy t.gpuspy.sqlite " ]
}
