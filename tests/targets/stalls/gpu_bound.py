#!/usr/bin/python3
"""gpu_bound: the GPU is the limit, the good case.

    gpu_bound.py [--steps N] [--lib PATH]

Each step is two 30 ms long_kernel. The host keeps the next step queued on the GPU: before the
loop it launches step 0; step i launches step i+1's kernels and records an event after them,
does 10 ms of bookkeeping (the same as sync_wait.py's, here overlapping the GPU), then waits
for step i's event (cudaEventSynchronize). So the GPU runs back to back from the first launch
to the end, busy about 99% of the steps' time, and each host step ends when its GPU step ends.

Runs on the simulated GPU (LD_LIBRARY_PATH=build/fakecuda) or a real one. Prints the STEP and
TRUTH lines (truth.py); the step's cause_ns is its GPU time. About 1 s for 12 steps.
"""
import argparse
import sys

import cudalib
import truth

KERNELS_PER_STEP = 2
LONG_NS = 30_000_000
BOOKKEEPING_ITERATIONS = 150_000  # about 10 ms of CPython here
EVENT_SLOTS = 8  # steps_kernels.cu's events, used round robin


def log_metrics(step):
    """Host bookkeeping that overlaps the GPU's work."""
    acc = step
    for i in range(BOOKKEEPING_ITERATIONS):
        acc = (acc * 1103515245 + i) & 0xFFFFFFFF
    return acc


def enqueue_step(lib, step):
    """Queues one step's kernels and the event that marks its end."""
    cudalib.check(lib.steps_launch(cudalib.LONG, KERNELS_PER_STEP), "steps_launch")
    cudalib.check(lib.steps_record_event(step % EVENT_SLOTS), "steps_record_event")


def train(lib, steps, timer):
    """Each step queues the next one, then waits for its own to finish on the GPU."""
    enqueue_step(lib, 0)
    for step in range(steps):
        timer.begin()
        if step + 1 < steps:
            enqueue_step(lib, step + 1)  # stall: the GPU work that sets the pace
        log_metrics(step)
        cudalib.check(lib.steps_wait_event(step % EVENT_SLOTS), "steps_wait_event")
        timer.add_cause(KERNELS_PER_STEP * LONG_NS)  # the step's GPU time
        timer.end()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--lib", help="libsteps_kernels.so (default: the build's)")
    args = parser.parse_args()
    lib = cudalib.load(args.lib, long_ns=LONG_NS)
    timer = truth.StepTimer()
    train(lib, args.steps, timer)
    cudalib.check(lib.steps_finish(), "steps_finish")
    truth.emit("gpu_bound", timer, truth.site(train),
               "%d x %s of %d ns per step, back to back" % (
                   KERNELS_PER_STEP, cudalib.KERNEL_NAMES[cudalib.LONG], LONG_NS), train,
               gpu_kernel_ns=args.steps * KERNELS_PER_STEP * LONG_NS,
               kernel=cudalib.KERNEL_NAMES[cudalib.LONG], cuda_call="cudaEventSynchronize")
    return 0


if __name__ == "__main__":
    sys.exit(main())
