#!/usr/bin/env python3
"""Checks gpuspy's `ops` report against what tests/targets/cuda/aten_like.py says its library
counted (its stdout), and against the GPU kernel summary of the same trace.

usage: check_ops.py EXPECT.json OPS.json KERN_SUM.json

EXPECT.json  aten_like.py's output: per operator name the calls, the simulated GPU time of the
             kernels launched while it was innermost (self_cuda_ns) and on the stack
             (cuda_total_ns), its wall time measured inside its body (cpu_ns), the host time of
             the launches under it (launch_ns) and its direct children
OPS.json     gpuspy report --report ops --format json (rows: name, calls, self_cpu_ns,
             cpu_total_ns, self_cuda_ns, cuda_total_ns)
KERN_SUM.json  gpuspy report --report cuda_gpu_kern_sum --format json

GPU times must be equal, not close: the simulator gives each kernel an exact duration, and a
kernel's duration is the difference of two CUPTI timestamps that the bridge moves to
CLOCK_MONOTONIC by the same calibrated offset, so the clock alignment error (the ±bound in
gpu_mode) cancels; which operator a kernel belongs to is decided by joining records
(correlation id, launching thread), never by comparing times. CPU times are gpuspy's own
measurement between the operator's entry and return probes: they must contain the time the
operator measured inside its body, and exceed it by no more than the probes' own cost
(MAX_PROBE_NS per call, generous: a uprobe hit costs ~1-10 us on the development VM)."""
import json
import sys

MAX_PROBE_NS = 1_000_000

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        expect = json.load(f)
    with open(sys.argv[2]) as f:
        rows = json.load(f)
    with open(sys.argv[3]) as f:
        kern = json.load(f)

    got = {}
    for row in rows:
        for key in ("name", "calls", "self_cpu_ns", "cpu_total_ns", "self_cuda_ns",
                    "cuda_total_ns"):
            check(key in row, "row without %s: %s" % (key, row))
        check(row["name"] not in got, "two rows for %s" % row["name"])
        got[row["name"]] = row
    want = expect["ops"]
    check(set(got) == set(want),
          "operators: got %s, want %s" % (sorted(got), sorted(want)))

    for name, exp in sorted(want.items()):
        row = got.get(name)
        if row is None:
            continue
        for key in ("calls", "self_cuda_ns", "cuda_total_ns"):
            check(row[key] == exp[key],
                  "%s: %s = %s, want %s" % (name, key, row[key], exp[key]))
        total, self_cpu = row["cpu_total_ns"], row["self_cpu_ns"]
        check(total >= exp["cpu_ns"],
              "%s: cpu_total_ns %d < the %d ns the operator measured inside itself"
              % (name, total, exp["cpu_ns"]))
        check(total >= exp["launch_ns"],
              "%s: cpu_total_ns %d < %d ns of CUDA launches under it"
              % (name, total, exp["launch_ns"]))
        check(total <= exp["cpu_ns"] + exp["calls"] * MAX_PROBE_NS,
              "%s: cpu_total_ns %d exceeds the operator's own %d ns by more than %d ns a call"
              % (name, total, exp["cpu_ns"], MAX_PROBE_NS))
        check(0 <= self_cpu <= total,
              "%s: self_cpu_ns %d not within [0, cpu_total_ns %d]" % (name, self_cpu, total))
        check(row["self_cuda_ns"] <= row["cuda_total_ns"],
              "%s: self_cuda_ns > cuda_total_ns" % name)
        # self = total - children's totals, where every call of each child is made from here
        children = exp["children"]
        only_here = all(want[c]["calls"] == n for c, n in children.items())
        if only_here and all(c in got for c in children):
            children_total = sum(got[c]["cpu_total_ns"] for c in children)
            check(self_cpu == total - children_total,
                  "%s: self_cpu_ns %d != cpu_total_ns %d - children's %d"
                  % (name, self_cpu, total, children_total))

    # every kernel launched under an operator is some operator's self time; the one launched
    # outside any operator is nobody's
    self_sum = sum(r["self_cuda_ns"] for r in got.values())
    check(self_sum == expect["kernel_ns_total"] - expect["outside_kernel_ns"],
          "sum of self_cuda_ns %d, want %d" % (self_sum,
                                               expect["kernel_ns_total"] - expect["outside_kernel_ns"]))
    kern_total = sum(r["total_ns"] for r in kern)
    check(kern_total == expect["kernel_ns_total"],
          "cuda_gpu_kern_sum total %d, want %d" % (kern_total, expect["kernel_ns_total"]))

    for msg in failures:
        print("FAIL " + msg)
    if failures:
        return 1
    print("ops ok: %d operators, %d calls, %d ns of GPU time under operators"
          % (len(got), sum(r["calls"] for r in got.values()), self_sum))
    return 0


if __name__ == "__main__":
    sys.exit(main())
