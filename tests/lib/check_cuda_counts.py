#!/usr/bin/env python3
"""Compare what a CUDA target program says it did (the lines of tests/targets/cuda/calls.h)
with gpuspy's CUDA reports for its trace, exactly: calls and errors per API function,
launches per kernel name, copies and bytes per direction, memsets, allocations per kind.

usage: check_cuda_counts.py PROGRAM_OUTPUT REPORTS_JSON
REPORTS_JSON: `gpuspy report T --report cuda_api_sum,cuda_launches,cuda_copies,gpu_mem
--format json` (one object of arrays keyed by report name). Exits 1 listing every mismatch."""
import collections
import json
import sys

COPY = {"HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "DtoD": "Device-to-Device",
        "HtoH": "Host-to-Host"}
ALLOC_KIND = {"cudaMallocHost": "pinned", "cuMemAllocHost_v2": "pinned",
              "cudaMallocManaged": "managed", "cuMemAllocManaged": "managed"}


def parse(path):
    lines = []
    for line in open(path):
        word, *fields = line.split()
        if word in ("LAUNCH", "LAUNCH_FAILED", "MEMCPY", "MEMCPY_FAILED", "MEMSET",
                    "MEMSET_FAILED", "ALLOC", "FREE", "SYNC"):
            lines.append((word, dict(f.split("=", 1) for f in fields if "=" in f)))
    return lines


def expected(lines):
    calls, errors = collections.Counter(), collections.Counter()
    launches, copies, allocs = collections.Counter(), {}, {}
    for word, kv in lines:
        api = kv["api"]
        calls[api] += 1
        if word.endswith("_FAILED") or kv.get("ok") == "0":
            errors[api] += 1
            continue
        if word == "LAUNCH":
            launches["<graph>" if api == "cuGraphLaunch" else kv["name"]] += 1
        elif word in ("MEMCPY", "MEMSET"):
            op = "[CUDA memset]" if word == "MEMSET" else "[CUDA memcpy %s]" % COPY[kv["kind"]]
            n, b = copies.get(op, (0, 0))
            copies[op] = (n + 1, b + int(kv["bytes"]))
        elif word == "ALLOC":
            kind = ALLOC_KIND.get(api, "device")
            n, b = allocs.get(kind, (0, 0))
            allocs[kind] = (n + 1, b + int(kv["bytes"]))
    return calls, errors, launches, copies, allocs


def main():
    lines = parse(sys.argv[1])
    rep = json.load(open(sys.argv[2]))
    calls, errors, launches, copies, allocs = expected(lines)
    bad = []
    api = {r["name"]: r for r in rep["cuda_api_sum"]}
    for name, n in calls.items():
        got = api.get(name, {"calls": 0, "errors": 0})
        if got["calls"] != n or got["errors"] != errors[name]:
            bad.append("%s: %d calls, %d errors; gpuspy %d, %d"
                       % (name, n, errors[name], got["calls"], got["errors"]))
    got_launches = collections.Counter()
    for r in rep["cuda_launches"]:
        key = "<graph>" if r["name"].startswith("<graph") else r["mangled"]
        got_launches[key] += r["launches"]
    if got_launches != launches:
        bad.append("launches per kernel: program %s, gpuspy %s"
                   % (dict(launches), dict(got_launches)))
    got_copies = {r["operation"]: (r["count"], r["bytes"]) for r in rep["cuda_copies"]}
    if got_copies != copies:
        bad.append("copies: program %s, gpuspy %s" % (copies, got_copies))
    got_allocs = {r["kind"]: (r["allocs"], r["alloc_bytes"]) for r in rep["gpu_mem"]
                  if r["allocs"]}
    if got_allocs != allocs:
        bad.append("allocations: program %s, gpuspy %s" % (allocs, got_allocs))
    for b in bad:
        print("MISMATCH " + b)
    print("%d API functions, %d kernels, %d copy kinds compared: %s"
          % (len(calls), len(launches), len(copies), "FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
