#!/usr/bin/env python3
"""Check the output of a stall workload (tests/targets/stalls/*.py) before it is used as the
answer a recording is compared with: one TRUTH line, last, with every key well-formed; its
source lines really are what they claim (the stall line carries `# stall:`, the step lines are
a loop of the step function); one STEP line per step, in order, not overlapping; and the stall
dominated the steps as the workload measured it (share >= --min-share).

usage: check_stall_truth.py OUTPUT KIND STEPS [--min-share F]
Prints the TRUTH object, pretty, and exits 1 listing every problem found."""
import argparse
import json
import os
import re
import sys

KINDS = {"input_wait", "io_wait", "host_compute", "sync_wait", "launch_bound", "cpu_contention",
         "lock_wait", "gpu_bound"}


def source_line(path, line):
    with open(path) as f:
        lines = f.read().splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else None


def enclosing_def(path, line):
    """The name of the innermost `def` at or above `line` whose body holds it."""
    with open(path) as f:
        lines = f.read().splitlines()
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for text in reversed(lines[:line - 1]):
        m = re.match(r"(\s*)def (\w+)\(", text)
        if m and len(m.group(1)) < indent:
            return m.group(2)
    return None


def check_site(site, name, marker, problems):
    for key, kind in (("function", str), ("file", str), ("line", int)):
        if not isinstance(site.get(key), kind):
            problems.append("%s.%s missing or not a %s" % (name, key, kind.__name__))
            return
    if not os.path.isabs(site["file"]) or not os.path.isfile(site["file"]):
        problems.append("%s.file %r is not an absolute path to a file" % (name, site["file"]))
        return
    text = source_line(site["file"], site["line"])
    if text is None or ("# %s:" % marker) not in text:
        problems.append("%s.line %d is not the `# %s:` line: %r" % (name, site["line"], marker,
                                                                    text))
    elif enclosing_def(site["file"], site["line"]) != site["function"]:
        problems.append("%s.line %d is not in function %s" % (name, site["line"],
                                                               site["function"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output")
    parser.add_argument("kind")
    parser.add_argument("steps", type=int)
    parser.add_argument("--min-share", type=float, default=0.6)
    args = parser.parse_args()
    with open(args.output) as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    problems = []
    truth_lines = [line for line in lines if line.startswith("TRUTH ")]
    if len(truth_lines) != 1 or lines[-1] != truth_lines[0]:
        print("want exactly one TRUTH line, last; got %d" % len(truth_lines))
        return 1
    try:
        truth = json.loads(truth_lines[0][len("TRUTH "):])
    except ValueError as e:
        print("TRUTH is not JSON: %s" % e)
        return 1
    print(json.dumps(truth, indent=1, sort_keys=True))

    if truth.get("kind") != args.kind or truth["kind"] not in KINDS:
        problems.append("kind %r, want %r" % (truth.get("kind"), args.kind))
    if truth.get("steps") != args.steps:
        problems.append("steps %r, want %d" % (truth.get("steps"), args.steps))
    for key in ("pid", "main_tid"):
        if not isinstance(truth.get(key), int) or truth[key] <= 0:
            problems.append("%s %r is not a positive integer" % (key, truth.get(key)))
    if truth.get("main_tid") != truth.get("pid"):
        problems.append("main_tid %r is not the process's main thread (pid %r)" % (
            truth.get("main_tid"), truth.get("pid")))
    if not isinstance(truth.get("what"), str) or not truth["what"]:
        problems.append("what is missing or empty")
    check_site(truth.get("where") or {}, "where", "stall", problems)
    if "cause" in truth:
        check_site(truth["cause"], "cause", "cause", problems)

    step_lines = truth.get("step_lines")
    where_file = (truth.get("where") or {}).get("file")
    if (not isinstance(step_lines, list) or len(step_lines) != 2
            or not all(isinstance(n, int) for n in step_lines) or step_lines[0] > step_lines[1]):
        problems.append("step_lines %r is not [first, last]" % (step_lines,))
    elif where_file and os.path.isfile(where_file):
        first = source_line(where_file, step_lines[0])
        if first is None or not re.match(r"\s*(for|while)\b", first):
            problems.append("step_lines[0] %d is not a loop: %r" % (step_lines[0], first))
        elif enclosing_def(where_file, step_lines[0]) != truth.get("step_function"):
            problems.append("the step loop is not in step_function %r" %
                            truth.get("step_function"))

    steps = []
    for line in lines:
        if line.startswith("STEP "):
            fields = line.split()
            if len(fields) != 4 or not all(f.isdigit() for f in fields[1:]):
                problems.append("malformed STEP line %r" % line)
                continue
            steps.append(tuple(int(f) for f in fields[1:]))
    if [s[0] for s in steps] != list(range(args.steps)):
        problems.append("STEP lines for steps %s, want 0..%d" % ([s[0] for s in steps],
                                                                  args.steps - 1))
    for (i, start, end), following in zip(steps, steps[1:] + [None]):
        if end <= start:
            problems.append("step %d ends before it starts" % i)
        if following and following[1] < end:
            problems.append("step %d starts before step %d ends" % (following[0], i))

    measured = truth.get("measured") or {}
    share = measured.get("share")
    if not isinstance(share, (int, float)):
        problems.append("measured.share missing")
    elif share < args.min_share:
        problems.append("the stall took only %.0f%% of the steps (want >= %.0f%%): the "
                        "workload did not produce its stall here" % (100 * share,
                                                                     100 * args.min_share))
    if len(measured.get("step_cause_ns") or []) != args.steps:
        problems.append("measured.step_cause_ns does not have one value per step")

    for p in problems:
        print("FAIL " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
