#!/usr/bin/env python3
"""Checks a Chrome or Kineto export against the Trace Event Format's rules that viewers rely on.

    check_tef.py FILE.json [--sample-chain F1,F2,...] [--min-flows N]

- every event's ph is a type the format defines, and every event but metadata has ts, pid, tid;
- "X" (complete) events have a numeric dur >= 0; a dur on any other event (Kineto's dialect puts
  "dur": 0 on flow ends, which HTA wants on every event) must be a number >= 0 too;
- "B"/"E" pairs balance on each (pid, tid) track: never an E without its B, none left open;
- flow events ("s", "t", "f") carry an id and a cat (a flow is keyed by both), every "f" has
  "bp": "e" (bind to the enclosing slice, as Chrome requires for an end that does not start a
  slice) and a start with the same (cat, id) no later than it, and each start and end lies
  within a complete slice on its own track (the slice the arrow is drawn from or to);
- on each track complete slices nest or are disjoint: no partial overlap, which Perfetto would
  move to an overflow track and Catapult would draw wrongly;
- with --sample-chain, on the CPU-samples tracks (cat python_sample) slices that start together
  (same pid, tid and ts: the slices of one sample, whether or not their durs are equal) come in
  the chain's order, caller first, as viewers nest slices of equal ts in file order; every
  function of the chain has slices, and at least one group holds two or more of them (where
  the program was when the first sample came, and samples cutting the leaf's slice, decide
  which ones start together).

Prints a summary line; exits 1 with the first problem.
"""
import argparse
import json
import sys
from collections import defaultdict

# ts and dur are written rounded to the ns (three decimals of a µs) each, so an end may be off
# by one ns either way
EPS = 0.0011
PHASES = set("BEXiIbneCstfPOND") | {"M", "R", "c", "(", ")", "V", "v", "S", "T", "p", "F"}


def fail(msg):
    print(f"check_tef: {msg}", file=sys.stderr)
    sys.exit(1)


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_events(events):
    complete = defaultdict(list)  # track -> [(start, end, name, file index, cat)]
    open_b = defaultdict(list)
    flows = []
    counts = defaultdict(int)
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph not in PHASES:
            fail(f"unknown ph {ph!r}: {e}")
        counts[ph] += 1
        if ph == "M":
            continue
        for key in ("ts", "pid", "tid"):
            if key not in e:
                fail(f"event without {key}: {e}")
        if not number(e["ts"]):
            fail(f"ts not a number: {e}")
        if "dur" in e and not (number(e["dur"]) and e["dur"] >= 0):
            fail(f"bad dur: {e}")
        track = (e["pid"], e["tid"])
        if ph == "X":
            if "dur" not in e:
                fail(f"complete event without dur: {e}")
            complete[track].append((e["ts"], e["ts"] + e["dur"], e.get("name"), i, e.get("cat")))
        elif ph in "BE":
            # a track's B/E events in ts order, file order for equal ts, as viewers read them
            open_b[track].append((e["ts"], i, ph, e.get("name")))
        elif ph in "stf":
            if "id" not in e or "cat" not in e:
                fail(f"flow event without id or cat: {e}")
            if ph == "f" and e.get("bp") != "e":
                fail(f"flow end without \"bp\": \"e\": {e}")
            flows.append(e)
    for track, items in open_b.items():
        depth = 0
        for ts, _, ph, name in sorted(items):
            depth += 1 if ph == "B" else -1
            if depth < 0:
                fail(f"E {name} at {ts} without a B on track {track}")
        if depth:
            fail(f"{depth} B events never ended on track {track}")
    return complete, flows, counts


def first_overlap(items):
    """The first (slice, slice) pair of items that partly overlap, or None."""
    # parents first: earlier start, then longer, then file order
    items = sorted(items, key=lambda s: (s[0], -s[1], s[3]))
    stack = []
    for start, end, name, _, _ in items:
        while stack and stack[-1][1] <= start + EPS:
            stack.pop()
        if stack and end > stack[-1][1] + EPS:
            return (start, end, name), stack[-1]
        stack.append((start, end, name))
    return None


def check_nesting(complete):
    for track, items in complete.items():
        bad = first_overlap(items)
        if bad:
            (start, end, name), other = bad
            fail(f"{name} [{start}, {end}] partly overlaps {other[2]} "
                 f"[{other[0]}, {other[1]}] on track {track}")


def enclosed(complete, e):
    return any(s - EPS <= e["ts"] <= t + EPS for s, t, *_ in complete.get((e["pid"], e["tid"]), ()))


def check_flows(complete, flows):
    starts = {}
    for e in flows:
        if e["ph"] == "s":
            if (e["cat"], e["id"]) in starts:
                fail(f"two flow starts with cat {e['cat']} and id {e['id']}")
            starts[(e["cat"], e["id"])] = e
    for e in flows:
        if not enclosed(complete, e):
            fail(f"flow event outside every slice of its track: {e}")
        if e["ph"] == "s":
            continue
        s = starts.get((e["cat"], e["id"]))
        if s is None:
            fail(f"flow {e['ph']} without a start: {e}")
        if e["ts"] + EPS < s["ts"]:
            fail(f"flow {e['ph']} before its start: {e}")


def check_sample_chain(events, chain):
    groups = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "python_sample":
            groups[(e["pid"], e["tid"], e["ts"])].append(e["name"])
    rank = {name: i for i, name in enumerate(chain)}
    together, seen = 0, set()
    for key, names in groups.items():
        ours = [rank[n] for n in names if n in rank]
        if ours != sorted(ours):
            fail(f"slices of the sample at {key} in the order {names}, not {chain}")
        together += len(set(ours)) >= 2
        seen.update(ours)
    if len(seen) != len(chain):
        fail(f"no sample slices of {[f for f in chain if rank[f] not in seen]}")
    if not together:
        fail(f"no two functions of {chain} start together ({len(groups)} groups)")
    return together


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--sample-chain", help="comma-separated functions, outermost first")
    ap.add_argument("--min-flows", type=int, default=0)
    args = ap.parse_args()
    with open(args.path) as f:
        doc = json.load(f)
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        fail("no traceEvents array")
    complete, flows, counts = check_events(events)
    check_nesting(complete)
    check_flows(complete, flows)
    if len(flows) < args.min_flows:
        fail(f"{len(flows)} flow events, expected at least {args.min_flows}")
    extra = ""
    if args.sample_chain:
        whole = check_sample_chain(events, args.sample_chain.split(","))
        extra += f", {whole} groups of the chain's slices starting together, in order"
    phases = " ".join(f"{ph}={n}" for ph, n in sorted(counts.items()))
    print(f"check_tef: {len(events)} events ({phases}) on {len(complete)} tracks conform{extra}")


if __name__ == "__main__":
    main()
