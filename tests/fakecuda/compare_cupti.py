#!/usr/bin/env python3
"""Compare what a target program says it did (LAUNCH/MEMCPY/MEMSET lines, see
tests/targets/cuda/common.h) with what CUPTI recorded (JSON lines written by
libcupti_dump.so).  Exit 1 listing every mismatch.

Checks that hold on a real GPU as well as on the simulator:
  * kernel records match LAUNCH lines one for one, in order: name, grid,
    block; stream labels map to CUPTI stream ids consistently and injectively;
  * memcpy / memset records match MEMCPY / MEMSET lines the same way;
  * every GPU record shares its correlation id with an API record;
  * every API record had an enter and an exit callback with its id;
  * one subscriber succeeds, a second gets MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  * timestamps are ordered and no record was dropped.
With --fake, the simulator's exact promises are checked too: kernel and copy
durations from the timing model, the CUPTI clock offset, and that each
kernel's correlation id is also on its driver launch record."""
import argparse
import json
import math
import sys

COPY_KIND = {"HtoD": 1, "DtoH": 2, "DtoD": 8}
MULTIPLE_SUBSCRIBERS = 39
errors = []


def err(msg):
    errors.append(msg)


def parse_program(path):
    out = {"kernel": [], "memcpy": [], "memset": []}
    with open(path) as f:
        for line in f:
            word, *fields = line.split()
            kv = dict(x.split("=", 1) for x in fields if "=" in x)
            if word == "LAUNCH":
                out["kernel"].append(kv)
            elif word == "MEMCPY":
                out["memcpy"].append(kv)
            elif word == "MEMSET":
                out["memset"].append(kv)
    return out


def load_dump(path):
    recs = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                r = json.loads(line)
            except ValueError:
                err("dump line %d is not JSON: %r" % (n, line))
                continue
            recs.setdefault(r["type"], []).append(r)
    return recs


class StreamMap:
    """Program stream labels <-> CUPTI stream ids, must be a bijection."""

    def __init__(self):
        self.fwd, self.back = {}, {}

    def check(self, label, sid, what):
        if self.fwd.setdefault(label, sid) != sid:
            err("%s: stream %s is CUPTI stream %d, earlier %d"
                % (what, label, sid, self.fwd[label]))
        if self.back.setdefault(sid, label) != label:
            err("%s: CUPTI stream %d is both %s and %s"
                % (what, sid, self.back[sid], label))


def match(kind, expected, records, streams, same):
    records = sorted(records, key=lambda r: (r["corr"], r["start"]))
    if len(expected) != len(records):
        err("%d %s lines but %d CUPTI %s records" % (len(expected), kind, len(records), kind))
    for i, (e, r) in enumerate(zip(expected, records)):
        what = "%s #%d" % (kind, i)
        problem = same(e, r)
        if problem:
            err("%s: %s (program %s, CUPTI %s)" % (what, problem, e, r))
        streams.check(e["stream"], r["stream"], what)


def same_kernel(e, r):
    if e["name"] != r["name"]:
        return "name differs"
    if [int(x) for x in e["grid"].split(",")] != r["grid"]:
        return "grid differs"
    if [int(x) for x in e["block"].split(",")] != r["block"]:
        return "block differs"
    return None


def same_copy(e, r):
    if COPY_KIND[e["kind"]] != r["copyKind"]:
        return "copy kind differs"
    return None if int(e["bytes"]) == r["bytes"] else "bytes differ"


def same_memset(e, r):
    return None if int(e["bytes"]) == r["bytes"] else "bytes differ"


def check_correlation(recs, fake):
    api = recs.get("runtime", []) + recs.get("driver", [])
    api_corr = {r["corr"] for r in api}
    launches = {r["corr"] for r in recs.get("driver", [])
                if r["name"].startswith(("cuLaunchKernel", "cuGraphLaunch"))}
    for kind in ("kernel", "memcpy", "memset", "sync"):
        for r in recs.get(kind, []):
            if r["corr"] not in api_corr:
                err("%s record corr %d has no API record" % (kind, r["corr"]))
            if fake and kind == "kernel" and r["corr"] not in launches:
                err("kernel %s corr %d has no driver launch record" % (r["name"], r["corr"]))


