#!/usr/bin/python3.11
"""One process with both of gpuspy's libraries in it: real PyTorch on the CPU, for the
in-process operator observer, and CUDA work on the simulated GPU through
libtorch_aten_like_cuda.so (tests/targets/cuda/aten_like.cu), for the CUPTI bridge.

    torch_cuda.py ATEN_LIB --go FIFO [--observer LIB] [--iters N] [--range NAME]

Imports torch, initialises CUDA (one launch), and with --observer loads gpuspy's observer
itself, as an earlier attach would have left it. Prints READY, waits for a line on the FIFO
(opened read-write: the wait is a read()), runs N iterations of a small torch step and of the
library's linear operator (kernel launches) over a second, waits for the GPU, prints "DONE N",
then waits for a second line before it exits. With --range, each of the library's launches is
inside a record_function(NAME) user range: the operator that launched those kernels, as the
observer records it."""
import argparse
import contextlib
import ctypes
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from observer_abi import addresses, init, libtorch_path, open_observer  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("aten_lib")
    p.add_argument("--go", required=True)
    p.add_argument("--observer")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--range")
    args = p.parse_args()

    cuda = ctypes.CDLL(os.path.abspath(args.aten_lib))
    if cuda.aten_like_init():
        raise SystemExit("torch_cuda: aten_like_init failed")
    cuda.aten_like_linear(1)
    if args.observer:
        obs = open_observer(args.observer)
        rc, why = init(obs, addresses(ctypes.CDLL(libtorch_path())))
        if rc or obs.gpuspy_torch_ops_start_gate():
            raise SystemExit("torch_cuda: the observer did not start: %s" % why)
    x, w = torch.randn(16, 32), torch.randn(32, 8, requires_grad=True)
    print("READY", flush=True)
    go = os.fdopen(os.open(args.go, os.O_RDWR))
    go.readline()
    for _ in range(args.iters):
        torch.relu(x @ w).sum().backward()
        with (torch.autograd.profiler.record_function(args.range) if args.range
              else contextlib.nullcontext()):
            cuda.aten_like_linear(1)
        # spread over a second: the bridge's CUPTI session, turned on by the same attach,
        # starts a few polls later than the observer, and records only from then on
        time.sleep(1.0 / args.iters)
    cuda.aten_like_item()  # waits for the GPU
    if cuda.aten_like_finish():
        raise SystemExit("torch_cuda: a CUDA call failed")
    print("DONE %d" % args.iters, flush=True)
    go.readline()


if __name__ == "__main__":
    main()
