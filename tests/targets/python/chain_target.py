#!/usr/bin/python3.11
"""A CPU-bound Python program with one known call chain, <module> -> main -> work -> spin.

    chain_target.py SECONDS --go FIFO

Prints READY, waits for a line on FIFO (so a tracer can attach first), then spins in `spin`
for SECONDS without a syscall, so nearly every CPU sample's stack is that chain, and prints
"DONE <calls>". The oracle for the order of a sample's slices on the timeline.
"""
import sys
import time


def spin(n):
    x = 0
    for i in range(n):
        x += i * i % 7
    return x


def work(end):
    calls = 0
    while time.monotonic() < end:
        spin(200000)
        calls += 1
    return calls


def main():
    seconds = float(sys.argv[1])
    print("READY", flush=True)
    with open(sys.argv[3]) as f:
        f.readline()
    calls = work(time.monotonic() + seconds)
    print(f"DONE {calls}", flush=True)


main()
