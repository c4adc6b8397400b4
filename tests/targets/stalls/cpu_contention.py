#!/usr/bin/python3
"""cpu_contention: the step loop is runnable but waits for a CPU shared with busy processes.

    cpu_contention.py [--steps N] [--competitors C]

The process pins itself to one CPU (the highest it may use) and forks C (default 3) processes
that spin on the same CPU, as when more busy threads (e.g. DataLoader workers, OpenMP pools)
than cores are placed on it. Each step runs featurize(), about 20 ms of pure-Python CPU work;
the scheduler shares the CPU fairly among the C + 1 runnable processes, so a step takes about
(C + 1) x 20 ms and the loop spends about C / (C + 1) of it (75%) runnable but preempted.

The workload measures that itself: cause_ns is the growth of its main thread's run-queue wait
(the second field of /proc/self/task/TID/schedstat) over each step. Prints the STEP and TRUTH
lines (truth.py), with the CPU and the competitors' pids. About 1 s for 12 steps.
"""
import argparse
import os
import signal
import sys
import threading

import truth

FEATURIZE_ITERATIONS = 300_000  # about 20 ms of CPython here, on a CPU of its own


def run_delay_ns():
    """Time this thread has spent runnable, waiting for a CPU (schedstat's run_delay)."""
    with open("/proc/self/task/%d/schedstat" % threading.get_native_id()) as f:
        return int(f.read().split()[1])


def spin():
    """A competitor: pure CPU until killed."""
    acc = 0
    while True:
        acc = (acc * 1103515245 + 1) & 0xFFFFFFFF  # cause: takes the CPU the loop needs


def featurize(step):
    """The step's CPU work; it is preempted wherever it happens to be."""
    acc = step
    for i in range(FEATURIZE_ITERATIONS):
        acc = (acc * 1103515245 + i) & 0xFFFFFFFF  # stall: runnable, waiting for the CPU
    return acc


def train(steps, timer):
    """Each step: featurize on the shared CPU."""
    for step in range(steps):
        timer.begin()
        delay0 = run_delay_ns()
        featurize(step)
        timer.add_cause(run_delay_ns() - delay0)
        timer.end()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--competitors", type=int, default=3)
    args = parser.parse_args()
    cpu = max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})  # inherited by the competitors forked below
    competitors = []
    for _ in range(args.competitors):
        pid = os.fork()
        if pid == 0:
            try:
                spin()
            finally:
                os._exit(0)
        competitors.append(pid)
    try:
        timer = truth.StepTimer()
        train(args.steps, timer)
    finally:
        for pid in competitors:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    cause = truth.site(spin, "cause")
    cause["what"] = "%d busy processes pinned to CPU %d" % (args.competitors, cpu)
    cause["pids"] = competitors
    truth.emit("cpu_contention", timer, truth.site(featurize),
               "runnable but preempted on CPU %d, shared by %d busy processes" % (
                   cpu, args.competitors + 1), train, cause=cause, cpu=cpu,
               competitor_pids=competitors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
