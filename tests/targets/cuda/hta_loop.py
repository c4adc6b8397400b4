#!/usr/bin/python3
"""hta_loop: a training loop with everything Holistic Trace Analysis looks at in one trace.

    hta_loop.py ATEN_LIB [--steps N] [--no-nvtx] [--rank-env]

Each step is an NVTX range ProfilerStep#<i> (as torch.profiler names its steps) holding the
operators of libtorch_aten_like_cuda.so (aten_like.cu: at::_ops::<op>::call, each launching
kernels), four work_kernel launches of libsteps_kernels.so (steps_kernels.cu: a kernel sequence
HTA's frequent-sequence search can find under the step) and a blocking 4-byte device-to-host
cudaMemcpy, the loss read back (a memory copy for HTA's bandwidth and queue analyses); CUDA's
start-up adds a cudaMemset. Runs on the simulated GPU (LD_LIBRARY_PATH=build/fakecuda) or a
real one; libsteps_kernels.so is found as the stall workloads find it (BUILD).

--no-nvtx leaves the ranges out: gpuspy then finds the steps from the Python stacks and the
Kineto export writes its own ProfilerStep#N.

--rank-env prints the RANK, WORLD_SIZE and LOCAL_RANK it was started with on stderr, for the
multi-rank test that starts two of it under one recording.
"""
import argparse
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "stalls"))
import cudalib  # noqa: E402 (tests/targets/stalls)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("aten_lib")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--no-nvtx", action="store_true")
    parser.add_argument("--rank-env", action="store_true")
    args = parser.parse_args()
    if args.rank_env:
        print("RANK=%s WORLD_SIZE=%s LOCAL_RANK=%s" % tuple(
            os.environ.get(k) for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK")), file=sys.stderr)

    aten = ctypes.CDLL(os.path.abspath(args.aten_lib))
    aten.aten_like_kernel_spec.restype = ctypes.c_char_p
    aten.aten_like_add_scalar.argtypes = [ctypes.c_double]
    aten.aten_like_dropout.argtypes = [ctypes.c_double]
    aten.aten_like_item.restype = ctypes.c_double
    # the simulator takes each kernel's duration from FAKECUDA_KERNEL_NS at its first kernel:
    # the operators' durations first, steps_init adds its own
    old = os.environ.get("FAKECUDA_KERNEL_NS")
    spec = aten.aten_like_kernel_spec().decode()
    os.environ["FAKECUDA_KERNEL_NS"] = spec + ("," + old if old else "")
    steps = cudalib.load(work_ns=300_000)
    cudalib.check(aten.aten_like_init(), "aten_like_init")

    loss = ctypes.c_float()
    for step in range(args.steps):
        if not args.no_nvtx:
            steps.steps_range_push(b"ProfilerStep#%d" % step)
        aten.aten_like_linear(1)  # linear -> matmul -> mm, add.Tensor
        aten.aten_like_add_scalar(0.5)
        aten.aten_like_softmax()
        aten.aten_like_dropout(0.1)
        cudalib.check(steps.steps_launch(cudalib.WORK, 4), "steps_launch")
        cudalib.check(steps.steps_item(ctypes.byref(loss)), "steps_item")
        if not args.no_nvtx:
            steps.steps_range_pop()
    cudalib.check(aten.aten_like_finish(), "aten_like_finish")
    cudalib.check(steps.steps_finish(), "steps_finish")
    print("steps %d" % args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
