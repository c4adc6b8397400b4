#!/usr/bin/env python3
"""Check the GPU records gpuspy got through its CUPTI bridge against what a CUDA target program
says it did (tests/targets/cuda/calls.h lines) and the simulator's timing model
(docs/FAKECUDA.md): every LAUNCH has exactly one kernel with its name, grid and block, every
MEMCPY/MEMSET one GPU operation with its bytes and direction; durations are exactly the
simulated ones; every GPU operation has exactly one flow from the API span that launched it,
starting no earlier than that span (within the clock alignment bound); GPU busy time equals the
union of the operations' intervals.

usage: check_gpu_records.py PROGRAM_OUTPUT REPORTS_JSON CHROME_JSON [KERNEL=NS ...]
REPORTS_JSON: `gpuspy report T --report cuda_gpu_trace,gpu_util,gpu_mode --format json`.
KERNEL=NS: a mangled kernel name's simulated duration (default 100000 ns)."""
import collections
import json
import math
import sys

COPY = {"HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "DtoD": "Device-to-Device"}
BW = {"Host-to-Device": 25, "Device-to-Host": 25, "Device-to-Device": 1000}
LATENCY, MEMSET_BW, DEFAULT_KERNEL_NS = 1000, 2000, 100000


def program_ops(path):
    kernels, copies, memsets = collections.Counter(), collections.Counter(), collections.Counter()
    for line in open(path):
        word, *fields = line.split()
        kv = dict(f.split("=", 1) for f in fields if "=" in f)
        if word == "LAUNCH" and kv["api"] != "cuGraphLaunch":
            kernels[(kv["name"], kv["grid"], kv["block"])] += 1
        elif word == "MEMCPY":
            copies[(COPY[kv["kind"]], int(kv["bytes"]))] += 1
        elif word == "MEMSET":
            memsets[int(kv["bytes"])] += 1
    return kernels, copies, memsets


def us_to_ns(v):
    return round(v * 1000)


def check(out, reports, chrome, kernel_ns):
    bad = []
    kernels, copies, memsets = program_ops(out)
    events = chrome["traceEvents"]
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    got_k, got_c, got_m = collections.Counter(), collections.Counter(), collections.Counter()
    for e in gpu:
        a, dur = e["args"], us_to_ns(e["dur"])
        if e["cat"] == "kernel":
            key = (a["mangled"], ",".join(map(str, a["grid"])), ",".join(map(str, a["block"])))
            got_k[key] += 1
            want = kernel_ns.get(a["mangled"], DEFAULT_KERNEL_NS)
        elif e["cat"] == "gpu_memcpy":
            got_c[(a["kind"], a["bytes"])] += 1
            want = LATENCY + math.ceil(a["bytes"] / BW[a["kind"]])
        else:
            got_m[a["bytes"]] += 1
            want = LATENCY + math.ceil(a["bytes"] / MEMSET_BW)
        if dur != want:
            bad.append("%s %s took %d ns, simulated %d" % (e["cat"], e["name"], dur, want))
    for what, want, got in (("kernels", kernels, got_k), ("copies", copies, got_c),
                            ("memsets", memsets, got_m)):
        if want != got:
            bad.append("%s: program %s, gpuspy %s" % (what, dict(want), dict(got)))
    # flows: one per GPU operation, from the launching API span, never after the GPU start
    err_ns = max([m["clock_error_ns"] for m in reports["gpu_mode"]] or [0])
    starts = {e["id"]: e for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    ends = collections.Counter(e["id"] for e in events if e.get("ph") == "f")
    if len(starts) != len(gpu) or sorted(ends.values()) != [1] * len(gpu) or set(ends) != set(starts):
        bad.append("flows: %d GPU ops, %d flow starts, %d flow ends"
                   % (len(gpu), len(starts), sum(ends.values())))
    spans = {(e["pid"], e["tid"], e["ts"]): e for e in events
             if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")}
    for e in (e for e in events if e.get("ph") == "f"):
        s = starts.get(e["id"])
        if s and us_to_ns(e["ts"]) < us_to_ns(s["ts"]) - err_ns:
            bad.append("GPU op at %.3f us starts before its launch at %.3f us" % (e["ts"], s["ts"]))
        if s and not any(k[0] == s["pid"] and k[1] == s["tid"] and
                         sp["ts"] <= s["ts"] <= sp["ts"] + sp["dur"] for k, sp in spans.items()):
            bad.append("flow %s does not start inside a CUDA API span" % s["id"])
    # busy time: the union of each device's operations
    rows = reports["cuda_gpu_trace"]
    for u in (u for u in reports["gpu_util"] if u["stream"] == "all"):
        iv = sorted((r["start_ns"], r["start_ns"] + r["duration_ns"]) for r in rows
                    if r["device"] == u["device"] and r["pid"] == u["pid"])
        busy, end = 0, -1
        for s, t in iv:
            if s > end:
                busy += t - s
                end = t
            elif t > end:
                busy += t - end
                end = t
        if busy != u["busy_ns"]:
            bad.append("device %d busy %d ns, union of its operations %d" % (u["device"], u["busy_ns"], busy))
    return bad, len(gpu), err_ns


def main():
    kernel_ns = dict((k, int(v)) for k, v in (a.split("=") for a in sys.argv[4:]))
    bad, n, err_ns = check(sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3])),
                           kernel_ns)
    for b in bad:
        print("MISMATCH " + b)
    print("%d GPU operations checked (clock error bound %d ns): %s" % (n, err_ns, "FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
