#!/usr/bin/python3
"""sync_wait: every step blocks in a CUDA synchronisation, like `loss.item()`.

    sync_wait.py [--steps N] [--lib PATH]

Each step launches one 60 ms long_kernel and at once reads the loss back with a blocking 4-byte
device-to-host cudaMemcpy (what Tensor.item() does), which waits for the kernel: about 80% of
the step is spent in that call. Then the host does 10 ms of bookkeeping on the value, during
which the GPU idles, since the synchronisation emptied its queue; that idle gap after every
sync is what sets this apart from gpu_bound.py, whose host does the same work while the GPU
runs the next step.

Runs on the simulated GPU (LD_LIBRARY_PATH=build/fakecuda) or a real one. Prints the STEP and
TRUTH lines (truth.py). About 1 s for 12 steps.
"""
import argparse
import ctypes
import sys
import time

import cudalib
import truth

LONG_NS = 60_000_000
BOOKKEEPING_ITERATIONS = 150_000  # about 10 ms of CPython here


def log_metrics(loss, step):
    """Host work on the loss value (smoothing, logging): it must wait for the value first."""
    acc = int(loss) + step
    for i in range(BOOKKEEPING_ITERATIONS):
        acc = (acc * 1103515245 + i) & 0xFFFFFFFF
    return acc


def train(lib, steps, timer):
    """Each step: the step's kernel, then its loss read back at once, then bookkeeping."""
    loss = ctypes.c_float()
    for step in range(steps):
        timer.begin()
        cudalib.check(lib.steps_launch(cudalib.LONG, 1), "steps_launch")
        t0 = time.monotonic_ns()
        err = lib.steps_item(ctypes.byref(loss))  # stall: loss.item(): waits for the kernel
        timer.add_cause(time.monotonic_ns() - t0)
        cudalib.check(err, "steps_item")
        log_metrics(loss.value, step)
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
    truth.emit("sync_wait", timer, truth.site(train),
               "cudaMemcpy device-to-host, 4 bytes (blocking, as Tensor.item())", train,
               gpu_kernel_ns=args.steps * LONG_NS, kernel=cudalib.KERNEL_NAMES[cudalib.LONG],
               cuda_call="cudaMemcpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
