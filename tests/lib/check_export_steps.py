#!/usr/bin/env python3
"""Checks the training steps of `gpuspy export` (both formats) against a stall workload's own STEP
and TRUTH lines (tests/targets/stalls) and the `steps` report of the same trace.

Chrome: the workload's process has one track named "steps" holding exactly one slice per step
the workload ran, "step 0", "step 1", ... in time order, with args index, found_by (starting
with FOUND_BY), loop_tid (the workload's main thread) and duration_ns (the slice's dur). Each
slice is the report's row of that step, shifted by one constant for all of them (the export's
ts are ns since the recording start, the report's start_ns CLOCK_MONOTONIC), and through that
constant lies where the workload's step was (--where NS: each start and end within NS ns of the
workload's; inside: each start inside its step, each end no later than the next step's end, the
last step's no later than a sampling period after its own; starts: each start inside its
step). --starts ties each slice to the export's other events on the loop's thread, which shows
they share its clock base: event (an event starts at the slice's start: a step found from the
Python stacks starts at one), nvtx (the thread's ProfilerStep#N NVTX slice has the same ts and
dur), any (nothing).

Kineto: the process's ProfilerStep#N events are exactly ProfilerStep#0 .. #(n-1), once each, as
complete user_annotation events on the main thread. --kineto-steps gpuspy: they are gpuspy's
(args.found_by) with the same ts and dur as the Chrome export's step slices; recorded: they are
the workload's NVTX ranges (no found_by: gpuspy added none), with the same ts and dur as those
ranges in the Chrome export. No "step" event in Kineto's
dialect. Prints a summary line; exits 1 with the mismatches.
"""
import argparse
import json
import sys

EPS = 0.0005  # µs: the exports write ns precision
# the last step ends with the loop frame's last stack, which may be a CPU sample taken before the
# workload read its clock, whose end is a sampling period later (record's default, 99 Hz)
SAMPLE_PERIOD_NS = 1_000_000_000 // 99 + 1


def load_events(path):
    with open(path) as f:
        return json.load(f)["traceEvents"]


