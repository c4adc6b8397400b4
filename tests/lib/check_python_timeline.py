#!/usr/bin/env python3
"""Checks the Python side of a `gpuspy export` file (Chrome or Kineto dialect).

- python_stack args: a non-empty list of "qualname (file:line)" / "qualname (file)" strings,
  leaf first (a last "[N outer frames not shown]" or "[truncated]" entry allowed), only on
  os_runtime, off_cpu, cuda_runtime, cuda_driver and cpu_op events;
- python_sample slices: on a track of their own (tid = 2^23 + the thread's tid) in the
  thread's process, named "python samples (tid N)"; on each track they nest (a child inside
  its parent, checked with the ends), the root slices do not overlap, and a parent has at
  least as many samples as each child;
- cpu_op slices: on a thread, a slice with depth d > 0 lies inside a cpu_op slice of that
  thread; slices never overlap partially with each other or with the CUDA API spans.

Options add expectations:
  --samples N          the root sample slices account for N samples in all
  --sample-function F  a python_sample slice is named F
  --stacks CAT         some CAT event has a python_stack (repeatable)
  --stack-function F   some python_stack has a frame of function F
  --ops                there are cpu_op slices
  --cuda-in-ops        at least one CUDA API span is inside a cpu_op slice
  --flows-in-ops       at least one ac2g flow (launch -> GPU work) starts inside a cpu_op
usage: check_python_timeline.py FILE.json [options]
"""
import argparse
import bisect
import json
import re
import sys
from collections import defaultdict

EPS = 0.0005  # µs: ns precision
SAMPLE_TID_BASE = 1 << 23
STACK_CATS = {"os_runtime", "off_cpu", "cuda_runtime", "cuda_driver", "cpu_op"}
# a name or file read from a process may hold anything, newlines included
FRAME = re.compile(r"^.+ \(.+\)$", re.S)
MARKER = re.compile(r"^\[(\d+ outer frames not shown|truncated)\]$")


def fail(msg):
    print(f"check_python_timeline: {msg}", file=sys.stderr)
    sys.exit(1)


def check_stack(e, functions):
    stack = e["args"]["python_stack"]
    if e.get("cat") not in STACK_CATS:
        fail(f"python_stack on an event of category {e.get('cat')}: {e}")
    if not isinstance(stack, list) or not stack:
        fail(f"python_stack is not a non-empty list: {e}")
    for i, frame in enumerate(stack):
        if not isinstance(frame, str):
            fail(f"python_stack frame is not a string: {e}")
        if MARKER.match(frame) and i == len(stack) - 1:
            continue
        if not FRAME.match(frame):
            fail(f"python_stack frame {frame!r} is not 'qualname (file:line)': {e}")
        functions.add(frame.rsplit(" (", 1)[0])


def nest_check(items, what):
    """items: (start, end, payload) on one track; parents first. Returns [(item, parent)]."""
    items.sort(key=lambda s: (s[0], -s[1]))
    stack, pairs = [], []
    for it in items:
        start, end = it[0], it[1]
        while stack and stack[-1][1] <= start + EPS:
            stack.pop()
        if stack and end > stack[-1][1] + EPS:
            fail(f"{what}: {it[2]} [{start}, {end}] overlaps {stack[-1][2]} "
                 f"[{stack[-1][0]}, {stack[-1][1]}]")
        pairs.append((it, stack[-1] if stack else None))
        stack.append(it)
    return pairs


def check_samples(tracks, names):
    total = 0
    for (pid, tid), items in tracks.items():
        want = f"python samples (tid {tid - SAMPLE_TID_BASE})"
        if names.get((pid, tid)) != want:
            fail(f"sample track {(pid, tid)} is named {names.get((pid, tid))!r}, not {want!r}")
        for it, parent in nest_check(items, f"python samples {(pid, tid)}"):
            e = it[2]
            if not isinstance(e["args"].get("samples"), int) or e["args"]["samples"] < 1:
                fail(f"sample slice without a sample count: {e}")
            if parent is None:
                total += e["args"]["samples"]
            elif parent[2]["args"]["samples"] < e["args"]["samples"]:
                fail(f"sample slice has more samples than its parent: {e}")
    return total