def check_callbacks(recs):
    """Calls that began before the tool subscribed (the one that ran cuInit)
    cannot have had an enter callback; the clock line marks subscription."""
    subscribed = min([c["cupti"] for c in recs.get("clock", [])] or [0])
    seen = {}
    for c in recs.get("callback", []):
        seen.setdefault((c["domain"], c["cbid"], c["corr"]), set()).add(c["site"])
    for domain in ("runtime", "driver"):
        for r in recs.get(domain, []):
            sites = seen.get((domain, r["cbid"], r["corr"]), set())
            if sites != {"enter", "exit"} and r["start"] > subscribed:
                err("%s %s corr %d: callbacks %s" % (domain, r["name"], r["corr"], sorted(sites)))


def check_times(recs):
    for kind, rs in recs.items():
        for r in rs:
            if "start" in r and r["end"] < r["start"]:
                err("%s record ends before it starts: %s" % (kind, r))
            if kind == "kernel" and r["start"] < r["queued"]:
                err("kernel starts before it was queued: %s" % r)


def expected_kernel_ns(name, args):
    return args.kernel_ns.get(name, args.default_ns)


def copy_ns(r, args):
    bw = {1: args.bw_htod, 2: args.bw_dtoh, 8: args.bw_dtod}.get(r["copyKind"], args.bw_htoh)
    return args.latency_ns + math.ceil(r["bytes"] / bw)


def check_fake_model(recs, args):
    for r in recs.get("kernel", []):
        want = expected_kernel_ns(r["name"], args)
        if r["end"] - r["start"] != want:
            err("kernel %s took %d ns, model says %d" % (r["name"], r["end"] - r["start"], want))
    for r in recs.get("memcpy", []):
        if r["end"] - r["start"] != copy_ns(r, args):
            err("memcpy %s took %d ns, model says %d" % (r, r["end"] - r["start"], copy_ns(r, args)))
    for r in recs.get("memset", []):
        want = args.latency_ns + math.ceil(r["bytes"] / args.bw_memset)
        if r["end"] - r["start"] != want:
            err("memset took %d ns, model says %d" % (r["end"] - r["start"], want))
    for c in recs.get("clock", []):
        off = c["cupti"] - c["monotonic"]
        if abs(off - args.clock_offset) > 5000000:
            err("CUPTI clock is CLOCK_MONOTONIC%+d ns, want %+d" % (off, args.clock_offset))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("program_output")
    p.add_argument("dump")
    p.add_argument("--fake", action="store_true")
    p.add_argument("--kernel-ns", action="append", default=[], metavar="NAME=NS")
    p.add_argument("--default-ns", type=int, default=100000)
    p.add_argument("--latency-ns", type=int, default=1000)
    p.add_argument("--bw-htod", type=int, default=25)
    p.add_argument("--bw-dtoh", type=int, default=25)
    p.add_argument("--bw-dtod", type=int, default=1000)
    p.add_argument("--bw-htoh", type=int, default=10)
    p.add_argument("--bw-memset", type=int, default=2000)
    p.add_argument("--clock-offset", type=int, default=1000000000000)
    args = p.parse_args()
    args.kernel_ns = dict((k, int(v)) for k, v in (x.split("=") for x in args.kernel_ns))

    prog = parse_program(args.program_output)
    recs = load_dump(args.dump)
    streams = StreamMap()
    match("kernel", prog["kernel"], recs.get("kernel", []), streams, same_kernel)
    match("memcpy", prog["memcpy"], recs.get("memcpy", []), streams, same_copy)
    match("memset", prog["memset"], recs.get("memset", []), streams, same_memset)
    check_correlation(recs, args.fake)
    check_callbacks(recs)
    check_times(recs)
    subs = [r["result"] for r in recs.get("subscribe", [])]
    second = [r["result"] for r in recs.get("second_subscribe", [])]
    if subs != [0] or second != [MULTIPLE_SUBSCRIBERS]:
        err("subscribe results %s / second %s" % (subs, second))
    if [r["n"] for r in recs.get("dropped", [])] != [0]:
        err("dropped records: %s" % recs.get("dropped"))
    if args.fake:
        check_fake_model(recs, args)
    for e in errors:
        print("MISMATCH " + e)
    n = sum(len(prog[k]) for k in prog)
    print("compared %d program lines with %d CUPTI records: %s"
          % (n, sum(len(v) for v in recs.values()), "FAIL" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
