#!/usr/bin/env python3
"""Drive the CUDA runtime (and, for kernels, the driver) from Python through
ctypes only, the way PyTorch/Triton-style code does: the runtime creates the
primary context, PTX is loaded with cuModuleLoadData / cuLibraryLoadData, and
kernels are launched with cuLaunchKernel, cuLaunchKernelEx and a CUDA graph.

Prints the same LAUNCH/MEMCPY/MEMSET/ALLOC/FREE/SYNC/CHECK lines as the nvcc
targets (see calls.h and common.h) and exits 1 on the first failed
expectation.  Works on the
simulator and on a real GPU (the PTX is JIT-compiled there)."""
import ctypes as C
import sys
import time

PTX = b"""
.version 7.0
.target sm_75
.address_size 64

.visible .entry noop_kernel(.param .u64 p0)
{
    ret;
}

.visible .entry fill_kernel(.param .u64 p0, .param .u32 p1)
{
    ret;
}
"""

cudart = C.CDLL("libcudart.so.13")
cuda = C.CDLL("libcuda.so.1")
cudart.cudaGetErrorName.restype = C.c_char_p
cudart.cudaGetErrorString.restype = C.c_char_p

H2D, D2H, D2D = 1, 2, 3
KIND_NAME = {H2D: "HtoD", D2H: "DtoH", D2D: "DtoD"}
cudaErrorInvalidValue, cudaErrorNotReady = 1, 600
CUDA_ERROR_NOT_FOUND = 500


def fail(msg):
    print("FAIL " + msg, flush=True)
    sys.exit(1)


def error_name(err):
    return cudart.cudaGetErrorName(err).decode()


def alloc_line(call, args, err):
    return "ALLOC api=%s bytes=%d ok=%d" % (call, args[1].value, err == 0)


def free_line(call, args, err):
    return "FREE api=%s ok=%d" % (call, err == 0)


def sync_line(call, args, err):
    return "SYNC api=%s" % call


def memcpy_line(call, args, err):
    _dst, _src, size, kind = args
    if err:
        return "MEMCPY_FAILED api=%s bytes=%d error=%s" % (call, size.value, error_name(err))
    return "MEMCPY kind=%s bytes=%d stream=default api=%s" % (KIND_NAME[kind], size.value, call)


def memset_line(call, args, err):
    size = args[2].value
    if err:
        return "MEMSET_FAILED api=%s bytes=%d error=%s" % (call, size, error_name(err))
    return "MEMSET bytes=%d stream=default api=%s" % (size, call)


# The line each traced runtime call prints, made by rt() itself so that no such
# call can go unreported: a tracer's counts are compared with them exactly.
REPORT = {
    "cudaMalloc": alloc_line,
    "cudaFree": free_line,
    "cudaMemcpy": memcpy_line,
    "cudaMemset": memset_line,
    "cudaDeviceSynchronize": sync_line,
    "cudaStreamSynchronize": sync_line,
    "cudaEventSynchronize": sync_line,
}


TRACED = ("cudaMalloc", "cudaFree", "cudaMemcpy", "cudaMemset", "cudaStreamWaitEvent")


def rt(call, *args, want=0):
    if call not in REPORT and (call.startswith(TRACED) or call.endswith("Synchronize")):
        fail("%s is traced but has no line in REPORT" % call)
    err = getattr(cudart, call)(*args)
    if call in REPORT:
        print(REPORT[call](call, args, err))
    if err != want:
        fail("%s -> %s, want %d" % (call, error_name(err), want))
    return err


def drv(call, *args, want=0):
    err = getattr(cuda, call)(*args)
    if err != want:
        fail("%s -> CUresult %d, want %d" % (call, err, want))


def launch_line(api, name, grid, block, stream):
    print("LAUNCH name=%s grid=%d,%d,%d block=%d,%d,%d stream=%s api=%s"
          % ((name,) + tuple(grid) + tuple(block) + (stream, api)), flush=True)


def check_memory():
    n = 1 << 20
    src = (C.c_ubyte * n)(*[(i * 13) & 0xFF for i in range(n)])
    dst = (C.c_ubyte * n)()
    d_a, d_b = C.c_void_p(), C.c_void_p()
    rt("cudaMalloc", C.byref(d_a), C.c_size_t(n))
    rt("cudaMalloc", C.byref(d_b), C.c_size_t(n))
    rt("cudaMemcpy", d_a, src, C.c_size_t(n), H2D)
    rt("cudaMemcpy", d_b, d_a, C.c_size_t(n), D2D)
    rt("cudaMemcpy", dst, d_b, C.c_size_t(n), D2H)
    if bytes(dst) != bytes(src):
        fail("round trip differs")
    rt("cudaMemset", d_b, 0x7F, C.c_size_t(4096))
    rt("cudaMemcpy", dst, d_b, C.c_size_t(n), D2H)
    if bytes(dst[:4096]) != b"\x7f" * 4096 or bytes(dst[4096:]) != bytes(src[4096:]):
        fail("memset result wrong")
    print("CHECK python round trip and memset ok", flush=True)
    rt("cudaFree", d_a)
    rt("cudaFree", d_b)
    rt("cudaFree", d_b, want=cudaErrorInvalidValue)
    if cudart.cudaGetLastError() != cudaErrorInvalidValue or cudart.cudaGetLastError() != 0:
        fail("last error not sticky-then-cleared")
    print("CHECK python bad free = %s ok"
          % error_name(cudaErrorInvalidValue), flush=True)


