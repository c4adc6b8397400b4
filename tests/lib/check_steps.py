#!/usr/bin/env python3
"""Checks `gpuspy report --report steps --format json` against a stall workload's own STEP and
TRUTH lines (tests/targets/stalls): the main process has exactly the workload's steps, on its
main thread, found the way the test expects, each starting where the workload's step did.

usage: check_steps.py WORKLOAD_OUTPUT STEPS_JSON FOUND_BY_PREFIX [inside|count|NS]
  inside (default): each found start lies inside its step as the workload measured it: a step
  found from the Python stacks starts at its loop's first event at the anchor line, never
  before the iteration began and always before it ended. NS: each start within NS ns of the
  workload's (NVTX ranges, which the workload opens itself). count: the count only.
  Exit 1 with the mismatches.
"""
import json
import sys


def main():
    out_path, steps_path, found_prefix = sys.argv[1:4]
    mode = sys.argv[4] if len(sys.argv) > 4 else "inside"
    lines = open(out_path).read().splitlines()
    truth = json.loads([l for l in lines if l.startswith("TRUTH ")][-1][6:])
    want = [tuple(int(x) for x in l.split()[2:4]) for l in lines if l.startswith("STEP ")]
    # the median and p90 rows (no step number) summarise the steps
    rows = [r for r in json.load(open(steps_path))
            if r["pid"] == truth["pid"] and r["step"] is not None]
    bad = []
    if len(rows) != len(want):
        bad.append("pid %d: %d steps found, the workload ran %d" % (truth["pid"], len(rows), len(want)))
    for r in rows:
        if not r["found_by"].startswith(found_prefix):
            bad.append("step %d found by %r, expected %r..." % (r["step"], r["found_by"], found_prefix))
        if r["tid"] != truth["main_tid"]:
            bad.append("step %d on thread %d, the loop runs on %d" % (r["step"], r["tid"], truth["main_tid"]))
    for r, (start, end) in zip(rows, want):
        off = r["start_ns"] - start
        if mode == "inside" and not 0 <= off < end - start:
            bad.append("step %d starts %+.3f ms from the workload's, outside its %.3f ms"
                       % (r["step"], off / 1e6, (end - start) / 1e6))
        elif mode not in ("inside", "count") and abs(off) > int(mode):
            bad.append("step %d starts %+d ns from the workload's" % (r["step"], off))
    for b in bad:
        print("MISMATCH " + b)
    print("%d steps of pid %d checked: %s" % (len(rows), truth["pid"], "FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
