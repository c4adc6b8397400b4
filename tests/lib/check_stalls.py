#!/usr/bin/env python3
"""Checks gpuspy's answer for a stall workload (tests/targets/stalls) against the workload's own
TRUTH line: the stalls report's top finding, the steps report's breakdown and the summary.

usage: check_stalls.py WORKLOAD_OUTPUT STALLS_JSON STEPS_JSON SUMMARY_JSON

  - stalls: the top finding is the workload's kind, in its process, at least 50% of the steps'
    time; `where` is the workload's stall site ("function (file:line)"; for CPU work, whose
    place comes from CPU samples, the line may be its loop's line just above); `what` names the
    syscall and file, the CUDA call or the kernel the workload names; `cause` names what the
    workload says caused it in other threads or processes (DataLoader workers' reads in their
    function, the lock holder's function, the competing processes).
  - steps: in the median row of the process, the column of the workload's kind is the largest
    of the four parts of the step (input, host compute, sync, other), the parts add up to the
    duration, and the GPU columns say what the kind means (GPU-bound: idle under 10%; the other
    GPU kinds: idle over 5%).
  - summary: its first finding is the same kind.
Exit 1 with the mismatches.
"""
import json
import os
import re
import sys

# the steps report column each kind's time falls in
COLUMN = {
    "input_wait": "input_wait_ns", "io_wait": "input_wait_ns",
    "host_compute": "host_compute_ns", "launch_bound": "host_compute_ns",
    "sync_wait": "sync_wait_ns", "gpu_bound": "sync_wait_ns",
    "lock_wait": "other_wait_ns", "cpu_contention": "other_wait_ns",
}
PARTS = ["input_wait_ns", "host_compute_ns", "sync_wait_ns", "other_wait_ns"]
SAMPLED = ("host_compute", "cpu_contention")  # where comes from CPU samples
GPU_KINDS = ("host_compute", "sync_wait", "launch_bound", "gpu_bound")


def where_ok(truth, where):
    m = re.match(r"(.+) \((.+):(\d+)\)$", where)
    site = truth["where"]
    if truth["kind"] == "gpu_bound":
        # the launch's innermost frame: the function the stall line calls
        return m is not None and os.path.basename(site["file"]) == m.group(2)
    if not m or m.group(1) != site["function"] or m.group(2) != os.path.basename(site["file"]):
        return False
    lines = (site["line"] - 1, site["line"]) if truth["kind"] in SAMPLED else (site["line"],)
    return int(m.group(3)) in lines


def what_wanted(truth):
    kind = truth["kind"]
    if kind == "io_wait":
        return [truth["syscall"], truth["file"]]
    if kind == "input_wait":
        return ["DataLoader"]
    if kind in ("sync_wait",):
        return [truth["cuda_call"]]
    if kind in ("gpu_bound", "launch_bound"):
        return [truth["kernel"].split("(")[0]]
    if kind == "lock_wait":
        return ["futex"]
    return []


def cause_wanted(truth):
    kind, cause = truth["kind"], truth.get("cause")
    if kind == "input_wait":
        return ["read on " + truth["data_dir"] + "/shard-", cause["function"] + " (",
                ":%d)" % cause["line"]] + ["%d" % p for p in cause["pids"]]
    if kind == "lock_wait":
        return ["thread %d" % cause["tid"], cause["function"] + " ("]
    if kind == "cpu_contention":
        return ["%d" % p for p in cause["pids"]]
    return []


def check_stalls(truth, stalls, bad):
    if not stalls:
        bad.append("no finding at all")
        return
    top = stalls[0]
    if top["kind"] != truth["kind"]:
        bad.append("top finding is %s (%.1f%%), the workload's stall is %s"
                   % (top["kind"], top["share_pct"], truth["kind"]))
    if str(truth["pid"]) not in top["pids"].split(", "):
        bad.append("top finding in pids %s, not %d" % (top["pids"], truth["pid"]))
    if top["share_pct"] < 50:
        bad.append("top finding explains only %.1f%% of the steps' time" % top["share_pct"])
    if not where_ok(truth, top["where"]):
        bad.append("where %r, the stall is at %s (%s:%d)" % (
            top["where"], truth["where"]["function"], truth["where"]["file"],
            truth["where"]["line"]))
    for word in what_wanted(truth):
        if word not in top["what"]:
            bad.append("what %r does not name %r" % (top["what"], word))
    for word in cause_wanted(truth):
        if word not in top["cause"]:
            bad.append("cause %r does not name %r" % (top["cause"], word))
    if not top["advice"]:
        bad.append("no advice")


def check_steps(truth, steps, bad):
    rows = [r for r in steps if r["pid"] == truth["pid"]]
    median = [r for r in rows if r["note"] == "median"]
    if not median:
        bad.append("no median row for pid %d" % truth["pid"])
        return
    m = median[0]
    want = COLUMN[truth["kind"]]
    largest = max(PARTS, key=lambda c: m[c])
    if largest != want:
        bad.append("median step: %s is the largest part, the workload's stall is in %s (%s)"
                   % (largest, want, {c: m[c] for c in PARTS}))
    for r in rows:
        if r["step"] is not None and sum(r[c] for c in PARTS) != r["duration_ns"]:
            bad.append("step %d: the parts add up to %d ns, not its %d" % (
                r["step"], sum(r[c] for c in PARTS), r["duration_ns"]))
    if truth["kind"] in GPU_KINDS:
        idle = m["gpu_idle_ns"] / m["duration_ns"] if m["duration_ns"] else 0
        if truth["kind"] == "gpu_bound" and idle >= 0.10:
            bad.append("GPU-bound, yet the GPU idles %.0f%% of the median step" % (100 * idle))
        if truth["kind"] != "gpu_bound" and idle <= 0.05:
            bad.append("%s, yet the GPU idles only %.0f%% of the median step"
                       % (truth["kind"], 100 * idle))


def main():
    out_path, stalls_path, steps_path, summary_path = sys.argv[1:5]
    lines = open(out_path).read().splitlines()
    truth = json.loads([l for l in lines if l.startswith("TRUTH ")][-1][6:])
    bad = []
    check_stalls(truth, json.load(open(stalls_path)), bad)
    check_steps(truth, json.load(open(steps_path)), bad)
    findings = [r for r in json.load(open(summary_path)) if r["topic"] == "finding 1"]
    if not findings or not findings[0]["answer"].startswith(truth["kind"] + " "):
        bad.append("summary's first finding: %r" % (findings[0]["answer"] if findings else None))
    for b in bad:
        print("MISMATCH " + b)
    print("%s of pid %d checked: %s" % (truth["kind"], truth["pid"], "FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
