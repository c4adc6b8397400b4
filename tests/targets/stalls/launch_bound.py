#!/usr/bin/python3
"""launch_bound: many tiny kernels launched one by one from Python.

    launch_bound.py [--steps N] [--kernels K] [--lib PATH]

Each step launches K (default 1000) tiny_kernel of 1 us, one ctypes call per launch as an
eager PyTorch loop makes one per small op, each after about 10 us of Python (op_arguments(): an
eager op's argument handling), then waits for them (cudaDeviceSynchronize, brief: the GPU
finished long ago). The GPU is busy K us per step, under 10% of it, and idles between kernels
while the host gets the next one ready.

Runs on the simulated GPU (LD_LIBRARY_PATH=build/fakecuda) or a real one. Prints the STEP and
TRUTH lines (truth.py); cause_ns is the time in the launch loop. Each step takes about 11 ms
here (longer under a tracer), 12 steps well under a second.
"""
import argparse
import sys
import time

import cudalib
import truth

TINY_NS = 1_000
ARGUMENT_ITERATIONS = 120  # about 10 us of CPython per launch here, an eager op's overhead


def op_arguments(k):
    """Stands for an eager op's Python-side work before its launch (argument parsing, checks)."""
    acc = k
    for i in range(ARGUMENT_ITERATIONS):
        acc = (acc * 1103515245 + i) & 0xFFFFFFFF
    return acc


def train(lib, steps, kernels, timer):
    """Each step: K launches, each after a few Python operations, then one wait."""
    launch = lib.steps_launch
    for step in range(steps):
        timer.begin()
        t0 = time.monotonic_ns()
        for k in range(kernels):
            op_arguments(k)
            err = launch(cudalib.TINY, 1)  # stall: one tiny kernel per call, GPU idle between
            if err:
                cudalib.check(err, "steps_launch")
        timer.add_cause(time.monotonic_ns() - t0)
        cudalib.check(lib.steps_sync(), "steps_sync")
        timer.end()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--kernels", type=int, default=1000, help="kernels per step")
    parser.add_argument("--lib", help="libsteps_kernels.so (default: the build's)")
    args = parser.parse_args()
    lib = cudalib.load(args.lib, tiny_ns=TINY_NS)
    timer = truth.StepTimer()
    train(lib, args.steps, args.kernels, timer)
    cudalib.check(lib.steps_finish(), "steps_finish")
    truth.emit("launch_bound", timer, truth.site(train),
               "cudaLaunchKernel of %s, %d per step" % (
                   cudalib.KERNEL_NAMES[cudalib.TINY], args.kernels), train,
               gpu_kernel_ns=args.steps * args.kernels * TINY_NS,
               kernel=cudalib.KERNEL_NAMES[cudalib.TINY], kernels_per_step=args.kernels,
               cuda_call="cudaLaunchKernel")
    return 0


if __name__ == "__main__":
    sys.exit(main())
