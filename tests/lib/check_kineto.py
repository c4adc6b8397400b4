#!/usr/bin/env python3
"""Check that a `gpuspy export --format kineto` file has what Holistic Trace Analysis and
TensorBoard's trace viewer need from PyTorch Kineto's dialect: the top-level keys, ts/dur/
name/cat/pid/tid on every slice, kernel args (HTA finds GPU events by args.stream and joins
them by args.correlation), and ac2g flows whose ids pair up.
usage: check_kineto.py FILE.json"""
import collections
import json
import re
import sys


def main():
    text = open(sys.argv[1]).read()
    doc = json.loads(text)
    bad = []
    if doc.get("schemaVersion") != 1:
        bad.append("schemaVersion is %r, not 1" % doc.get("schemaVersion"))
    for key in ("deviceProperties", "traceEvents", "baseTimeNanoseconds", "displayTimeUnit"):
        if key not in doc:
            bad.append("no top-level %s" % key)
    if not re.search(r'"rank": \d+', text):
        bad.append('no "rank": N (HTA reads it with a regex that needs the space)')
    events = doc.get("traceEvents", [])
    cats = collections.Counter()
    for e in events:
        if e.get("ph") != "X":
            continue
        cats[e.get("cat")] += 1
        missing = [k for k in ("ts", "dur", "name", "cat", "pid", "tid") if k not in e]
        if missing:
            bad.append("event %s lacks %s" % (e.get("name"), missing))
        if e.get("cat") == "kernel":
            need = ("correlation", "device", "stream", "grid", "block", "registers per thread",
                    "shared memory")
            lack = [k for k in need if k not in e.get("args", {})]
            if lack:
                bad.append("kernel %s lacks args %s" % (e.get("name"), lack))
    for cat in ("kernel", "cuda_runtime"):
        if not cats[cat]:
            bad.append("no %s events" % cat)
    flows = collections.defaultdict(lambda: collections.Counter())
    for e in events:
        if e.get("cat") == "ac2g" and e.get("ph") in ("s", "f"):
            flows[e["id"]][e["ph"]] += 1
    unpaired = [i for i, c in flows.items() if c["s"] != 1 or c["f"] != 1]
    if unpaired or not flows:
        bad.append("%d ac2g flows, %d not paired one to one" % (len(flows), len(unpaired)))
    for b in bad:
        print("MISMATCH " + b)
    print("kineto: %d slices in %d categories, %d flows: %s"
          % (sum(cats.values()), len(cats), len(flows), "FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
