#!/bin/sh
# Fails (exit 1, listing the names) if a shared library exports a function
# that NVIDIA's headers do not declare.  Names with the documented private
# prefix "fakecuda_internal_" are allowed (see tests/fakecuda/fc_hooks.h).
# usage: check_exports.sh CUDA_INCLUDE_DIR LIB...
set -eu
inc=$1
shift
declared=$(mktemp)
exported=$(mktemp)
trap 'rm -f "$declared" "$exported"' EXIT
cc=${CC:-gcc}
# Every identifier written as "name(" in the headers: as written (covers the
# C++-only crt/host_runtime.h that declares nvcc's __cuda* entry points) and
# after preprocessing in NVIDIA's internal mode, where macros such as
# "#define cuMemAlloc cuMemAlloc_v2" and the _ptsz/_ptds variants expand to
# the exported ABI names.
{
    printf '#define __CUDA_API_VERSION_INTERNAL 1\n#include <cuda.h>\n#include <cuda_runtime_api.h>\n' |
        "$cc" -E -P -I"$inc" -x c -
    printf '#include <cupti.h>\n' | "$cc" -E -P -I"$inc" -x c -
    cat "$inc"/*.h "$inc"/crt/*.h
} | grep -oE '[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(' | tr -d ' \t(' | sort -u > "$declared"
for lib in "$@"; do
    nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWi]$/ || $2 == "D" || $2 == "R" { print $3 }'
done | sed 's/@.*//' | grep -v '^fakecuda_internal_' | sort -u > "$exported"
[ -s "$exported" ] || { echo "no exports found in: $*" >&2; exit 1; }
bad=$(comm -23 "$exported" "$declared")
if [ -n "$bad" ]; then
    echo "exported but not declared in $inc:" >&2
    echo "$bad" >&2
    exit 1
fi
echo "$(wc -l < "$exported") exported names, all declared in NVIDIA's headers"
