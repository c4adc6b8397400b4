#!/bin/sh
# Checks every CUDA_PROBE(LIB, SYMBOL, CLASS) of output/trace/cuda_probe_list.h against a
# runtime and a driver library: CUDART names must be exported with the
# version node "libcudart.so.13", CUDA names must be exported by libcuda.
# usage: check_probe_list.sh PROBE_LIST_H LIBCUDART LIBCUDA
set -eu
list=$1 cudart=$2 cuda=$3
rt=$(nm -D --defined-only "$cudart" | awk '{ print $3 }')
drv=$(nm -D --defined-only "$cuda" | awk '{ print $3 }')
probes=$(grep -E '^CUDA_PROBE\(' "$list" | sed -E 's/^CUDA_PROBE\(([A-Z]+), *([A-Za-z0-9_]+)[,)].*/\1 \2/')
[ -n "$probes" ] || { echo "no CUDA_PROBE lines in $list" >&2; exit 1; }
missing=0 n=0
while read -r lib sym; do
    n=$((n + 1))
    case $lib in
    CUDART) printf '%s\n' "$rt" | grep -qxF "$sym@@libcudart.so.13" ||
                { echo "missing in $cudart: $sym@@libcudart.so.13" >&2; missing=1; } ;;
    CUDA)   printf '%s\n' "$drv" | grep -qxF "$sym" ||
                { echo "missing in $cuda: $sym" >&2; missing=1; } ;;
    *)      echo "bad library '$lib' for $sym" >&2; missing=1 ;;
    esac
done <<LIST
$probes
LIST
[ "$missing" -eq 0 ] || exit 1
echo "$n probes present in $cudart and $cuda"
