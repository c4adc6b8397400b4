#!/usr/bin/env python3
"""A long-running Python CUDA process for loading gpuspy's CUPTI bridge into it by pid
(tests/inject.bats): the runtime and the driver through ctypes only, as runtime_ctypes.py does,
kernels from PTX launched with cuLaunchKernel from named Python functions.

usage: inject_ctypes_loop.py READY_FILE
It sets up (context, stream, module, buffers, one warm-up launch), creates READY_FILE and then
does only what stdin asks, one command a line (a blocking read in between):
  go N    N x train_step(i): launch_step() (cuLaunchKernel of step_kernel, grid 4, block 128,
          on the stream), then copy_round_trip(): 4096-byte HtoD cudaMemcpy of a pattern and
          DtoH cudaMemcpy back, compared; cudaStreamSynchronize; then "BATCH done n=N"
  exit    (or EOF) free everything, "DONE ok", exit 0
Prints the calls.h lines (LAUNCH, MEMCPY, SYNC, ...) for what it does, and "FAIL ..." with exit
status 1 at the first failed expectation."""
import ctypes as C
import os
import sys

PTX = b"""
.version 7.0
.target sm_75
.address_size 64

.visible .entry step_kernel(.param .u64 p0)
{
    ret;
}
"""

STEP_NS = 50000  # the simulated duration of step_kernel
COPY_BYTES = 4096
GRID, BLOCK = (4, 1, 1), (128, 1, 1)
H2D, D2H = 1, 2

os.environ.setdefault("FAKECUDA_KERNEL_NS", "step_kernel=%d" % STEP_NS)
cudart = C.CDLL("libcudart.so.13")
cuda = C.CDLL("libcuda.so.1")
cudart.cudaGetErrorName.restype = C.c_char_p


def fail(msg):
    print("FAIL " + msg, flush=True)
    sys.exit(1)


def rt(call, *args):
    err = getattr(cudart, call)(*args)
    if err:
        fail("%s -> %s" % (call, cudart.cudaGetErrorName(err).decode()))


def drv(call, *args):
    err = getattr(cuda, call)(*args)
    if err:
        fail("%s -> CUresult %d" % (call, err))


class Gpu:
    def __init__(self):
        rt("cudaSetDevice", 0)
        rt("cudaFree", None)  # creates the primary context
        self.stream = C.c_void_p()
        rt("cudaStreamCreate", C.byref(self.stream))
        self.module, self.step = C.c_void_p(), C.c_void_p()
        drv("cuModuleLoadData", C.byref(self.module), C.c_char_p(PTX))
        drv("cuModuleGetFunction", C.byref(self.step), self.module, b"step_kernel")
        self.dev = C.c_void_p()
        rt("cudaMalloc", C.byref(self.dev), C.c_size_t(COPY_BYTES))
        print("ALLOC api=cudaMalloc bytes=%d ok=1" % COPY_BYTES)
        self.arg = C.c_void_p(self.dev.value)
        self.params = (C.c_void_p * 1)(C.cast(C.byref(self.arg), C.c_void_p))
        self.src = (C.c_ubyte * COPY_BYTES)()
        self.dst = (C.c_ubyte * COPY_BYTES)()

    def close(self):
        rt("cudaFree", self.dev)
        print("FREE api=cudaFree ok=1")
        rt("cudaStreamDestroy", self.stream)
        drv("cuModuleUnload", self.module)


def launch_step(gpu):
    drv("cuLaunchKernel", gpu.step, *GRID, *BLOCK, 0, gpu.stream, gpu.params, None)
    print("LAUNCH name=step_kernel grid=%d,%d,%d block=%d,%d,%d stream=s api=cuLaunchKernel"
          % (GRID + BLOCK))


def copy_round_trip(gpu, i):
    for k in range(COPY_BYTES):
        gpu.src[k] = (i * 31 + k * 7) & 0xFF
    rt("cudaMemcpy", gpu.dev, gpu.src, C.c_size_t(COPY_BYTES), H2D)
    print("MEMCPY kind=HtoD bytes=%d stream=default api=cudaMemcpy" % COPY_BYTES)
    rt("cudaMemcpy", gpu.dst, gpu.dev, C.c_size_t(COPY_BYTES), D2H)
    print("MEMCPY kind=DtoH bytes=%d stream=default api=cudaMemcpy" % COPY_BYTES)
    if bytes(gpu.dst) != bytes(gpu.src):
        fail("round trip %d differs" % i)


def train_step(gpu, i):
    launch_step(gpu)
    copy_round_trip(gpu, i)


def run_batch(gpu, n):
    for i in range(n):
        train_step(gpu, i)
    rt("cudaStreamSynchronize", gpu.stream)
    print("SYNC api=cudaStreamSynchronize")
    print("BATCH done n=%d" % n, flush=True)


def main():
    if len(sys.argv) != 2:
        print("usage: inject_ctypes_loop.py READY_FILE", file=sys.stderr)
        return 2
    gpu = Gpu()
    launch_step(gpu)  # the first launch, before anyone attached
    rt("cudaStreamSynchronize", gpu.stream)
    print("SYNC api=cudaStreamSynchronize", flush=True)
    open(sys.argv[1], "w").close()
    for line in iter(sys.stdin.readline, ""):
        words = line.split()
        if len(words) == 2 and words[0] == "go" and words[1].isdigit():
            run_batch(gpu, int(words[1]))
        elif words == ["exit"]:
            break
        else:
            fail("unknown command %r" % line)
    gpu.close()
    print("DONE ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
