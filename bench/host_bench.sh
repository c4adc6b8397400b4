#!/bin/sh
# A busy host recorded whole: `gpuspy record -a -d MINUTESm` while a mixed load runs, to size
# what a host-wide recording costs in trace bytes and events per minute, and whether it loses
# any. The load, each part in its own loop as fast as it goes:
#  - spawn: a shell loop starting short processes (/bin/true), the churn of process and
#    statistics keys;
#  - io: 64 KiB written and fsync'd (dd conv=fsync), the file removed, over and over;
#  - pyread: a python3 loop reading a few 64 KiB files (open, read, close);
#  - compile: gcc -c of a small C file.
# Defaults for everything else (1 us span threshold, 16 MiB ring buffer, 10 s checkpoints).
# Prints the figures (trace bytes, events and losses, per minute) and the loss breakdown, then
# what reading the trace back costs (report, wall time and peak RSS).
# usage: bench/host_bench.sh BUILD_DIR MINUTES     (as root)
# Environment: HOST_DIR: where the trace goes (default a temporary directory under /var/tmp,
# removed at the end); HOST_KEEP=FILE: keep the trace there; HOST_DURATION=DUR: record for DUR
# (a -d value such as 20s) instead of MINUTES, for a quick check of the script.
set -eu
usage="usage: bench/host_bench.sh BUILD_DIR MINUTES"
if [ $# -ne 2 ]; then
	echo "$usage" >&2
	exit 1
fi
build=$1
minutes=$2
gpuspy=$build/gpuspy
case $minutes in '' | *[!0-9]*)
	echo "$usage" >&2
	exit 1
	;;
esac
for c in "$gpuspy" /usr/bin/time; do
	[ -x "$c" ] || {
		echo "host_bench: $c missing" >&2
		exit 1
	}
done
for c in gcc python3 dd; do
	command -v "$c" > /dev/null || {
		echo "host_bench: needs $c" >&2
		exit 1
	}
done
work=$(mktemp -d "${HOST_DIR:-/var/tmp}/gpuspy-host.XXXXXX")
pids=
stop_load() {
	touch "$work/stop"
	for p in $pids; do
		wait "$p" 2> /dev/null || true
	done
	pids=
}
cleanup() {
	stop_load
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# the load: each loop ends when $work/stop appears, counting its iterations
cat > "$work/small.c" << 'EOF'
#include <stdio.h>
struct point { double x, y; };
static double dot(struct point a, struct point b) { return a.x * b.x + a.y * b.y; }
int main(void)
{
	struct point a = {1, 2}, b = {3, 4};
	printf("%f\n", dot(a, b));
	return 0;
}
EOF
for i in 1 2 3 4; do
	head -c 65536 /dev/urandom > "$work/data$i"
done
loop() { # NAME COMMAND...
	name=$1
	shift
	(
		n=0
		while [ ! -e "$work/stop" ]; do
			"$@" > /dev/null 2>&1 || true
			n=$((n + 1))
		done
		echo "$n" > "$work/$name.count"
	) &
	pids="$pids $!"
}
loop spawn /bin/true
loop io sh -c "dd if=/dev/zero of='$work/io.tmp' bs=64k count=1 conv=fsync && rm -f '$work/io.tmp'"
loop compile gcc -c -O1 "$work/small.c" -o "$work/small.o"
python3 - "$work" << 'EOF' &
import os, sys
work, n = sys.argv[1], 0
files = [os.path.join(work, f"data{i}") for i in range(1, 5)]
while not os.path.exists(os.path.join(work, "stop")):
    for f in files:
        with open(f, "rb") as fh:
            fh.read()
    n += 1
with open(os.path.join(work, "pyread.count"), "w") as out:
    print(n * len(files), file=out)
EOF
pids="$pids $!"
sleep 1 # the load running before the recording starts

trace=$work/host.gpuspy
start=$(date +%s%N)
duration=${HOST_DURATION:-${minutes}m}
"$gpuspy" record -a -d "$duration" -f -o "$trace" > "$work/rec.out" 2> "$work/rec.err" || {
	echo "host_bench: recording failed:" >&2
	tail -5 "$work/rec.err" >&2
	exit 1
}
end=$(date +%s%N)
stop_load

summary=$(grep 'gpuspy: wrote' "$work/rec.err" || true)
events=$(echo "$summary" | sed -n 's/.*(\([0-9]*\) records, \([0-9]*\) events, \([0-9]*\) lost).*/\2/p')
lost=$(echo "$summary" | sed -n 's/.*(\([0-9]*\) records, \([0-9]*\) events, \([0-9]*\) lost).*/\3/p')
records=$(echo "$summary" | sed -n 's/.*(\([0-9]*\) records, .*/\1/p')
bytes=$(stat -c %s "$trace")
/usr/bin/time -f '%e %M' -o "$work/report.time" "$gpuspy" report "$trace" --report osrt_sum,losses \
	> "$work/report.txt" 2> "$work/report.err" || {
	echo "host_bench: report failed:" >&2
	tail -5 "$work/report.err" >&2
	exit 1
}
spans=$(sed -n 's/^duration: \([0-9.]*\) s, \([0-9]*\) syscall spans.*, \([0-9]*\) off-cpu spans/\1 \2 \3/p' "$work/report.txt")
calls=$("$gpuspy" report "$trace" --report osrt_sum --format json 2> /dev/null |
	sed -n 's/.*"calls": *\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')

echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
echo "load (iterations while recorded, about): spawn $(cat "$work/spawn.count" 2> /dev/null || echo ?)," \
	"io+fsync $(cat "$work/io.count" 2> /dev/null || echo ?)," \
	"python reads $(cat "$work/pyread.count" 2> /dev/null || echo ?)," \
	"gcc -c $(cat "$work/compile.count" 2> /dev/null || echo ?)"
echo "$spans" | awk -v m="$duration" -v b="$bytes" -v e="$events" -v r="$records" -v l="$lost" \
	-v c="$calls" -v w="$(((end - start) / 1000000))" '{
	mins = $1 / 60
	printf "recording: gpuspy record -a -d %s, %.1f s of trace (%.1f s wall)\n", m, $1, w / 1000
	printf "| figure | total | per minute |\n|---|---:|---:|\n"
	printf "| trace bytes | %d | %.1f MiB |\n", b, b / mins / 1048576
	printf "| events (ring buffer records) | %d | %.0f |\n", e, e / mins
	printf "| records written | %d | %.0f |\n", r, r / mins
	printf "| syscall spans (>= 1 us) | %d | %.0f |\n", $2, $2 / mins
	printf "| off-CPU spans (>= 1 us) | %d | %.0f |\n", $3, $3 / mins
	printf "| syscalls counted (statistics) | %d | %.0f |\n", c, c / mins
	printf "| events lost | %d | %.0f |\n", l, l / mins
	printf "bytes per event: %.1f\n", b / (e > 0 ? e : 1)
}'
# the header's breakdown: "events lost: N", then "  N kind" lines
awk '/^events lost:/ { on = 1; next } on && /^  [0-9]/ { sub(/^ +/, ""); print "lost: " $0; next } { on = 0 }' \
	"$work/report.txt"
awk '{ printf "report --report osrt_sum,losses: %.2f s, peak RSS %.1f MiB\n", $1, $2 / 1024 }' \
	"$work/report.time"
if [ -n "${HOST_KEEP:-}" ]; then
	cp "$trace" "$HOST_KEEP"
	echo "trace kept: $HOST_KEEP"
fi
