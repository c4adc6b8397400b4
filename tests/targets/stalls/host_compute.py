#!/usr/bin/python3
"""host_compute: the GPU idles while the launching thread preprocesses in Python.

    host_compute.py [--steps N] [--nvtx] [--lib PATH]

Each step runs preprocess(), pure-Python arithmetic over the batch (CPU-bound: no syscalls, the
GIL held throughout), for about 80 ms, then launches 4 work_kernel of 2 ms and waits for them
(cudaDeviceSynchronize). The GPU is busy 8 ms of each step: it idles while the host computes.

--nvtx wraps every step in an NVTX push/pop range named ProfilerStep#<i> (i from 0), as
torch.profiler's step ranges are named, for step detection from NVTX: the ranges reach a tool
through NVTX_INJECTION64_PATH, which `gpuspy record` sets.

Runs on the simulated GPU (LD_LIBRARY_PATH=build/fakecuda) or a real one. Prints the STEP and
TRUTH lines (truth.py). About 1.1 s for 12 steps.
"""
import argparse
import sys
import time

import cudalib
import truth

KERNELS_PER_STEP = 4
WORK_NS = 2_000_000
PREPROCESS_ITERATIONS = 1_200_000  # about 80 ms of CPython here


def preprocess(step):
    """Stands for a Python-side transform of the batch: CPU-bound and making no system calls."""
    acc = step
    for i in range(PREPROCESS_ITERATIONS):
        acc = (acc * 1103515245 + i) & 0xFFFFFFFF  # stall: the GPU idles while this runs
    return acc


def train(lib, steps, nvtx, timer):
    """Each step: preprocess on the host, then the step's kernels and a wait for them."""
    for step in range(steps):
        timer.begin()
        if nvtx:
            lib.steps_range_push(b"ProfilerStep#%d" % step)
        t0 = time.monotonic_ns()
        preprocess(step)
        timer.add_cause(time.monotonic_ns() - t0)
        cudalib.check(lib.steps_launch(cudalib.WORK, KERNELS_PER_STEP), "steps_launch")
        cudalib.check(lib.steps_sync(), "steps_sync")
        if nvtx:
            lib.steps_range_pop()
        timer.end()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--nvtx", action="store_true", help="ProfilerStep#N NVTX ranges")
    parser.add_argument("--lib", help="libsteps_kernels.so (default: the build's)")
    args = parser.parse_args()
    lib = cudalib.load(args.lib, work_ns=WORK_NS)
    timer = truth.StepTimer()
    train(lib, args.steps, args.nvtx, timer)
    cudalib.check(lib.steps_finish(), "steps_finish")
    truth.emit("host_compute", timer, truth.site(preprocess),
               "pure-Python CPU work in preprocess(), no CUDA call or syscall", train,
               gpu_kernel_ns=args.steps * KERNELS_PER_STEP * WORK_NS,
               kernel=cudalib.KERNEL_NAMES[cudalib.WORK],
               nvtx_ranges=["ProfilerStep#%d" % i for i in range(args.steps)] if args.nvtx else [])
    return 0


if __name__ == "__main__":
    sys.exit(main())
