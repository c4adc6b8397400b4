#!/usr/bin/env python3
"""Compares gpuspy's captured Python stacks with tests/targets/python/stack_target.py's oracle.

    check_py_stacks.py STACKS_JSON ORACLE_JSON [--samples MIN]

STACKS_JSON is `gpuspy report --report python_stacks --format json`. For every sleep the
target noted, the syscall stacks of its thread inside the sleep's interval must exist and each
must equal the oracle frame for frame (qualified name, file, line), leaf first; the oracle's
own two readings (frames, traceback.extract_stack) must agree too. A stack flagged truncated
must hold the oracle's GS_PY_MAX_FRAMES leaf-most frames. With --samples, the busy interval
must hold at least MIN CPU samples, each with busy_loop as its leaf.
"""
import json
import re
import sys

MAX_FRAMES = 128
FRAME_RE = re.compile(r"^(.*) \((.*):(-?\d+)\)$")


def parse_frames(text):
    if not text:
        return []
    out = []
    for part in text.split(" <- "):
        m = FRAME_RE.match(part)
        if not m:
            raise ValueError("unparsable frame %r" % part)
        out.append((m.group(1), m.group(2), int(m.group(3))))
    return out


def oracle_frames(rec):
    frames = [(f["qualname"], f["file"], f["line"]) for f in rec["frames"]]
    names = [(f["qualname"].rsplit(".", 1)[-1], f["file"], f["line"]) for f in rec["frames"]]
    extracted = [(e["name"], e["file"], e["line"]) for e in rec["extracted"]]
    if names != extracted:
        raise AssertionError("oracle disagrees with traceback.extract_stack in %s:\n%s\n%s"
                             % (rec["what"], names, extracted))
    return frames


def in_window(stack, rec):
    return stack["tid"] == rec["tid"] and rec["t0"] <= stack["ts"] and stack["end_ts"] <= rec["t1"]


def check_sleep(rec, stacks, errors):
    want = oracle_frames(rec)
    got = [s for s in stacks if s["kind"] == "syscall" and in_window(s, rec)]
    if not got:
        errors.append("%s (tid %d): no stack captured in its sleep" % (rec["what"], rec["tid"]))
        return 0
    for s in got:
        frames = parse_frames(s["frames"])
        expect = want
        if s["flags"] == "truncated":
            expect = want[:MAX_FRAMES]
        elif len(want) > MAX_FRAMES:
            errors.append("%s: %d frames, not flagged truncated" % (rec["what"], len(want)))
            continue
        if frames != expect:
            errors.append("%s (tid %d, ts %d): stack differs from the oracle\n  got:  %s\n"
                          "  want: %s" % (rec["what"], rec["tid"], s["ts"], frames, expect))
    return len(got)


def check_samples(rec, stacks, minimum, errors):
    got = [s for s in stacks if s["kind"] == "sample" and s["tid"] == rec["tid"] and
           rec["t0"] <= s["ts"] <= rec["t1"]]
    bad = [s for s in got if not parse_frames(s["frames"]) or
           parse_frames(s["frames"])[0][0] != "busy_loop"]
    if len(got) < minimum:
        errors.append("busy: %d samples, expected at least %d" % (len(got), minimum))
    if bad:
        errors.append("busy: %d of %d samples lack busy_loop as their leaf, e.g. %s"
                      % (len(bad), len(got), bad[0]["frames"]))
    return len(got)


def main():
    args = sys.argv[1:]
    stacks = json.load(open(args[0]))
    oracle = json.load(open(args[1]))
    minimum = int(args[args.index("--samples") + 1]) if "--samples" in args else 0
    errors = []
    seen = {}
    for rec in oracle:
        if rec["what"] == "busy":
            seen["busy samples"] = check_samples(rec, stacks, minimum, errors)
        else:
            seen[rec["what"]] = seen.get(rec["what"], 0) + check_sleep(rec, stacks, errors)
    print("stacks matched per context: %s" % json.dumps(seen, sort_keys=True))
    for e in errors:
        print("MISMATCH: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
