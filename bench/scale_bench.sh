#!/bin/sh
# Reading a large trace: wall time, events/s and peak RSS of `gpuspy report` (the default
# reports), `report --report osrt_thread` and `export` (Chrome JSON, Perfetto protobuf, SQLite;
# each file's bytes per event) on a recording of EVENTS
# events (default 20000000): every syscall of BUILD_DIR/bench/syscall_bench a span
# (--osrt-threshold 0, 3 per iteration), so the trace holds about EVENTS span records. Also
# prints the trace size and the recording's loss count (the figures stand for the events that
# were kept; a loss is reported, not hidden). Results go to stdout as a README-ready table.
# usage: bench/scale_bench.sh BUILD_DIR [EVENTS]      (as root; `make bench` builds what it needs)
# Environment: SCALE_DIR: where the trace and the export go (default a temporary directory under
# /var/tmp, removed at the end; about 5 bytes of trace and 220 of JSON per event, one export
# kept at a time);
# SCALE_TRACE=FILE: measure an existing trace instead of recording one (kept).
set -eu
usage="usage: bench/scale_bench.sh BUILD_DIR [EVENTS]"
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "$usage" >&2
	exit 1
fi
build=$1
events=${2:-20000000}
gpuspy=$build/gpuspy
bench=$build/bench/syscall_bench
for f in "$gpuspy" "$bench" /usr/bin/time; do
	[ -x "$f" ] || {
		echo "scale_bench: $f missing (make BUILD=$build all $bench)" >&2
		exit 1
	}
done
if [ -n "${SCALE_DIR:-}" ]; then
	work=$SCALE_DIR
	mkdir -p "$work"
	cleanup() { rm -f "$work/scale.gpuspy" "$work"/x.* "$work"/*.out "$work"/*.err "$work"/*.time; }
else
	work=$(mktemp -d /var/tmp/gpuspy-scale.XXXXXX)
	cleanup() { rm -rf "$work"; }
fi
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "${SCALE_TRACE:-}" ]; then
	trace=$SCALE_TRACE
	lost="(not recorded here)"
	rec_events=
else
	trace=$work/scale.gpuspy
	iters=$(((events + 2) / 3))
	"$gpuspy" record -f --osrt-threshold 0 --buffer-size 256 -o "$trace" -- \
		"$bench" "$iters" > "$work/rec.out" 2> "$work/rec.err" || {
		echo "scale_bench: recording failed:" >&2
		cat "$work/rec.err" >&2
		exit 1
	}
	rec_events=$(sed -n 's/.*(\([0-9]*\) records, \([0-9]*\) events, \([0-9]*\) lost).*/\2/p' "$work/rec.err")
	lost=$(sed -n 's/.*(\([0-9]*\) records, \([0-9]*\) events, \([0-9]*\) lost).*/\3/p' "$work/rec.err")
fi
# the spans in the file: what report and export read through
spans=$("$gpuspy" report "$trace" --report osrt_sum --format json 2> /dev/null |
	sed -n 's/.*"calls": *\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
hdr=$("$gpuspy" report "$trace" --report losses 2> /dev/null | sed -n 's/^duration: .*, \([0-9]*\) syscall spans.*/\1/p')
bytes=$(stat -c %s "$trace")
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
echo "recording: ${rec_events:-?} events, lost: $lost; trace: $bytes bytes, ${hdr:-?} syscall spans, $spans syscalls counted"
[ "$lost" = 0 ] || [ "$lost" = "(not recorded here)" ] ||
	echo "note: $lost events were lost while recording; the figures are for the $hdr spans kept"

# one measured run: label, then the command; prints a table row
measure() {
	label=$1
	shift
	sync
	/usr/bin/time -f '%e %M' -o "$work/m.time" "$@" > "$work/m.out" 2> "$work/m.err" || {
		echo "scale_bench: '$*' failed:" >&2
		tail -5 "$work/m.err" >&2
		exit 1
	}
	awk -v l="$label" -v n="$hdr" '{
		printf "| %-34s | %11d | %7.2f | %10.0f | %8.1f |\n", l, n, $1, ($1 > 0 ? n / $1 : 0), $2 / 1024
	}' "$work/m.time"
}

echo
echo "| command                            |      events |  wall s |   events/s | peak RSS MiB |"
echo "|---|---:|---:|---:|---:|"
measure "report (default reports)" "$gpuspy" report "$trace"
measure "report --report osrt_thread" "$gpuspy" report "$trace" --report osrt_thread
measure "export -o x.json (chrome)" "$gpuspy" export "$trace" -o "$work/x.json"
json=$(stat -c %s "$work/x.json")
rm -f "$work/x.json"
measure "export --format perfetto" "$gpuspy" export "$trace" --format perfetto -o "$work/x.pftrace"
proto=$(stat -c %s "$work/x.pftrace")
rm -f "$work/x.pftrace"
measure "export --format sqlite" "$gpuspy" export "$trace" --format sqlite -o "$work/x.sqlite"
db=$(stat -c %s "$work/x.sqlite")
rm -f "$work/x.sqlite"
echo
for f in "chrome JSON:$json" "perfetto protobuf:$proto" "sqlite:$db"; do
	awk -v f="${f%%:*}" -v b="${f##*:}" -v n="$hdr" \
		'BEGIN { printf "export %s: %.0f bytes, %.1f per event\n", f, b, n ? b / n : 0 }'
done