class LaunchConfig(C.Structure):
    _fields_ = [("gridDimX", C.c_uint), ("gridDimY", C.c_uint), ("gridDimZ", C.c_uint),
                ("blockDimX", C.c_uint), ("blockDimY", C.c_uint), ("blockDimZ", C.c_uint),
                ("sharedMemBytes", C.c_uint), ("hStream", C.c_void_p),
                ("attrs", C.c_void_p), ("numAttrs", C.c_uint)]


class KernelNodeParams(C.Structure):     # CUDA_KERNEL_NODE_PARAMS (v2)
    _fields_ = [("func", C.c_void_p), ("gridDimX", C.c_uint), ("gridDimY", C.c_uint),
                ("gridDimZ", C.c_uint), ("blockDimX", C.c_uint), ("blockDimY", C.c_uint),
                ("blockDimZ", C.c_uint), ("sharedMemBytes", C.c_uint),
                ("kernelParams", C.c_void_p), ("extra", C.c_void_p),
                ("kern", C.c_void_p), ("ctx", C.c_void_p)]


def check_kernels(stream):
    mod, noop, fill = C.c_void_p(), C.c_void_p(), C.c_void_p()
    drv("cuModuleLoadData", C.byref(mod), C.c_char_p(PTX))
    drv("cuModuleGetFunction", C.byref(noop), mod, b"noop_kernel")
    drv("cuModuleGetFunction", C.byref(fill), mod, b"missing_kernel", want=CUDA_ERROR_NOT_FOUND)
    print("CHECK unknown kernel not found ok")
    arg0 = C.c_void_p(0)
    params = (C.c_void_p * 1)(C.cast(C.byref(arg0), C.c_void_p))
    drv("cuLaunchKernel", noop, 3, 2, 1, 64, 2, 1, 0, stream, params, None)
    launch_line("cuLaunchKernel", "noop_kernel", (3, 2, 1), (64, 2, 1), "s")

    lib, kern, func = C.c_void_p(), C.c_void_p(), C.c_void_p()
    drv("cuLibraryLoadData", C.byref(lib), C.c_char_p(PTX), None, None, 0, None, None, 0)
    drv("cuLibraryGetKernel", C.byref(kern), lib, b"fill_kernel")
    drv("cuKernelGetFunction", C.byref(func), kern)
    arg1 = C.c_uint(7)
    params2 = (C.c_void_p * 2)(C.cast(C.byref(arg0), C.c_void_p),
                               C.cast(C.byref(arg1), C.c_void_p))
    cfg = LaunchConfig(5, 1, 1, 128, 1, 1, 0, stream, None, 0)
    drv("cuLaunchKernelEx", C.byref(cfg), func, params2, None)
    launch_line("cuLaunchKernelEx", "fill_kernel", (5, 1, 1), (128, 1, 1), "s")

    graph, node, exe = C.c_void_p(), C.c_void_p(), C.c_void_p()
    drv("cuGraphCreate", C.byref(graph), 0)
    p = KernelNodeParams(noop.value, 2, 1, 1, 32, 1, 1, 0,
                         C.cast(params, C.c_void_p), None, None, None)
    drv("cuGraphAddKernelNode_v2", C.byref(node), graph, None, C.c_size_t(0), C.byref(p))
    drv("cuGraphInstantiateWithFlags", C.byref(exe), graph, C.c_ulonglong(0))
    drv("cuGraphLaunch", exe, stream)
    launch_line("cuGraphLaunch", "noop_kernel", (2, 1, 1), (32, 1, 1), "s")
    rt("cudaStreamSynchronize", stream)
    drv("cuGraphExecDestroy", exe)
    drv("cuGraphDestroy", graph)
    drv("cuLibraryUnload", lib)
    drv("cuModuleUnload", mod)
    print("CHECK python driver launches ok", flush=True)


def check_events(stream):
    start, end = C.c_void_p(), C.c_void_p()
    rt("cudaEventCreate", C.byref(start))
    rt("cudaEventCreate", C.byref(end))
    rt("cudaEventRecord", start, stream)
    rt("cudaEventRecord", end, stream)
    t0 = time.monotonic()
    rt("cudaEventSynchronize", end)
    ms = C.c_float()
    rt("cudaEventElapsedTime", C.byref(ms), start, end)
    if not 0.0 <= ms.value < 1000.0:
        fail("elapsed %f" % ms.value)
    print("TIMING py_event_sync_ns=%d" % int((time.monotonic() - t0) * 1e9))
    rt("cudaEventDestroy", start)
    rt("cudaEventDestroy", end)
    print("CHECK python events ok", flush=True)


def main():
    count = C.c_int()
    rt("cudaGetDeviceCount", C.byref(count))
    if count.value < 1:
        fail("no device")
    rt("cudaSetDevice", 0)
    rt("cudaFree", None)                 # the classic "create the context" idiom
    check_memory()
    stream = C.c_void_p()
    rt("cudaStreamCreate", C.byref(stream))
    check_kernels(stream)
    check_events(stream)
    rt("cudaStreamDestroy", stream)
    rt("cudaDeviceSynchronize")
    print("DONE ok", flush=True)


if __name__ == "__main__":
    main()
