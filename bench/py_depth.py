#!/usr/bin/env python3
"""Calls os.getppid() (libc getppid, one syscall) CALLS times from a Python stack DEPTH frames
deep, for bench/py_stack_cost.sh: a probe on getppid then sees a Python stack of a known depth.

  py_depth.py DEPTH CALLS [--wait]

--wait  at the bottom of the recursion print READY and wait for a line on stdin, then after the
        calls print the result and wait for another line (a probe attaches in between).
Prints: DEPTH=<depth> CALLS=<n> ns_per_call=<ns>"""
import os
import sys
import time


def descend(depth, calls, wait):
    if depth > 1:
        return descend(depth - 1, calls, wait)
    if wait:
        print("READY", flush=True)
        sys.stdin.readline()
    getppid = os.getppid
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        getppid()
    return time.perf_counter_ns() - t0


def main():
    depth, calls = int(sys.argv[1]), int(sys.argv[2])
    wait = "--wait" in sys.argv[3:]
    sys.setrecursionlimit(max(1000, depth + 100))
    ns = descend(depth, calls, wait)
    print("DEPTH=%d CALLS=%d ns_per_call=%.1f" % (depth, calls, ns / calls), flush=True)
    if wait:
        sys.stdin.readline()
    return 0


if __name__ == "__main__":
    sys.exit(main())
