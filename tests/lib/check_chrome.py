#!/usr/bin/env python3
"""Checks a Chrome Trace Event JSON file the way Perfetto's importer needs it.

Every X event has ts/dur/name/cat/pid/tid; on each (pid, tid) track complete events nest
properly (a child ends before its parent); every track with events has thread_name metadata
and every process a process_name. Prints a summary line; exits 1 with the first problem.
"""
import json
import sys
from collections import defaultdict

EPS = 0.0005  # µs: the exporter writes ns precision


def fail(msg):
    print(f"check_chrome: {msg}", file=sys.stderr)
    sys.exit(1)


def main(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        fail("no traceEvents array")
    tracks = defaultdict(list)
    thread_names, process_names = set(), set()
    for e in events:
        ph = e.get("ph")
        if ph == "M":
            (thread_names if e["name"] == "thread_name" else process_names).add(
                (e["pid"], e["tid"]) if e["name"] == "thread_name" else e["pid"])
            continue
        for key in ("ts", "name", "pid", "tid"):
            if key not in e:
                fail(f"event without {key}: {e}")
        if ph == "X":
            if "cat" not in e or "dur" not in e or e["dur"] < 0 or e["ts"] < 0:
                fail(f"bad complete event: {e}")
            tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    spans = 0
    for track, items in tracks.items():
        if track not in thread_names:
            fail(f"track {track} has no thread_name")
        if track[0] not in process_names:
            fail(f"process {track[0]} has no process_name")
        # parents first: earlier start, then longer
        items.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for start, end, name in items:
            while stack and stack[-1][1] <= start + EPS:
                stack.pop()
            if stack and end > stack[-1][1] + EPS:
                fail(f"{name} [{start}, {end}] overlaps {stack[-1][2]} "
                     f"[{stack[-1][0]}, {stack[-1][1]}] on track {track}")
            stack.append((start, end, name))
            spans += 1
    print(f"check_chrome: {spans} spans on {len(tracks)} tracks nest properly")


if __name__ == "__main__":
    main(sys.argv[1])
