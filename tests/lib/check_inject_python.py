#!/usr/bin/env python3
"""Checks that the GPU kernels of a Python process are joined to launches that carry its Python
stack, in a `gpuspy export` (Chrome) file: there are exactly N kernel records named KERNEL; each
has a CUDA API span of the launching thread with the same correlation id (the launch the GPU
join paired it with), on the thread the kernel names as "launch tid"; that span's python_stack
has a frame of every FUNCTION given; and each kernel has a flow (ac2g) from that span.

usage: check_inject_python.py CHROME_JSON KERNEL N FUNCTION..."""
import json
import sys


def frame_function(frame):
    return frame.rsplit(" (", 1)[0]


def main():
    path, kernel, n, functions = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    events = json.load(open(path))["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
               and e.get("name") == kernel]
    spans = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            corr = e.get("args", {}).get("correlation")
            if corr is not None:
                spans.setdefault((e["pid"], corr), []).append(e)
    flows = {}
    for e in events:
        if e.get("cat") == "ac2g":
            flows.setdefault(e["id"], {})[e["ph"]] = e
    bad = []
    if len(kernels) != n:
        bad.append("%d %s kernels, want %d" % (len(kernels), kernel, n))
    for k in kernels:
        a = k["args"]
        corr, tid = a.get("correlation"), a.get("launch tid")
        launches = [s for s in spans.get((a.get("launch pid"), corr), []) if s["tid"] == tid]
        if not launches:
            bad.append("kernel at %.3f us (correlation %s): no API span of tid %s with it"
                       % (k["ts"], corr, tid))
            continue
        # the outermost span of the call is the one with the stack (a nested one may have it too)
        launch = min(launches, key=lambda s: (s["ts"], -s["dur"]))
        stack = launch.get("args", {}).get("python_stack") or []
        have = {frame_function(f) for f in stack}
        for f in functions:
            if f not in have:
                bad.append("launch %s at %.3f us: no %s frame in its python_stack %r"
                           % (launch["name"], launch["ts"], f, stack))
        ok = any(set(p) == {"s", "f"} and p["s"]["tid"] == launch["tid"]
                 and launch["ts"] - 0.001 <= p["s"]["ts"] <= launch["ts"] + launch["dur"] + 0.001
                 and abs(p["f"]["ts"] - k["ts"]) < 0.001 for p in flows.values())
        if not ok:
            bad.append("kernel at %.3f us: no flow from its launch %s at %.3f us"
                       % (k["ts"], launch["name"], launch["ts"]))
    for b in bad:
        print("MISMATCH " + b)
    print("check_inject_python: %d %s kernels joined to launches with python stacks (%s): %s"
          % (len(kernels), kernel, ", ".join(functions), "FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