def check_ops(thread_spans):
    ops = inside = 0
    for key, items in thread_spans.items():
        pairs = nest_check(items, f"thread {key}")
        op_ancestor = {}
        for it, parent in pairs:
            e = it[2]
            in_op = parent is not None and (parent[2]["cat"] == "cpu_op"
                                            or op_ancestor.get(id(parent)))
            op_ancestor[id(it)] = in_op
            if e["cat"] == "cpu_op":
                ops += 1
                if e["args"].get("depth", 0) > 0 and not in_op:
                    fail(f"cpu_op with depth > 0 not inside another cpu_op: {e}")
            elif e["cat"] in ("cuda_runtime", "cuda_driver") and in_op:
                inside += 1
    return ops, inside


def flows_in_ops(events, thread_spans):
    """ac2g flow starts that lie inside a cpu_op slice of their thread."""
    ops = {k: sorted((s, e) for s, e, ev in v if ev["cat"] == "cpu_op")
           for k, v in thread_spans.items()}
    n = 0
    for e in events:
        if e.get("ph") == "s" and e.get("cat") == "ac2g":
            spans = ops.get((e["pid"], e["tid"]), [])
            i = bisect.bisect_right(spans, (e["ts"] + EPS, float("inf")))
            # the latest-starting operators before it; an outer one may hold it too
            if any(s - EPS <= e["ts"] <= end + EPS for s, end in spans[max(0, i - 32):i]):
                n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--samples", type=int)
    ap.add_argument("--sample-function", action="append", default=[])
    ap.add_argument("--stacks", action="append", default=[])
    ap.add_argument("--stack-function", action="append", default=[])
    ap.add_argument("--ops", action="store_true")
    ap.add_argument("--cuda-in-ops", action="store_true")
    ap.add_argument("--flows-in-ops", action="store_true")
    a = ap.parse_args()
    events = json.load(open(a.file))["traceEvents"]
    names, sample_tracks = {}, defaultdict(list)
    thread_spans = defaultdict(list)
    stack_cats, stack_functions, sample_names = defaultdict(int), set(), set()
    for e in events:
        if e.get("ph") == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        if e.get("ph") != "X":
            continue
        if "python_stack" in e.get("args", {}):
            check_stack(e, stack_functions)
            stack_cats[e["cat"]] += 1
        span = (e["ts"], e["ts"] + e["dur"], e)
        if e["cat"] == "python_sample":
            if e["tid"] < SAMPLE_TID_BASE:
                fail(f"python_sample slice on a real thread's track: {e}")
            sample_tracks[(e["pid"], e["tid"])].append(span)
            sample_names.add(e["name"])
        elif e["cat"] in ("cpu_op", "cuda_runtime", "cuda_driver"):
            thread_spans[(e["pid"], e["tid"])].append(span)
    samples = check_samples(sample_tracks, names)
    ops, inside = check_ops(thread_spans)
    if a.samples is not None and samples != a.samples:
        fail(f"sample slices account for {samples} samples, expected {a.samples}")
    for f in a.sample_function:
        if f not in sample_names:
            fail(f"no python_sample slice named {f} (have {sorted(sample_names)[:20]})")
    for cat in a.stacks:
        if not stack_cats[cat]:
            fail(f"no {cat} event has a python_stack")
    for f in a.stack_function:
        if f not in stack_functions:
            fail(f"no python_stack has a frame of {f}")
    if a.ops and not ops:
        fail("no cpu_op slices")
    if a.cuda_in_ops and not inside:
        fail("no CUDA API span inside a cpu_op slice")
    flows = flows_in_ops(events, thread_spans)
    if a.flows_in_ops and not flows:
        fail("no ac2g flow starts inside a cpu_op slice")
    print(f"check_python_timeline: {samples} samples on {len(sample_tracks)} sample tracks, "
          f"stacks on " + ", ".join(f"{c} {n}" for c, n in sorted(stack_cats.items())) +
          f"; {ops} cpu_op slices, {inside} CUDA API spans and {flows} flow starts inside "
          "them")


if __name__ == "__main__":
    main()
