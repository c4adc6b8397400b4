#!/usr/bin/python3.11
"""A CPU-busy Python program with known functions, the oracle for gpuspy's Python profile.

    busy_target.py SECONDS [--go FIFO]

Prints READY, waits for a line on FIFO when given (so a tracer can attach first), then for
SECONDS repeats one round:

  caller_work   calls leaf_spin 4 times, adds little of its own: its total CPU time is at least
                leaf_spin's, its self time small
  leaf_spin     pure arithmetic: the largest self CPU time of the program
  light_spin    a quarter of leaf_spin's work, called from the round directly
  do_io         syscalls: writes and reads back a temporary file, then sleeps 2 ms
                (clock_nanosleep, off CPU) with no Python function below it

and prints "DONE <rounds>".
"""
import os
import sys
import tempfile
import time

SPIN = 40000


def leaf_spin(n):
    x = 0
    for i in range(n):
        x += i * i % 7
    return x


def caller_work():
    total = 0
    for _ in range(4):
        total += leaf_spin(SPIN)
    return total


def light_spin():
    return leaf_spin_light(SPIN // 4)


def leaf_spin_light(n):
    x = 0
    for i in range(n):
        x += i % 3
    return x


def do_io(fd):
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, b"x" * 65536)
    os.lseek(fd, 0, os.SEEK_SET)
    os.read(fd, 65536)
    time.sleep(0.002)


def one_round(fd):
    caller_work()
    light_spin()
    do_io(fd)


def main():
    seconds = float(sys.argv[1])
    go = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--go" else None
    print("READY", flush=True)
    if go:
        with open(go) as f:
            f.readline()
    fd, path = tempfile.mkstemp()
    os.unlink(path)
    rounds = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        one_round(fd)
        rounds += 1
    os.close(fd)
    print(f"DONE {rounds}", flush=True)


if __name__ == "__main__":
    main()