def chrome_steps(events, pid, bad):
    tracks = [e["tid"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"
              and e["pid"] == pid and e["args"]["name"] == "steps"]
    if len(tracks) != 1:
        bad.append("pid %d: %d tracks named steps, expected 1" % (pid, len(tracks)))
        return []
    return sorted((e for e in events if e.get("ph") == "X" and e["pid"] == pid
                   and e["tid"] == tracks[0]), key=lambda e: e["ts"])


def check_slices(slices, rows, want, truth, a, bad):
    n = len(want)
    if len(slices) != n:
        bad.append("chrome: %d step slices, the workload ran %d steps" % (len(slices), n))
    if len(rows) != n:
        bad.append("report: %d steps, the workload ran %d" % (len(rows), n))
    offsets = set()
    for i, (s, r, (start, end)) in enumerate(zip(slices, rows, want)):
        args = s.get("args", {})
        ts, dur = round(s["ts"] * 1000), round(s["dur"] * 1000)
        if s["name"] != "step %d" % i or args.get("index") != i:
            bad.append("slice %d is %r, index %r" % (i, s["name"], args.get("index")))
        if not str(args.get("found_by", "")).startswith(a.found_by):
            bad.append("step %d found by %r, expected %r..." % (i, args.get("found_by"), a.found_by))
        if args.get("loop_tid") != truth["main_tid"]:
            bad.append("step %d: loop_tid %r, the loop runs on %d" % (i, args.get("loop_tid"),
                                                                     truth["main_tid"]))
        if args.get("duration_ns") != dur or r["duration_ns"] != dur:
            bad.append("step %d: dur %d ns, duration_ns %r, the report's %d" % (
                i, dur, args.get("duration_ns"), r["duration_ns"]))
        offsets.add(r["start_ns"] - ts)
        # the report's start is the slice's on the records' clock
        abs_start, abs_end = r["start_ns"], r["start_ns"] + dur
        if a.where not in ("inside", "starts"):
            if abs(abs_start - start) > int(a.where) or abs(abs_end - end) > int(a.where):
                bad.append("step %d [%+d, %+d] ns from the workload's" % (
                    i, abs_start - start, abs_end - end))
        else:
            next_end = want[i + 1][1] if i + 1 < n else end + SAMPLE_PERIOD_NS
            if not start <= abs_start < end or (a.where == "inside" and abs_end > next_end):
                bad.append("step %d [%.3f, %.3f] ms from the workload's start, which ran to "
                           "%.3f (the next step to %.3f)" % (
                               i, (abs_start - start) / 1e6, (abs_end - start) / 1e6,
                               (end - start) / 1e6, (next_end - start) / 1e6))
    if len(offsets) > 1:
        bad.append("the slices are not the report's steps shifted by one constant: %s"
                   % sorted(offsets))


def check_starts(events, slices, truth, a, bad):
    pid, tid = truth["pid"], truth["main_tid"]
    own = [e for e in events if e.get("ph") == "X" and e["pid"] == pid and e["tid"] == tid]
    for i, s in enumerate(slices):
        if a.starts == "event":
            if not any(abs(e["ts"] - s["ts"]) < EPS for e in own):
                bad.append("step %d at %.3f us: no event of thread %d starts there"
                           % (i, s["ts"], tid))
        elif a.starts == "nvtx":
            r = [e for e in own if e["name"] == "ProfilerStep#%d" % i
                 and e["cat"] == "user_annotation"]
            if len(r) != 1 or abs(r[0]["ts"] - s["ts"]) > EPS or abs(r[0]["dur"] - s["dur"]) > EPS:
                bad.append("step %d [%.3f +%.3f] us is not its NVTX range %s" % (
                    i, s["ts"], s["dur"], [(e["ts"], e["dur"]) for e in r]))


def check_kineto(events, chrome, slices, truth, n, a, bad):
    pid = truth["pid"]
    if a.kineto_steps == "recorded":
        slices = sorted((e for e in chrome if e.get("ph") == "X" and e["pid"] == pid
                         and e["tid"] == truth["main_tid"] and e["cat"] == "user_annotation"
                         and e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    if any(e.get("cat") == "step" for e in events):
        bad.append("kineto: a Chrome step slice in Kineto's dialect")
    ps = sorted((e for e in events if e["pid"] == pid and e.get("ph") != "M"
                 and str(e.get("name", "")).startswith("ProfilerStep#")), key=lambda e: e["ts"])
    names = [e["name"] for e in ps]
    if names != ["ProfilerStep#%d" % i for i in range(n)]:
        bad.append("kineto: ProfilerStep events %s, expected #0..#%d once each" % (names, n - 1))
    for i, e in enumerate(ps):
        if e["ph"] != "X" or e["cat"] != "user_annotation" or e["tid"] != truth["main_tid"]:
            bad.append("kineto: %s is ph %r cat %r on tid %r, expected X user_annotation on %d"
                       % (e["name"], e["ph"], e["cat"], e["tid"], truth["main_tid"]))
        gpuspy_made = "found_by" in e.get("args", {})
        if gpuspy_made != (a.kineto_steps == "gpuspy"):
            bad.append("kineto: %s %s gpuspy's, expected %s" % (
                e["name"], "is" if gpuspy_made else "is not", a.kineto_steps))
        if i < len(slices) and (abs(e["ts"] - slices[i]["ts"]) > EPS
                                or abs(e["dur"] - slices[i]["dur"]) > EPS):
            bad.append("kineto: %s [%.3f +%.3f] us, in the chrome export [%.3f +%.3f]" % (
                e["name"], e["ts"], e["dur"], slices[i]["ts"], slices[i]["dur"]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True, help="the workload's output (STEP and TRUTH lines)")
    p.add_argument("--report", required=True, help="gpuspy report --report steps --format json")
    p.add_argument("--chrome", required=True)
    p.add_argument("--kineto", required=True)
    p.add_argument("--found-by", required=True)
    p.add_argument("--where", default="inside", help="inside, starts or NS")
    p.add_argument("--starts", choices=("event", "nvtx", "any"), default="event")
    p.add_argument("--kineto-steps", choices=("gpuspy", "recorded"), default="gpuspy")
    a = p.parse_args()
    lines = open(a.out).read().splitlines()
    truth = json.loads([l for l in lines if l.startswith("TRUTH ")][-1][6:])
    want = [tuple(int(x) for x in l.split()[2:4]) for l in lines if l.startswith("STEP ")]
    # the median and p90 rows (no step number) summarise the steps
    rows = [r for r in json.load(open(a.report))
            if r["pid"] == truth["pid"] and r["step"] is not None]
    chrome = load_events(a.chrome)
    bad = []
    slices = chrome_steps(chrome, truth["pid"], bad)
    check_slices(slices, rows, want, truth, a, bad)
    check_starts(chrome, slices, truth, a, bad)
    check_kineto(load_events(a.kineto), chrome, slices, truth, len(want), a, bad)
    for b in bad:
        print("MISMATCH " + b)
    print("%d step slices of pid %d checked: %s" % (len(slices), truth["pid"],
                                                     "FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
