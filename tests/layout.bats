#!/usr/bin/env bats
# The layout rules of docs/ARCHITECTURE.md (tests/check_layers.py): includes written from the root
# and pointing down the layers (lib/ below output/ below loader/), no include cycle, headers that
# declare their own .c file's functions only, at most 15 .c files a folder and 800 lines a file. The tree passes; copies of it broken one rule at a time fail
# with a line naming the file.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	require_cmd python3
	WORK=$(mktemp -d)
	cp -r "$ROOT/lib" "$ROOT/output" "$ROOT/loader" "$ROOT/bpf" "$WORK/"
}

teardown() {
	rm -rf "$WORK"
}

check() {
	python3 "$ROOT/tests/check_layers.py" "$WORK"
}

add_include() { # FILE HEADER
	printf '#include "%s"\n' "$2" >> "$WORK/$1"
}

@test "gpuspy's tree keeps the layout rules" {
	run python3 "$ROOT/tests/check_layers.py"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# and the copy the other tests break starts clean
	run -0 check
}

@test "an include from output/ or lib/ into loader/ fails" {
	add_include output/trace/trace_reader.c loader/record/recorder.h
	add_include lib/key_index.c loader/proc/procfs.h
	run -1 check
	echo "$output"
	[[ $output == *'output/trace/trace_reader.c: includes "loader/record/recorder.h": loader/record/ is above it'* ]]
	[[ $output == *'lib/key_index.c: includes "loader/proc/procfs.h": loader/proc/ is above it'* ]]
}

@test "an include from lib/ into output/, or between folders of one layer, fails" {
	add_include lib/table.c output/trace/trace_format.h
	add_include output/export/export_kineto.c output/report/base/report_groups.h
	run -1 check
	echo "$output"
	[[ $output == *'lib/table.c: includes "output/trace/trace_format.h": output/trace/ is above it'* ]]
	[[ $output == *'output/export/export_kineto.c: includes "output/report/base/report_groups.h": output/report/base/ is beside it'* ]]
}

@test "an include not written from the root fails" {
	add_include output/model/trace_model.c key_index.h
	run -1 check
	[ "$output" = 'check_layers: output/model/trace_model.c: "key_index.h" is not a path from the repository root' ]
}

@test "an include cycle inside a folder fails, naming the modules around it" {
	# string_pool.h includes key_index.h already
	sed -i 's|^#include <stdint.h>|&\n#include "lib/string_pool.h"|' "$WORK/lib/key_index.h"
	grep -q 'lib/string_pool.h' "$WORK/lib/key_index.h"
	run -1 check
	[ "$output" = 'check_layers: include cycle: lib/key_index -> lib/string_pool -> lib/key_index' ]
}

@test "a sixteenth .c file in a folder, or a file over 800 lines, fails" {
	n=$(ls "$WORK"/loader/record/*.c | wc -l)
	for i in $(seq "$n" 15); do echo 'int x;' > "$WORK/loader/record/extra_$i.c"; done
	yes '/* filler */' | head -801 > "$WORK/lib/long.h"
	run -1 check
	echo "$output"
	[[ $output == *'loader/record/: 16 .c files (at most 15'* ]]
	[[ $output == *'lib/long.h: 801 lines (at most 800'* ]]
}

@test "a header declaring a function another .c file defines fails, naming that file" {
	# recorder.h holds the recording's state only; record_targets.h declares this function
	printf '%s\n' 'int recorder_add_targets(struct recorder *r);' >> "$WORK/loader/record/recorder.h"
	# and a prototype over two lines, of a function in lib/value_parse.c
	printf '%s\n' 'int gs_parse_duration_ns(const char *s,' '			  uint64_t *out);' >> "$WORK/lib/clocks.h"
	run -1 check
	echo "$output"
	[[ $output == *'loader/record/recorder.h: declares recorder_add_targets(), which loader/record/record_targets.c defines (declare it in loader/record/record_targets.h)'* ]]
	[[ $output == *'lib/clocks.h: declares gs_parse_duration_ns(), which lib/value_parse.c defines'* ]]
}
