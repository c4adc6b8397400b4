"""Loads libsteps_kernels.so (steps_kernels.cu), the GPU side of the stall workloads.

The workloads call its functions straight through ctypes, never through a Python wrapper, so
the Python stack at every CUDA call ends in the workload's own line, as a PyTorch op's would.
"""
import ctypes
import sys

import truth

TINY, WORK, LONG = 0, 1, 2
# the kernels' names as the reports demangle them
KERNEL_NAMES = {
    TINY: "tiny_kernel(float *, long long)",
    WORK: "work_kernel(float *, long long)",
    LONG: "long_kernel(float *, long long)",
}


def load(path=None, tiny_ns=1000, work_ns=1000000, long_ns=50000000):
    """Loads the library and initialises CUDA with the three kernels' durations (ns)."""
    lib = ctypes.CDLL(path or truth.steps_library_path())
    lib.steps_init.argtypes = [ctypes.c_longlong] * 3
    lib.steps_launch.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.steps_item.argtypes = [ctypes.POINTER(ctypes.c_float)]
    lib.steps_record_event.argtypes = [ctypes.c_int]
    lib.steps_wait_event.argtypes = [ctypes.c_int]
    lib.steps_range_push.argtypes = [ctypes.c_char_p]
    lib.steps_range_push.restype = None
    lib.steps_range_pop.restype = None
    check(lib.steps_init(tiny_ns, work_ns, long_ns), "steps_init")
    return lib


def check(err, what):
    """Stops the workload at the first CUDA error: its TRUTH would be wrong."""
    if err:
        print("FAIL %s -> cudaError %d" % (what, err), file=sys.stderr, flush=True)
        sys.exit(1)
